import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { WeightSource } from "@arc/core";
import { toolcallFamily } from "@arc/core/families";
import { pointwise, verifierReward } from "../reward/index.ts";
import { ScriptedInferenceEngine } from "../workflow/__fixtures__/scripted-inference-engine.ts";
import { SyncRolloutSource, workflowSampler } from "./sync-rollout-source.ts";

const tasks = toolcallFamily.generate({ split: "production", seed: 2, count: 2 });
const policy = (): WeightSource => ({ kind: "tensors", tensors: new Map() });

function source(syncInterval: number | "inf", onSync?: (step: number) => Promise<void>) {
  const engine = new ScriptedInferenceEngine((request, k) =>
    k === 0 ? toolcallFamily.reference(tasks.find((t) => t.id === request.id) ?? tasks[0])[0] : "{}",
  );
  const versions: number[] = [];
  engine.setWeights = async (version: number) => {
    versions.push(version);
  };
  return {
    engine,
    versions,
    src: new SyncRolloutSource(engine, {
      n: 2,
      temperature: 1,
      maxTokens: 16,
      seed: 5,
      syncInterval,
      sample: workflowSampler(pointwise(verifierReward)),
      generatorStep: 0,
      onSync,
    }),
  };
}

describe("SyncRolloutSource", () => {
  it("scores every sample of each prompt with the reward and the verifier", async () => {
    const { src } = source(1);
    const batch = await src.next(1, tasks);
    assert.equal(batch.groups.length, 2);
    assert.deepEqual(batch.groups[0].rewards, [1, 0]);
    assert.deepEqual(batch.groups[0].passed, [true, false]);
    assert.equal(batch.generatorStep, 0);
  });

  it("gives the generator the policy's weights every syncInterval steps, and calls onSync then", async () => {
    const synced: number[] = [];
    const { src, versions } = source(3, async (s) => {
      synced.push(s);
    });
    for (let step = 1; step <= 7; step++) await src.afterStep(step, policy);
    assert.deepEqual(versions, [3, 6]);
    assert.deepEqual(synced, [3, 6]);
    assert.equal(src.generatorStep(), 6);
  });

  it("samples with the same seeds while the generator is unchanged (offline reuses its samples), new ones after a sync", async () => {
    const { src, engine } = source("inf");
    await src.next(1, tasks);
    await src.afterStep(1, policy);
    await src.next(2, tasks);
    const seeds = engine.requests.map((r) => r.seed);
    assert.deepEqual(seeds.slice(0, 2), seeds.slice(2, 4));
    const online = source(1);
    await online.src.next(1, tasks);
    await online.src.afterStep(1, policy);
    await online.src.next(2, tasks);
    const s = online.engine.requests.map((r) => r.seed);
    assert.notDeepEqual(s.slice(0, 2), s.slice(2, 4));
  });
});
