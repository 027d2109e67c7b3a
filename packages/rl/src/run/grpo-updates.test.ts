import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { Objective, TrainBatch, TrainEngine, WeightSource } from "@arc/core";
import { engineFactory } from "../worker/index.ts";
import { writeTinyModel } from "./__fixtures__/tiny-model.ts";
import { grpoUpdates } from "./grpo-updates.ts";

const replies = [
  ["what is 2+2?", "4"],
  ["what is 2+2?", "five"],
  ["capital of france?", "paris"],
  ["capital of france?", "rome, I think"],
];
const model = await writeTinyModel(join(await mkdtemp(join(tmpdir(), "arc-ppo-epochs-")), "model"));
const render = await engineFactory.renderExample(model);
const rows = replies.map(([q, a]) => render([{ role: "user", content: q }], a));
const batch: TrainBatch = {
  promptTokens: rows.map((r) => r.promptTokens),
  outputTokens: rows.map((r) => r.outputTokens),
  advantages: [1, -1, 1, -1],
};
/** A tight clip range and a large step, so that one update moves the ratio past the clip. */
const objective: Extract<Objective, { kind: "grpo" }> = { kind: "grpo", clipEpsilon: 0.02 };

async function freshEngine(): Promise<TrainEngine> {
  return engineFactory.trainEngine(model, {
    learningRate: 5e-2,
    warmupSteps: 0,
    decaySteps: 0,
    minLearningRate: 0,
    weightDecay: 0,
    maxGradNorm: 1,
    trainThreads: 1,
  });
}

function tensors(source: WeightSource | Promise<WeightSource>) {
  assert.ok(!(source instanceof Promise), "expected in-memory weights");
  assert.equal(source.kind, "tensors");
  return source.tensors;
}

/** The largest absolute difference between two engines' weights. */
function weightGap(a: TrainEngine, b: TrainEngine): number {
  const right = tensors(b.weights());
  let gap = 0;
  for (const [name, tensor] of tensors(a.weights())) {
    const other = right.get(name)?.data as Float32Array;
    for (let i = 0; i < tensor.data.length; i++) gap = Math.max(gap, Math.abs(tensor.data[i] - other[i]));
  }
  return gap;
}

describe("several GRPO updates on one rollout batch (ppoEpochs)", () => {
  it("takes one plain step for one epoch", async () => {
    const [a, b] = [await freshEngine(), await freshEngine()];
    const viaUpdates = await grpoUpdates(a, batch, objective, 1);
    const plain = await b.step(batch, objective);
    assert.deepEqual(viaUpdates, plain);
    assert.equal(weightGap(a, b), 0);
  });

  for (const decoupled of [false, true]) {
    it(`clips every later update against the policy the first started from${decoupled ? " (the proximal one, decoupled)" : ""}`, async () => {
      const o = { ...objective, decoupled };
      const [held, plain] = [await freshEngine(), await freshEngine()];
      // the decoupled objective needs behaviour log-probs: the sampler's, here the starting policy's own
      const start = (await held.logprobs(batch)).map((row) => Array.from(row));
      const input = decoupled ? { ...batch, oldLogprobs: start } : batch;
      const result = await grpoUpdates(held, input, o, 3);
      const steps = [];
      for (let i = 0; i < 3; i++) steps.push(await plain.step(input, o));

      assert.equal(result.step, 3);
      assert.equal(result.loss, steps[0].loss, "the loss is the first update's, before any update");
      assert.equal(result.tokens, 3 * steps[0].tokens);
      // three plain steps each start from their own policy: nothing is ever outside the clip range ...
      assert.ok(
        steps.every((m) => m.extra.clipFraction === 0),
        JSON.stringify(steps.map((m) => m.extra)),
      );
      // ... while the held old policy puts tokens of the second and third updates outside it
      assert.ok(result.extra.clipFraction > 0, JSON.stringify(result.extra));
      assert.ok(weightGap(held, plain) > 1e-4, "held and plain updates ended on the same weights");
    });
  }
});
