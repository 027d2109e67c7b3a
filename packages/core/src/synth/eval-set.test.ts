import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { simulatedFailureItems } from "../__fixtures__/failure-items.ts";
import { generateToolcallTasks } from "../families/index.ts";
import { taskToRow } from "../tasks/index.ts";
import { buildEvalSet, type EvalSetOptions } from "./eval-set.ts";
import type { FailureItem } from "./failure-item.ts";
import { NearDuplicateIndex } from "./near-duplicate-index.ts";

const failures = await simulatedFailureItems(31, 2000);
const general = generateToolcallTasks({ split: "eval", seed: 1, count: 300 }).map(taskToRow);
const training = generateToolcallTasks({ split: "production", seed: 31, count: 400 }).map((t) => t.question);
const base: EvalSetOptions = {
  tenantId: "acme",
  seed: 7,
  failures,
  general,
  trainingQuestions: training,
  perPattern: 10,
  generalSize: 40,
};

describe("EvalSet synthesis", () => {
  it("is deterministic for a seed: same rows, same version; another seed gives another version", () => {
    const a = buildEvalSet(base);
    assert.equal(buildEvalSet(base).version, a.version);
    assert.deepEqual(buildEvalSet(base).rows, a.rows);
    assert.notEqual(buildEvalSet({ ...base, seed: 8 }).version, a.version);
    assert.match(a.version, /^sha256:[0-9a-f]{64}$/);
  });

  it("never holds a question the tenant trains on, nor a near-duplicate of one", () => {
    const set = buildEvalSet(base);
    assert.ok(set.stats.overlapsTraining > 0, "the test's training data does overlap production");
    const index = NearDuplicateIndex.of(training);
    for (const row of set.rows) assert.equal(index.find(row.question), undefined, row.question);
  });

  it("stratifies by pattern up to perPattern and adds a general regression slice", () => {
    const set = buildEvalSet(base);
    const perSlice = new Map<string, number>();
    for (const row of set.rows) perSlice.set(row.meta.slice, (perSlice.get(row.meta.slice) ?? 0) + 1);
    assert.equal(perSlice.get("general"), 40);
    const patterns = [...perSlice.keys()].filter((s) => s !== "general");
    assert.ok(patterns.length >= 10, `${patterns.length} pattern slices`);
    for (const p of patterns) assert.ok((perSlice.get(p) ?? 0) <= 10);
  });

  it("merges duplicates and near-duplicates into one item whose lineage names every source trace", () => {
    const solution = { tool: "convert_currency", args: { amount: 50, from: "USD", to: "EUR" } };
    const item = (traceId: string, question: string): FailureItem => ({
      traceId,
      patternId: "pat_x",
      env: "toolcall",
      question,
      context: { messages: [{ role: "user", content: question }] },
      solution,
      output: "{",
    });
    const set = buildEvalSet({
      ...base,
      failures: [
        item("t1", "Convert 50 USD to EUR."),
        item("t2", "convert 50 usd to EUR"),
        item("t3", "Please convert 50 USD to EUR."),
        item("t4", "Convert 75 USD to EUR."),
      ],
      general: [],
      trainingQuestions: [],
    });
    assert.deepEqual(
      set.rows.map((r) => [r.question.toLowerCase().includes("75"), r.meta.sourceTraceIds.length]).sort(),
      [
        [false, 3],
        [true, 1],
      ],
    );
  });

  it("makes reference-free rows of failures without a solution, after a pattern's verifiable ones, and counts them", () => {
    const referenceFree = failures.map((f) => ({ ...f, solution: undefined }));
    const alone = buildEvalSet({ ...base, failures: referenceFree, general: [] });
    assert.ok(alone.rows.length > 0);
    assert.ok(alone.rows.every((r) => r.solution === undefined && r.context !== undefined));
    assert.equal(alone.stats.referenceFree, alone.rows.length);
    const mixed = buildEvalSet({
      ...base,
      failures: [
        ...failures,
        ...referenceFree.map((f) => ({
          ...f,
          traceId: `${f.traceId}-nosol`,
          question: `${f.question} please`,
        })),
      ],
      general: [],
    });
    const verifiable = buildEvalSet({ ...base, failures, general: [] });
    const perSlice = (rows: readonly { solution?: unknown; meta: { slice: string } }[]) => {
      const counts: Record<string, number> = {};
      for (const r of rows)
        if (r.solution !== undefined) counts[r.meta.slice] = (counts[r.meta.slice] ?? 0) + 1;
      return counts;
    };
    assert.deepEqual(perSlice(mixed.rows), perSlice(verifiable.rows));
    assert.ok(mixed.stats.referenceFree > 0);
  });

  it("is immutable", () => {
    const set = buildEvalSet(base);
    assert.throws(() => {
      (set.rows as unknown[]).push({});
    }, TypeError);
    assert.throws(() => {
      (set.rows[0].meta.sourceTraceIds as string[]).push("x");
    }, TypeError);
  });
});
