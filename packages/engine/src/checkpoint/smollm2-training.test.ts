/**
 * SmolLM2-135M-Instruct trains on both engines, and alike: full fine-tuning and LoRA, two SFT steps, a DPO and a GRPO
 * step in turn on the same chat-templated batch give the same losses on the embedded and the torch engine (each loss is
 * taken before its step's update, so the later ones also hold the engines' updates, and LoRA's starting adapters, to
 * each other). The model is cut to its first four layers (`smollm2Slice`: its own weights, tokenizer and
 * architecture) to keep the suite fast; the whole model's training, both engines' losses side by side, and throughput
 * are `npm run bench:real-model`'s.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { Objective, StepMetrics, TrainBatch, TrainEngine } from "@arc/core";
import { loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { TorchTrainEngine } from "../torch/torch-train-engine.ts";
import { EmbeddedTrainEngine } from "../train/embedded-train-engine.ts";
import type { LoraOptions } from "../train/lora.ts";
import { smollm2Slice, smollm2Unavailable } from "./__fixtures__/smollm2.ts";

const TOLERANCE = 1e-3;
/**
 * Learning rates as a run would use them. LoRA's is high enough for the second SFT step to show adapters drawn apart:
 * each engine drawing its own A puts that step's losses 6e-3 apart.
 */
const LEARNING_RATE = { full: 1e-5, lora: 1e-4 };
const OBJECTIVES: Objective[] = [
  { kind: "sft" },
  { kind: "sft" },
  { kind: "dpo", beta: 0.1 },
  { kind: "grpo", klCoef: 0.05 },
];

/** Two DPO pairs of short chat examples: for each question, a right answer (chosen) and a wrong one. */
async function examples(dir: string): Promise<TrainBatch> {
  const tokenizer = await loadChatTokenizer(dir);
  const rows = [
    ["What is the capital of France? One word.", "Paris"],
    ["What is the capital of France? One word.", "Lyon"],
    ["How many legs does a spider have?", "A spider has eight legs."],
    ["How many legs does a spider have?", "A spider has six legs."],
  ].map(([question, answer]) => tokenizer.renderExample([{ role: "user", content: question }], answer));
  return {
    promptTokens: rows.map((r) => r.promptTokens),
    outputTokens: rows.map((r) => r.outputTokens),
    advantages: [1, -1, 0.5, -0.25],
  };
}

/** The losses of one step of each objective in turn. */
async function losses(engine: TrainEngine, batch: TrainBatch): Promise<number[]> {
  const out: number[] = [];
  for (const objective of OBJECTIVES) {
    const metrics: StepMetrics = await engine.step(batch, objective);
    assert.ok(Number.isFinite(metrics.loss), `${objective.kind}: loss ${metrics.loss}`);
    out.push(metrics.loss);
  }
  return out;
}

describe("SmolLM2-135M-Instruct (its first four layers) trains alike on both engines", {
  skip: smollm2Unavailable(),
}, () => {
  let dir: string;
  let batch: TrainBatch;
  before(async () => {
    dir = await smollm2Slice();
    batch = await examples(dir);
  });

  for (const mode of ["full fine-tuning", "LoRA (rank 8 on every projection)"]) {
    it(`${mode}: two SFT steps, a DPO and a GRPO step give the same losses to 1e-3`, async () => {
      const lora: LoraOptions | undefined =
        mode === "full fine-tuning"
          ? undefined
          : {
              rank: 8,
              alpha: 16,
              targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
            };
      const torch = await TorchTrainEngine.fromCheckpoint(dir, {
        device: "cpu",
        learningRate: lora ? LEARNING_RATE.lora : LEARNING_RATE.full,
        lora,
      });
      try {
        const embedded = await EmbeddedTrainEngine.fromCheckpoint(dir, {
          learningRate: lora ? LEARNING_RATE.lora : LEARNING_RATE.full,
          lora,
        });
        const [ours, theirs] = await Promise.all([losses(embedded, batch), losses(torch, batch)]);
        await embedded.close();
        ours.forEach((loss, i) => {
          assert.ok(
            Math.abs(loss - theirs[i]) < TOLERANCE,
            `${OBJECTIVES[i].kind}: embedded loss ${loss}, torch loss ${theirs[i]}`,
          );
        });
        assert.ok(
          ours.slice(0, 3).every((loss) => loss > 0),
          `losses ${ours}`,
        );
      } finally {
        await torch.close();
      }
    });
  }
});
