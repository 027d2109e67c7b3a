import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DetectorRegistry } from "../detect/index.ts";
import { simulateProductionTraffic } from "../testing/simulate/index.ts";
import { detectAndCluster } from "./detect-and-cluster.ts";
import { FailureClusterer } from "./failure-clusterer.ts";

describe("detect and cluster one trace", () => {
  const registry = new DetectorRegistry();
  const traffic = simulateProductionTraffic({ seed: 12, count: 400 });

  it("puts a failed trace into a pattern and leaves a passed one out", async () => {
    const clusterer = new FailureClusterer("acme");
    const failed = traffic.find((s) => s.injected === "wrong_argument: get_weather.unit");
    const ok = traffic.find((s) => s.injected === null);
    assert.ok(failed && ok);
    const out = await detectAndCluster(failed.trace, registry, clusterer);
    assert.equal(out.judgement.status, "failed");
    assert.equal(out.createdPattern, true);
    assert.equal(clusterer.pattern(out.patternId ?? "")?.label, "wrong_argument: get_weather.unit");
    const pass = await detectAndCluster(ok.trace, registry, clusterer);
    assert.deepEqual([pass.judgement.status, pass.patternId], ["passed", null]);
  });

  it("judges a trace it cannot read as unknown and clusters nothing", async () => {
    const clusterer = new FailureClusterer("acme");
    const out = await detectAndCluster({ id: "broken", steps: "nope" }, registry, clusterer);
    assert.deepEqual(
      [out.judgement.status, out.judgement.traceId, out.patternId],
      ["unknown", "broken", null],
    );
    assert.equal(clusterer.patterns().length, 0);
  });
});
