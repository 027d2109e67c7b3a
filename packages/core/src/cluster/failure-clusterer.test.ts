import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DetectorRegistry } from "../detect/index.ts";
import { simulateProductionTraffic } from "../testing/simulate/index.ts";
import { Trace } from "../trace/index.ts";
import { clusteringScores } from "./clustering-scores.ts";
import { FailureClusterer } from "./failure-clusterer.ts";
import { type FailureRecord, failureRecord } from "./failure-record.ts";

/** Detects and clusters simulated traffic; returns the clusterer and (pattern, injected mode) pairs. */
async function run(
  seed: number,
  count: number,
  clusterer = new FailureClusterer("acme"),
  versions?: string[],
) {
  const registry = new DetectorRegistry();
  const pairs: { predicted: string; truth: string }[] = [];
  let missed = 0;
  for (const sim of simulateProductionTraffic({ seed, count, modelVersions: versions })) {
    const trace = Trace.parse(sim.trace);
    const failure = failureRecord(trace, await registry.judge(trace, sim.feedback));
    if (failure)
      pairs.push({ predicted: clusterer.assign(failure).patternId, truth: sim.injected ?? "(none)" });
    else if (sim.injected) missed++;
  }
  return { clusterer, pairs, missed };
}

/** What the label of each injected mode's main pattern must say. */
const LABELS: Record<string, RegExp> = {
  "wrong_tool: book_table→add_event": /^wrong_tool: book_table→add_event$/,
  "wrong_argument: get_weather.unit": /^wrong_argument: get_weather\.unit$/,
  "wrong_argument: add_event.date": /^wrong_argument: add_event\.date$/,
  "parse_error: unclosed JSON": /^parse_error: json \(expected <s> or <s> after property value/,
  "schema_violation: book_table.people": /^schema_violation: book_table\.people$/,
  "execution_error: convert_currency (YEN)":
    /^execution_error: convert_currency \(unsupported currency yen\)$/,
  "refusal: currency requests": /^refusal: .*(usd|eur|dollars|euros|yen|chf|gbp|cad|convert)/,
  "refusal: booking requests": /^refusal: .*(book|table|reserve)/,
  "truncation: add_event": /^truncation: add_event$/,
  empty_output: /^empty_output$/,
  "wrong_answer: calc": /^wrong_answer: calc$/,
  "parse_error: prose answer": /^parse_error: json \(unexpected token <s>, <s> is not valid json\)$/,
  "tool_loop: lookup_order": /^tool_loop: lookup_order$/,
  "wrong_argument: refund_order.amount": /^wrong_argument: refund_order\.amount$/,
  "wrong_tool: acted before lookup_order": /^wrong_tool: orderdesk\.lookup_order$/,
  timeout: /^timeout/,
  latency_over_budget: /^latency_over_budget$/,
  "user_feedback: thumbs_down": /^user_feedback: thumbs_down$/,
};

function failure(text: string, overrides: Partial<FailureRecord> = {}): FailureRecord {
  return { traceId: text, class: "refusal", text, at: "2026-01-05T10:00:00Z", ...overrides };
}

describe("failure clustering", () => {
  it("recovers 18 injected failure modes (two of them told apart by request text alone) from 3,000 production traces with purity and completeness >= 0.9", async () => {
    const { clusterer, pairs, missed } = await run(21, 3000);
    assert.equal(missed, 0, "every injected failure is detected");
    assert.ok(!pairs.some((p) => p.truth === "(none)"), "no correct trace is called a failure");
    const scores = clusteringScores(pairs);
    assert.ok(scores.purity >= 0.9, `purity ${scores.purity}`);
    assert.ok(scores.completeness >= 0.9, `completeness ${scores.completeness}`);
    for (const [mode, label] of Object.entries(LABELS)) {
      const counts = new Map<string, number>();
      for (const p of pairs)
        if (p.truth === mode) counts.set(p.predicted, (counts.get(p.predicted) ?? 0) + 1);
      const main = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
      assert.ok(main, `mode ${mode} was injected`);
      assert.match(clusterer.pattern(main)?.label ?? "", label, mode);
    }
  });

  it("keeps pattern ids as patterns grow, and a restored clusterer continues exactly like an uninterrupted one", async () => {
    const straight = (await run(4, 1200)).clusterer;
    const first = (await run(4, 600)).clusterer;
    const idsBefore = first.patterns().map((p) => p.id);
    const restored = FailureClusterer.fromJSON(JSON.parse(JSON.stringify(first.toJSON())));
    const registry = new DetectorRegistry();
    for (const sim of simulateProductionTraffic({ seed: 4, count: 1200 }).slice(600)) {
      const trace = Trace.parse(sim.trace);
      const f = failureRecord(trace, await registry.judge(trace, sim.feedback));
      if (f) restored.assign(f);
    }
    for (const id of idsBefore) assert.ok(restored.pattern(id), `pattern ${id} kept its id`);
    assert.deepEqual(restored.toJSON(), straight.toJSON());
  });

  it("splits refusals by topic but keeps rephrasings of one topic together", async () => {
    const c = new FailureClusterer("acme");
    const a = c.assign(failure("Convert 50 USD to EUR.")).patternId;
    assert.equal(c.assign(failure("Convert 80 GBP to JPY.")).patternId, a);
    const b = c.assign(failure("What's the weather in Oslo in celsius?"));
    assert.equal(b.created, true);
    assert.equal(c.assign(failure("What's the weather in Lima in fahrenheit?")).patternId, b.patternId);
    assert.match(c.pattern(b.patternId)?.label ?? "", /^refusal: .*weather/);
  });

  it("groups a class with a tool path by structure alone, whatever the wording", async () => {
    const c = new FailureClusterer("acme");
    const wrongUnit = { class: "wrong_argument" as const, path: "get_weather.unit" };
    const a = c.assign(failure("Weather in Paris, celsius please.", wrongUnit)).patternId;
    assert.equal(c.assign(failure("Is it hot in Quito today? Answer in °F.", wrongUnit)).patternId, a);
    assert.notEqual(
      c.assign(failure("Weather in Paris, celsius please.", { ...wrongUnit, path: "get_weather.city" }))
        .patternId,
      a,
    );
  });

  it("counts a pattern per day and per model version, and keeps its first examples", async () => {
    const { clusterer } = await run(8, 2880, new FailureClusterer("acme", { maxExamples: 3 }), ["v1", "v2"]);
    const top = clusterer.patterns()[0];
    assert.deepEqual(Object.keys(top.countsByDay).sort(), ["2026-01-05", "2026-01-06"]);
    assert.deepEqual(Object.keys(top.countsByModelVersion).sort(), ["v1", "v2"]);
    const sum = (r: Record<string, number>) => Object.values(r).reduce((x, y) => x + y, 0);
    assert.equal(sum(top.countsByDay), top.count);
    assert.equal(top.examples.length, 3);
    assert.ok(top.examples[0].question.length > 0);
    assert.ok(top.firstSeen <= top.lastSeen);
  });

  it("opens a new pattern when a new mode appears later", async () => {
    const c = new FailureClusterer("acme");
    c.assign(failure("x", { class: "timeout", signature: "timeout" }));
    const before = c.patterns().length;
    const fresh = c.assign(failure("Book a table", { class: "wrong_tool", path: "book_table→get_weather" }));
    assert.equal(fresh.created, true);
    assert.equal(c.patterns().length, before + 1);
  });

  it("refuses state it cannot read", async () => {
    assert.throws(
      () => FailureClusterer.fromJSON({ format: "v0" } as never),
      /state.format: expected "arc.cluster-state\/1", got "v0"/,
    );
    assert.throws(() => new FailureClusterer(""), /tenantId: expected a non-empty tenant id/);
    assert.throws(
      () => new FailureClusterer("acme", { textSimilarity: 3 }),
      /textSimilarity: expected a number in \[0, 1\], got 3/,
    );
  });
});
