/**
 * The torch engine against the embedded one on the shipped models (models/toolcall-base, a byte-level Llama, and
 * models/toolcall-bpe, a Qwen2 with a BPE tokenizer): the same batch gives the same log-probs, each objective's loss
 * and gradients, the same parameters after a step, and the same loss curve over 50 SFT steps. Both run in float32
 * on the CPU.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Objective, TrainBatch } from "@arc/core";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import { readHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { type NamedTensor, readSafetensors } from "../checkpoint/safetensors.ts";
import { renderChatExample } from "../tokenizer/chat-template.ts";
import { type ChatTokenizer, loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { EmbeddedTrainEngine } from "../train/embedded-train-engine.ts";
import { torchUnavailable } from "./__fixtures__/torch-available.ts";
import { TorchTrainEngine } from "./torch-train-engine.ts";

const model = (name: string) => fileURLToPath(new URL(`../../../../models/${name}`, import.meta.url));
const MODEL = model("toolcall-base");
const skip = torchUnavailable();

/** `count` toolcall examples (prompt, reference answer) from the generated train split, rendered by `tokenizer`. */
function examples(seed: number, count: number, tokenizer?: ChatTokenizer): TrainBatch {
  const render = tokenizer ? tokenizer.renderExample.bind(tokenizer) : renderChatExample;
  const rows = generateToolcallTasks({ split: "train", seed, count }).map((task) =>
    render(toolcallFamily.prompt(task), toolcallFamily.reference(task)[0]),
  );
  return { promptTokens: rows.map((r) => r.promptTokens), outputTokens: rows.map((r) => r.outputTokens) };
}

/** The batch with each prompt given the next row's answer. */
function mismatched(batch: TrainBatch): TrainBatch {
  const outputs = batch.outputTokens;
  return {
    promptTokens: batch.promptTokens,
    outputTokens: outputs.map((_, i) => outputs[(i + 1) % outputs.length]),
  };
}

/** ‖a − b‖ / ‖a‖ over every tensor the two maps share (they must share all). */
function relativeGap(a: Map<string, NamedTensor>, b: Map<string, NamedTensor>): number {
  assert.deepEqual([...b.keys()].sort(), [...a.keys()].sort());
  let diff = 0;
  let norm = 0;
  for (const [name, t] of a) {
    const other = b.get(name)!;
    assert.deepEqual(other.shape, t.shape, name);
    for (let i = 0; i < t.data.length; i++) {
      diff += (t.data[i] - other.data[i]) ** 2;
      norm += t.data[i] ** 2;
    }
  }
  return Math.sqrt(diff) / Math.sqrt(norm);
}

