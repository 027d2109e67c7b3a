import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { decideValidation, type EvalRow, TaskFamilyRegistry } from "@arc/core";
import { loadTaskFamilies } from "@arc/rl";
import { FACTORS_TS, STEPCONV_TS } from "../families/__fixtures__/stepconv-family.ts";
import type { ModelBackend } from "../gateway/model-backend.ts";
import { judgeModels } from "./judge-models.ts";

const FACTORS: Record<string, number> = { "mi>km": 1.609344, "kg>lb": 2.20462, "ft>m": 0.3048 };

/**
 * TEST DOUBLE for a model (no trained model answers these tasks here): answers a chat request by a fixed policy.
 * `lookup-first` calls lookup_factor on the first turn and answers value × factor once the tool says the factor;
 * `answer-at-once` answers the right value on the first turn without looking anything up.
 */
function scriptedModel(policy: "lookup-first" | "answer-at-once", calls: unknown[][]): ModelBackend {
  return {
    kind: "embedded",
    async chat(body) {
      const messages = body.messages as { role: string; content: string }[];
      calls.push([...messages]);
      const [, amount, from, to] = /(\d+) (\w+) to (\w+)/.exec(messages[0].content) ?? [];
      const last = messages.at(-1);
      const factor =
        last?.role === "tool" ? (JSON.parse(last.content) as { factor: number }).factor : undefined;
      const call =
        policy === "lookup-first" && factor === undefined
          ? { tool: "lookup_factor", args: { from, to } }
          : { tool: "answer", args: { value: Number(amount) * (factor ?? FACTORS[`${from}>${to}`]) } };
      return {
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          choices: [{ message: { role: "assistant", content: JSON.stringify(call) } }],
          usage: { completion_tokens: 7 },
        }),
      };
    },
  };
}

const rows: EvalRow[] = [
  ["mi", "km", 3],
  ["kg", "lb", 5],
  ["ft", "m", 12],
  ["mi", "km", 7],
].map(([from, to, value], i) => ({
  id: `row-${i}`,
  env: "stepconv",
  question: `Convert ${value} ${from} to ${to}.`,
  solution: { value, from, to },
  meta: { slice: "pattern-units", sourceTraceIds: [], patternIds: [] },
}));

describe("validation of a multi-turn family", () => {
  let folder: string;
  const families = new TaskFamilyRegistry();

  before(async () => {
    folder = await mkdtemp(join(tmpdir(), "arc-stepconv-"));
    await writeFile(join(folder, "factors.ts"), FACTORS_TS);
    await writeFile(join(folder, "stepconv.ts"), STEPCONV_TS);
    await loadTaskFamilies([join(folder, "stepconv.ts")], { registry: families });
  });
  after(() => rm(folder, { recursive: true, force: true }));

  it("replays each eval episode in the family's session and judges the whole episode", async () => {
    const baselineCalls: unknown[][] = [];
    const candidateCalls: unknown[][] = [];
    const items = await judgeModels(
      scriptedModel("answer-at-once", baselineCalls),
      scriptedModel("lookup-first", candidateCalls),
      rows,
      [],
      { families },
    );
    assert.equal(items.length, rows.length);
    for (const item of items) {
      assert.equal(item.episode, true);
      assert.equal(item.judgedBy, "verifier:stepconv");
      assert.deepEqual([item.candidate.pass, item.candidate.turns], [true, 2], item.candidate.reason);
      assert.deepEqual([item.baseline.pass, item.baseline.turns], [false, 1]);
      assert.match(item.baseline.reason ?? "", /expected lookup_factor first/);
    }
    // the candidate's second turn saw its lookup and the session's answer to it
    const second = candidateCalls.find((m) => m.length === 3) as { role: string; content: string }[];
    assert.deepEqual(
      second.map((m) => m.role),
      ["user", "assistant", "tool"],
    );
    assert.deepEqual(JSON.parse(second[2].content), { factor: FACTORS["mi>km"] });

    const report = decideValidation(items, {});
    assert.equal(report.scores.functional, 1);
    assert.equal(report.scores.baselineFunctional, 0);
    assert.deepEqual(report.scores.episodes, { n: 4, baselineMeanTurns: 1, candidateMeanTurns: 2 });
    const functional = report.checks.find((c) => c.gate === "functional");
    assert.equal(functional?.passed, true);
    assert.match(functional?.detail ?? "", /4 of 4 items judged as whole episodes in their family's session/);
  });
});
