/**
 * The engine against HF transformers itself. The reference outputs in __fixtures__/transformers were made by
 * transformers 5.17 / torch 2.11 (float32, CPU) with scripts/make_transformers_fixtures.py, on a machine that
 * has them: what AutoTokenizer and AutoModelForCausalLM make of the checkpoints this engine exported
 * (models/toolcall-base, models/arith-base, and a tiny teacher kept in __fixtures__/transformers/exported/), and tiny
 * checkpoints that transformers' save_pretrained wrote. Regenerate them with that script whenever a base model changes.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { initBackend } from "../backend/tf-backend.ts";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { decodeTokens, encodeText } from "../tokenizer/byte-tokenizer.ts";
import { type ChatMessage, renderChat } from "../tokenizer/chat-template.ts";
import { forwardLogits } from "./__fixtures__/forward-logits.ts";
import { type HfCheckpoint, readHfCheckpoint } from "./hf-checkpoint.ts";

const fixtures = join(import.meta.dirname, "__fixtures__/transformers");
const repoRoot = join(import.meta.dirname, "../../../..");
const LOGIT_TOLERANCE = 1e-4;
const STALE_HINT =
  "(if a base model in models/ changed, regenerate __fixtures__/transformers: see the header of this file)";

interface ExportedCase {
  name: string;
  ids: number[];
  decoded: string;
  logits_from_position: number;
  logits: number[][];
  greedy: number[];
}
const conversations: { name: string; messages: ChatMessage[] }[] = JSON.parse(
  readFileSync(join(fixtures, "conversations.json"), "utf8"),
).conversations;
const exported: { models: Record<string, { eos_token_id: number[]; cases: ExportedCase[] }> } = JSON.parse(
  readFileSync(join(fixtures, "exported.json"), "utf8"),
);
const made: { tokens: number[]; checkpoints: Record<string, { logits: number[][] }> } = JSON.parse(
  readFileSync(join(fixtures, "made-by-transformers/made.json"), "utf8"),
);

/** Largest |ours - theirs| over the reference rows, which start at position `from` of `ids`. */
function maxLogitDiff(checkpoint: HfCheckpoint, ids: number[], from: number, reference: number[][]) {
  const { config } = checkpoint;
  let worst = 0;
  for (const mode of ["train", "infer"] as const) {
    const ours = forwardLogits(config, checkpoint.tensors, ids, mode);
    reference.forEach((row, r) => {
      row.forEach((x, v) => {
        worst = Math.max(worst, Math.abs(x - ours[(from + r) * config.vocab_size + v]));
      });
    });
  }
  return worst;
}

describe("checkpoints against HF transformers", () => {
  before(() => initBackend());

  for (const [directory, model] of Object.entries(exported.models)) {
    describe(`${directory}, as exported by the engine`, () => {
      it("renders every conversation to the ids of AutoTokenizer.apply_chat_template, and decodes them alike", () => {
        for (const [i, c] of model.cases.entries()) {
          const { messages } = conversations[i];
          assert.equal(c.name, conversations[i].name);
          assert.equal(decodeTokens(c.ids), c.decoded, c.name);
          if (c.name === "special-token text inside content") continue;
          assert.deepEqual(renderChat(messages), c.ids, c.name);
        }
      });

      it("keeps special-token text typed into a message as bytes, where HF's tokenizer reads it as the tokens", () => {
        const i = model.cases.findIndex((c) => c.name === "special-token text inside content");
        const content = conversations[i].messages[0].content ?? "";
        const ours = renderChat(conversations[i].messages);
        assert.deepEqual(ours.slice(2, -2), encodeText(content));
        assert.ok(ours.length > model.cases[i].ids.length, "HF collapses <|end|><|assistant|> into two ids");
        assert.deepEqual(ours.slice(0, 2), model.cases[i].ids.slice(0, 2));
      });

      it("gives AutoModelForCausalLM's logits on the same ids", async () => {
        const checkpoint = await readHfCheckpoint(join(repoRoot, directory));
        for (const c of model.cases) {
          const diff = maxLogitDiff(checkpoint, c.ids, c.logits_from_position, c.logits);
          assert.ok(diff <= LOGIT_TOLERANCE, `${c.name}: max |logit diff| ${diff} ${STALE_HINT}`);
        }
      });

      it("generates greedily what model.generate(do_sample=False) generates, stopping at the same ids", async () => {
        const checkpoint = await readHfCheckpoint(join(repoRoot, directory));
        assert.deepEqual(checkpoint.eosTokenIds, model.eos_token_id);
        const engine = await EmbeddedInferenceEngine.load(join(repoRoot, directory));
        const results = await engine.generate(
          model.cases.map((c) => ({ promptTokens: c.ids, temperature: 0, maxTokens: c.greedy.length })),
        );
        for (const [i, c] of model.cases.entries())
          assert.deepEqual(results[i].outputTokens, c.greedy, `${c.name} ${STALE_HINT}`);
      });
    });
  }

  for (const [name, reference] of Object.entries(made.checkpoints)) {
    it(`reads ${name}, written by transformers' save_pretrained, and gives its logits`, async () => {
      const checkpoint = await readHfCheckpoint(join(fixtures, "made-by-transformers", name));
      const diff = maxLogitDiff(checkpoint, made.tokens, 0, reference.logits);
      assert.ok(diff <= LOGIT_TOLERANCE, `max |logit diff| ${diff}`);
    });
  }
});
