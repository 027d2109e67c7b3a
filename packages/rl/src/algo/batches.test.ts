import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GenResult, Task } from "@arc/core";
import type { ScoredGroup } from "../rollout/scored-group.ts";
import { dpoBatch } from "./dpo-batch.ts";
import { grpoBatch } from "./grpo-batch.ts";
import { scheduledSftBatch, sftBatch } from "./sft-batch.ts";

const task: Task = { id: "t", env: "toolcall", question: "q", solution: {} };
const sample = (token: number, version = 0): GenResult => ({
  sampleIndex: token,
  text: String(token),
  promptTokens: [1, 2],
  outputTokens: [token],
  outputLogprobs: [-0.5],
  outputVersions: [version],
  finishReason: "stop",
});
const group = (rewards: number[]): ScoredGroup => ({
  task,
  samples: rewards.map((_, i) => sample(10 + i)),
  rewards,
  passed: rewards.map((r) => r === 1),
  versionRange: [0, 0],
});

describe("DPO batch", () => {
  it("puts each group's best sample on even rows and its worst on odd rows, skipping ties", () => {
    const out = dpoBatch([group([0, 1, 0.5]), group([1, 1, 1]), group([0.2, 0])]);
    assert.deepEqual(out.batch.outputTokens, [[11], [10], [10], [11]]);
    assert.equal(out.sampledPairs, 2);
    assert.equal(out.ties, 1);
    assert.ok(Math.abs(out.meanMargin - 0.6) < 1e-9);
  });

  it("mixes in production preference pairs after the sampled ones", () => {
    const out = dpoBatch([group([0, 1])], [{ promptTokens: [7], chosenTokens: [8], rejectedTokens: [9] }]);
    assert.deepEqual(out.batch.promptTokens.slice(2), [[7], [7]]);
    assert.deepEqual(out.batch.outputTokens.slice(2), [[8], [9]]);
    assert.equal(out.mixedPairs, 1);
  });
});

describe("DPO batch of multi-turn episodes", () => {
  /** A model turn of an episode: its conversation so far and its output. */
  const turn = (prompt: number[], output: number): GenResult => ({
    ...sample(output),
    promptTokens: prompt,
    outputTokens: [output],
  });
  const episodes = (rewards: number[], runs: GenResult[][]): ScoredGroup => ({
    task,
    samples: runs.map((run) => run[run.length - 1]),
    episodes: runs,
    rewards,
    passed: rewards.map((r) => r === 1),
    versionRange: [0, 0],
  });

  it("pairs the best and worst episodes at the turn where they part, on the prompt both saw there", () => {
    const good = [turn([1], 5), turn([1, 5, 9], 6)];
    const bad = [turn([1], 5), turn([1, 5, 9], 7), turn([1, 5, 9, 7, 9], 8)];
    const out = dpoBatch([episodes([1, 0], [good, bad])]);
    assert.deepEqual(out.batch.promptTokens, [
      [1, 5, 9],
      [1, 5, 9],
    ]);
    assert.deepEqual(out.batch.outputTokens, [[6], [7]]);
    assert.equal(out.sampledPairs, 1);
  });

  it("counts episodes that never part, or part on different prompts, as ties", () => {
    const same = [turn([1], 5)];
    const drifted = [
      [turn([1], 5), turn([1, 5, 9], 6)],
      [turn([1], 5), turn([1, 5, 8], 7)],
    ];
    const out = dpoBatch([episodes([1, 0], [same, same]), episodes([1, 0], drifted)]);
    assert.equal(out.sampledPairs, 0);
    assert.equal(out.ties, 2);
  });
});

describe("GRPO batch", () => {
  it("gives every sample of an informative group its normalized advantage and drops uniform groups", () => {
    const out = grpoBatch([group([1, 0]), group([0, 0])], "grpo", false);
    assert.equal(out.groups, 1);
    assert.equal(out.uniform, 1);
    assert.equal(out.batch.outputTokens.length, 2);
    assert.ok(Math.abs((out.batch.advantages?.[0] ?? 0) - 1) < 1e-4);
    assert.equal(out.batch.oldLogprobs, undefined);
  });

  it("carries the behaviour policy's logprobs when asked (ratio under staleness)", () => {
    const out = grpoBatch([group([1, 0])], "dr-grpo", true);
    assert.deepEqual(out.batch.oldLogprobs, [[-0.5], [-0.5]]);
    assert.deepEqual(out.batch.advantages, [0.5, -0.5]);
  });
});

describe("SFT batches under a guided schedule", () => {
  // each example's reply is its index, and its guided ones are marked, so a batch shows which examples it took
  const examples = Array.from({ length: 40 }, (_, i) => ({
    messages: [{ role: "user" as const, content: "q" }],
    reply: String(i),
    guided: i % 4 === 0,
  }));
  const render = (_: unknown, reply: string) => ({ promptTokens: [1], outputTokens: [Number(reply)] });
  const taken = (step: number, guidedEvery: number) =>
    scheduledSftBatch(examples, render, step, 6, { seed: 3, guidedFrom: 5, guidedEvery }).outputTokens.map(
      ([i]) => i,
    );

  it("holds guided examples back until guidedFrom, then makes every k-th step a half-size batch of them", () => {
    for (let step = 1; step <= 12; step++) {
      const rows = taken(step, 3);
      const guidedStep = step >= 5 && (step - 5) % 3 === 0;
      assert.equal(rows.length, guidedStep ? 3 : 6, `step ${step}`);
      assert.ok(
        rows.every((i) => examples[i].guided === guidedStep),
        `step ${step}: ${rows}`,
      );
    }
    // plain steps go on through the plain examples' own order: steps 1-4 and 6-7 are its batches 1-6
    const plain = examples.filter((e) => !e.guided);
    const order = (k: number) => sftBatch(plain, render, k, 6, 3).outputTokens.map(([i]) => i);
    assert.deepEqual(taken(6, 3), order(5));
    assert.deepEqual(taken(7, 3), order(6));
  });

  it("mixes guided examples into every batch when guidedEvery is 0", () => {
    assert.deepEqual(
      taken(7, 0),
      sftBatch(examples, render, 7, 6, 3).outputTokens.map(([i]) => i),
    );
  });
});
