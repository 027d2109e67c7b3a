import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Trace } from "../../trace/index.ts";
import { INJECTED_MODES } from "./injected-modes.ts";
import { simulateProductionTraffic } from "./production-traffic.ts";

describe("production traffic simulator", () => {
  const traffic = simulateProductionTraffic({ seed: 5, count: 1500, modelVersions: ["v1", "v2"] });

  it("sends traces the trace API accepts, the same ones for the same seed", () => {
    for (const s of traffic) Trace.parse(s.trace);
    assert.deepEqual(
      simulateProductionTraffic({ seed: 5, count: 50 }),
      simulateProductionTraffic({ seed: 5, count: 50 }),
    );
  });

  it("injects every known mode at about the asked failure rate, and labels the rest correct", () => {
    const failed = traffic.filter((s) => s.injected !== null);
    assert.ok(Math.abs(failed.length / traffic.length - 0.35) < 0.05, `${failed.length}`);
    assert.deepEqual(new Set(failed.map((s) => s.injected)), new Set(INJECTED_MODES.map((m) => m.id)));
  });

  it("spreads traces over time and model versions, and attaches feedback to complaint modes only", () => {
    const versions = new Set(traffic.map((s) => s.trace.steps?.[0]?.llm?.modelVersion));
    assert.deepEqual(versions, new Set(["v1", "v2"]));
    for (const s of traffic) assert.equal(s.feedback.length > 0, s.injected === "user_feedback: thumbs_down");
  });

  it("refuses a failure rate outside [0, 1] and a mode it does not know", () => {
    assert.throws(
      () => simulateProductionTraffic({ seed: 1, count: 1, failureRate: 2 }),
      /failureRate: expected a number in \[0, 1\], got 2/,
    );
    assert.throws(
      () => simulateProductionTraffic({ seed: 1, count: 1, modes: ["gremlins"] }),
      /modes: unknown mode "gremlins"/,
    );
  });
});
