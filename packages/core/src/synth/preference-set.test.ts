import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DetectorRegistry } from "../detect/index.ts";
import type { Dataset } from "../synth/index.ts";
import { simulateProductionTraffic } from "../testing/simulate/index.ts";
import { Trace } from "../trace/index.ts";
import type { FailureItem } from "./failure-item.ts";
import { failureItemFromTrace } from "./failure-item.ts";
import { candidatesFromFeedback } from "./feedback-candidates.ts";
import { buildPreferenceSet } from "./preference-set.ts";

const weather = { tool: "get_weather", args: { city: "Oslo", unit: "c" } };
const item = (traceId: string, over: Partial<FailureItem> = {}): FailureItem => ({
  traceId,
  patternId: "pat_unit",
  env: "toolcall",
  question: `What's the weather in Oslo in celsius? (${traceId})`,
  context: { messages: [{ role: "user", content: `What's the weather in Oslo in celsius? (${traceId})` }] },
  solution: weather,
  output: '{"tool":"get_weather","args":{"city":"Oslo","unit":"f"}}',
  modelVersion: "base-v1",
  ...over,
});
const right = '{"tool":"get_weather","args":{"city":"Oslo","unit":"c"}}';
const build = (
  failures: FailureItem[],
  candidates: Record<string, { text: string; source: "human" | "policy" | "teacher" }[]>,
  evalSets: Dataset[] = [],
) => buildPreferenceSet({ tenantId: "acme", seed: 1, failures, candidates, evalSets });

describe("PreferenceSet synthesis", () => {
  it("pairs the failed output (rejected) with a verified human correction (chosen), with provenance", async () => {
    const set = build([item("t1")], { t1: [{ text: right, source: "human" }] });
    assert.equal(set.rows.length, 1);
    const row = set.rows[0];
    assert.deepEqual([row.chosen, row.rejected], [right, item("t1").output]);
    assert.deepEqual(row.meta, {
      patternId: "pat_unit",
      sourceTraceIds: ["t1"],
      chosenSource: "human",
      chosenVerified: true,
      rejectedModelVersion: "base-v1",
    });
    assert.deepEqual(row.prompt, [{ role: "user", content: item("t1").question }]);
  });

  it("takes human corrections from feedback as candidates", async () => {
    const candidates = candidatesFromFeedback([
      { id: "f1", traceId: "t1", correction: right },
      { id: "f2", traceId: "t2", label: "thumbs_down" },
    ]);
    assert.deepEqual(candidates, { t1: [{ text: right, source: "human" }] });
    assert.equal(build([item("t1"), item("t2")], candidates).rows.length, 1);
  });

  it("passes over a correction that fails the verifier and takes a resampled policy output that passes", async () => {
    const set = build([item("t1")], {
      t1: [
        { text: '{"tool":"get_weather","args":{"city":"Oslo","unit":"kelvin"}}', source: "human" },
        { text: right, source: "policy" },
      ],
    });
    assert.equal(set.rows[0].meta.chosenSource, "policy");
  });

  it("takes a teacher's output only when it verifies, and drops the pair when nothing does", async () => {
    assert.equal(
      build([item("t1")], { t1: [{ text: right, source: "teacher" }] }).rows[0].meta.chosenSource,
      "teacher",
    );
    const none = build([item("t1")], { t1: [{ text: "I'm sorry.", source: "teacher" }] });
    assert.deepEqual([none.rows.length, none.stats.noVerifiedChosen], [0, 1]);
  });

  it("drops a 'failure' whose output actually passes the verifier", async () => {
    const set = build([item("t1", { output: right })], { t1: [{ text: right, source: "human" }] });
    assert.deepEqual([set.rows.length, set.stats.rejectedPasses], [0, 1]);
  });

  it("trusts a human correction for a tenant env without a verifier, marked unverified", async () => {
    const set = build([item("t9", { env: "support", solution: undefined, output: "Done!" })], {
      t9: [{ text: "I sent a reset link to your email.", source: "human" }],
    });
    assert.equal(set.rows[0].meta.chosenVerified, false);
    assert.equal(
      build([item("t9", { env: "support", solution: undefined })], {
        t9: [{ text: right, source: "policy" }],
      }).rows.length,
      0,
    );
  });

  it("makes no pair on a prompt that is an eval question", async () => {
    const evalSet = build([item("t1")], { t1: [{ text: right, source: "human" }] }) as unknown as Dataset;
    const set = build([item("t1")], { t1: [{ text: right, source: "human" }] }, [evalSet]);
    assert.deepEqual([set.rows.length, set.stats.overlapsEval], [0, 1]);
  });

  it("verifies a multi-turn candidate after the episode's earlier turns", async () => {
    const registry = new DetectorRegistry();
    const sim = simulateProductionTraffic({
      seed: 3,
      count: 400,
      modes: ["wrong_argument: refund_order.amount"],
      failureRate: 1,
    }).find((s) => s.injected);
    assert.ok(sim);
    const trace = Trace.parse(sim.trace);
    const failed = failureItemFromTrace(trace, await registry.judge(trace), "pat_amount");
    assert.ok(failed);
    assert.equal(failed.priorOutputs?.length, 1);
    assert.equal(failed.context.messages.at(-1)?.role, "tool");
    const solution = failed.solution as { calls: unknown[] };
    const set = build([failed], {
      [failed.traceId]: [{ text: JSON.stringify(solution.calls[1]), source: "policy" }],
    });
    assert.equal(set.rows.length, 1);
  });
});
