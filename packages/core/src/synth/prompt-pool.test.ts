import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { simulatedFailureItems } from "../__fixtures__/failure-items.ts";
import { generateToolcallTasks } from "../families/index.ts";
import { taskToRow } from "../tasks/index.ts";
import { questionsOf } from "./dataset.ts";
import { buildEvalSet } from "./eval-set.ts";
import { NearDuplicateIndex } from "./near-duplicate-index.ts";
import { buildPromptPool, type PromptPoolOptions } from "./prompt-pool.ts";

const failures = await simulatedFailureItems(32, 2000);
const evalSet = buildEvalSet({
  tenantId: "acme",
  seed: 1,
  failures,
  general: generateToolcallTasks({ split: "eval", seed: 1, count: 200 }).map(taskToRow),
  trainingQuestions: [],
  perPattern: 10,
});
const replay = generateToolcallTasks({ split: "train", seed: 1, count: 500 }).map(taskToRow);
const base: PromptPoolOptions = {
  tenantId: "acme",
  seed: 3,
  failures,
  replay,
  size: 400,
  evalSets: [evalSet],
};

describe("PromptPool synthesis", () => {
  it("mixes failures and replay by failureSamplingRatio (0.8 by default)", () => {
    const pool = buildPromptPool(base);
    assert.equal(pool.rows.length, 400);
    assert.equal(pool.rows.filter((r) => r.meta.source === "failure").length, 320);
    const half = buildPromptPool({ ...base, failureSamplingRatio: 0.5 });
    assert.equal(half.rows.filter((r) => r.meta.source === "replay").length, 200);
  });

  it("leaks no eval question, nor a near-duplicate, into training prompts", () => {
    const pool = buildPromptPool(base);
    assert.ok(pool.stats.overlapsEval > 0, "some failures were eval items");
    const index = NearDuplicateIndex.of(questionsOf(evalSet));
    for (const row of pool.rows) assert.equal(index.find(row.question), undefined, row.question);
  });

  it("balances failure prompts across patterns and keeps their lineage", () => {
    const pool = buildPromptPool(base);
    const perPattern = new Map<string, number>();
    for (const r of pool.rows)
      if (r.meta.patternId) perPattern.set(r.meta.patternId, (perPattern.get(r.meta.patternId) ?? 0) + 1);
    const counts = [...perPattern.values()];
    assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `${counts}`);
    const traceIds = new Set(failures.map((f) => f.traceId));
    for (const r of pool.rows.filter((r) => r.meta.source === "failure")) {
      assert.ok(r.meta.sourceTraceIds.length > 0 && r.meta.sourceTraceIds.every((t) => traceIds.has(t)));
    }
  });

  it("fills the failure share in the traffic's proportions, each distinct prompt once, when asked", () => {
    const distinct = buildPromptPool(base).stats.distinctFailurePrompts;
    const failureRows = (pool: ReturnType<typeof buildPromptPool>) =>
      pool.rows.filter((r) => r.meta.source === "failure");
    const size = Math.round(distinct / 0.8);
    const proportional = failureRows(buildPromptPool({ ...base, size, failureSampling: "proportional" }));
    assert.equal(new Set(proportional.map((r) => r.question)).size, proportional.length);
    assert.ok(Math.abs(proportional.length - distinct) <= 1, `${proportional.length} of ${distinct}`);
    // balanced, the same number of rows repeats the prompts of the rarer patterns and leaves others out
    const balanced = failureRows(buildPromptPool({ ...base, size }));
    assert.ok(new Set(balanced.map((r) => r.question)).size < balanced.length);
    assert.throws(
      () => buildPromptPool({ ...base, failureSampling: "random" as "balanced" }),
      /failureSampling: expected "balanced" or "proportional", got "random"/,
    );
  });

  it("is deterministic for a seed and versions by content", () => {
    assert.equal(buildPromptPool(base).version, buildPromptPool(base).version);
    assert.notEqual(buildPromptPool({ ...base, seed: 4 }).version, buildPromptPool(base).version);
  });

  it("rejects a ratio outside [0, 1]", () => {
    assert.throws(
      () => buildPromptPool({ ...base, failureSamplingRatio: 1.5 }),
      /failureSamplingRatio: expected a number in \[0, 1\], got 1.5/,
    );
  });
});