for (const name of ["toolcall-base", "toolcall-bpe"])
  describe(`torch engine against the embedded engine on models/${name}`, { skip }, () => {
    // Three DPO pairs, rows of different lengths. Each prompt gets another task's answer: on its own answers the model
    // is near certain, and the gradient of a token with p ~ 1 is a difference (1 - p) that float32 holds to a few
    // digits only, in either engine, which would be measured here instead of the engines.
    let tokenizer: ChatTokenizer;
    let batch: TrainBatch;
    let embedded: EmbeddedTrainEngine;
    let torch: TorchTrainEngine;
    let scratch: string;

    before(async () => {
      scratch = await mkdtemp(join(tmpdir(), "arc-cross-engine-"));
      tokenizer = await loadChatTokenizer(model(name));
      batch = mismatched(examples(11, 6, tokenizer));
      batch.lossMask = batch.outputTokens.map((o, i) => o.map((_, j) => (i === 3 && j < 2 ? 0 : 1)));
      [embedded, torch] = await Promise.all([
        EmbeddedTrainEngine.fromCheckpoint(model(name), { learningRate: 1e-3 }),
        TorchTrainEngine.fromCheckpoint(model(name), { device: "cpu", learningRate: 1e-3 }),
      ]);
    });
    after(async () => {
      await torch?.close();
      await rm(scratch, { recursive: true, force: true });
    });

    it("gives the same log-probs to 1e-4", async () => {
      const [a, b] = await Promise.all([embedded.logprobs(batch), torch.logprobs(batch)]);
      let worst = 0;
      a.forEach((row, r) => {
        assert.equal(b[r].length, row.length);
        row.forEach((x, i) => {
          worst = Math.max(worst, Math.abs(x - b[r][i]));
        });
      });
      assert.ok(worst < 1e-4, `largest log-prob gap ${worst}`);
    });

    it("gives each objective's loss to 1e-4 and its gradients to 1e-4 relative", async () => {
      const logp = await embedded.logprobs(batch);
      /** Log-probs a little off the current policy's, as another policy's would be. */
      const offsets = [-0.1, 0.1, 0.1, -0.1, -0.05, 0.02]; // per row: pairs 0 and 2 gain margin, pair 1 loses it
      const shifted = (by: number) =>
        logp.map((row, r) => Array.from(row, (x, i) => x + (((r + i) % 3) - 1) * by + offsets[r]));
      // a reference and a behaviour policy off the current one: DPO margins and KL are not 0, ratios clip, and some
      // behaviour weights pass the cap
      const dpoBatch: TrainBatch = { ...batch, refLogprobs: shifted(0.2) };
      const grpoBatch: TrainBatch = {
        ...batch,
        advantages: [1, -1, 0.5, -0.5, 2, -0.25],
        oldLogprobs: shifted(0.3),
        refLogprobs: shifted(-0.2),
      };
      const cases: [string, TrainBatch, Objective][] = [
        ["sft", batch, { kind: "sft" }],
        ["dpo", dpoBatch, { kind: "dpo", beta: 0.2, entropyCoef: 0.05, nllCoef: 0.3 }],
        ["ipo", dpoBatch, { kind: "dpo", beta: 2, loss: "ipo" }],
        ["dpo, reference computed", batch, { kind: "dpo" }],
        ["grpo token", grpoBatch, { kind: "grpo", klCoef: 0.1, entropyCoef: 0.01 }],
        ["grpo sequence", grpoBatch, { kind: "grpo", aggregation: "sequence", clipEpsilon: 0.1 }],
        ["grpo dr-grpo", grpoBatch, { kind: "grpo", aggregation: "dr-grpo", klCoef: 0.05 }],
        ["grpo decoupled", grpoBatch, { kind: "grpo", decoupled: true, behaviourWeightCap: 1.2 }],
      ];
      for (const [label, rows, objective] of cases) {
        const path = join(scratch, `${label.replace(/\W+/g, "-")}.safetensors`);
        const want = embedded.batchGradients(rows, objective);
        const got = await torch.batchGradients(rows, objective, path);
        const lossTolerance = 1e-4 * Math.max(1, Math.abs(want.loss)); // relative where float32 cannot hold 1e-4 absolute
        assert.ok(
          Math.abs(want.loss - got.loss) < lossTolerance,
          `${label}: loss ${want.loss} vs ${got.loss}`,
        );
        assert.deepEqual(Object.keys(got.extra).sort(), Object.keys(want.extra).sort(), label);
        // DPO's rewards and margin sum log-probs over a response's tokens, so their tolerance is the per-token one
        // times a response's length
        for (const [k, v] of Object.entries(want.extra))
          assert.ok(
            Math.abs(v - got.extra[k]) < 1e-4 * 40 * Math.max(1, Math.abs(v)),
            `${label} ${k}: ${v} vs ${got.extra[k]}`,
          );
        const gap = relativeGap(want.grads, await readSafetensors(path));
        assert.ok(gap < 1e-4, `${label}: gradients differ by ${gap} (relative)`);
        console.log(
          `${name} ${label}: loss ${want.loss.toFixed(6)} vs ${got.loss.toFixed(6)}, gradient gap ${gap.toExponential(2)}`,
        );
      }
    });

    it("holds the same parameters after a step, to 1e-4 relative", async () => {
      const rows = mismatched(examples(13, 8, tokenizer));
      const [a, b] = await Promise.all([
        embedded.step(rows, { kind: "sft" }),
        torch.step(rows, { kind: "sft" }),
      ]);
      assert.equal(b.step, a.step);
      assert.ok(Math.abs(a.loss - b.loss) < 1e-4);
      assert.ok(Math.abs(a.gradNorm - b.gradNorm) < 1e-4 * a.gradNorm, `${a.gradNorm} vs ${b.gradNorm}`);
      const source = await torch.weights();
      assert.equal(source.kind, "checkpoint");
      const { tensors } = await readHfCheckpoint(source.kind === "checkpoint" ? source.dir : "");
      const gap = relativeGap(embedded.exportTensors(), tensors);
      assert.ok(gap < 1e-4, `parameters differ by ${gap} (relative)`);
      console.log(`${name} parameters after one step: gap ${gap.toExponential(2)} (relative)`);
    });

    it("takes the policy as its reference on syncReference, as the embedded engine does", async () => {
      // after the step above the policy has moved off the reference: DPO's implicit rewards are not 0
      const dpo: Objective = { kind: "dpo", beta: 0.5 };
      const rewards = async () => {
        const want = embedded.batchGradients(batch, dpo);
        const got = await torch.batchGradients(batch, dpo, join(scratch, "sync.safetensors"));
        assert.ok(Math.abs(want.loss - got.loss) < 1e-4, `loss ${want.loss} vs ${got.loss}`);
        return [want.extra, got.extra].map((e) => [e.chosenReward, e.rejectedReward, e.margin]);
      };
      const moved = await rewards();
      for (const engine of moved)
        assert.ok(
          engine.some((r) => Math.abs(r) > 1e-3),
          `rewards ${engine}`,
        );
      await Promise.all([embedded.syncReference(), torch.syncReference()]);
      const synced = await rewards();
      for (const engine of synced) for (const r of engine) assert.ok(Math.abs(r) < 1e-5, `rewards ${engine}`);
    });
  });

describe("a 50-step SFT run on either engine", { skip }, () => {
  it("draws the same loss curve, to 1% at every step", async () => {
    const settings = { learningRate: 1e-3, warmupSteps: 5, decaySteps: 45, minLearningRate: 1e-4 };
    const embedded = await EmbeddedTrainEngine.fromCheckpoint(MODEL, settings);
    const torch = await TorchTrainEngine.fromCheckpoint(MODEL, { device: "cpu", ...settings });
    try {
      let worst = 0;
      for (let step = 0; step < 50; step++) {
        const rows = examples(100 + step, 8);
        const [a, b] = await Promise.all([
          embedded.step(rows, { kind: "sft" }),
          torch.step(rows, { kind: "sft" }),
        ]);
        assert.equal(b.learningRate.toPrecision(6), a.learningRate.toPrecision(6));
        worst = Math.max(worst, Math.abs(a.loss - b.loss) / a.loss);
      }
      assert.ok(worst < 0.01, `loss curves differ by up to ${(worst * 100).toFixed(3)}%`);
      console.log(`50 SFT steps: loss curves differ by up to ${(worst * 100).toFixed(4)}%`);
    } finally {
      await torch.close();
    }
  });
});
