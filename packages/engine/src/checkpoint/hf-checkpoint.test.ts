import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ArcError } from "@arc/core";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize, type LlamaConfig } from "../model/llama-config.ts";
import { CheckpointError } from "./checkpoint-error.ts";
import { readHfCheckpoint, writeHfCheckpoint } from "./hf-checkpoint.ts";
import { readSafetensors, writeSafetensors } from "./safetensors.ts";

const tiny = configForSize("tiny");
const tmp = () => mkdtemp(join(tmpdir(), "arc-ckpt-"));

describe("HF checkpoints", () => {
  it("writes the HF layout with HF tensor names and reads it back bit-exactly", async () => {
    const dir = await tmp();
    const weights = initWeights(tiny, 5);
    await writeHfCheckpoint(dir, tiny, weights);
    const config = JSON.parse(await readFile(join(dir, "config.json"), "utf8"));
    assert.deepEqual(config.architectures, ["LlamaForCausalLM"]);
    assert.equal(config.num_key_value_heads, 2);
    const tokConfig = JSON.parse(await readFile(join(dir, "tokenizer_config.json"), "utf8"));
    assert.match(tokConfig.chat_template, /add_generation_prompt/);
    const gen = JSON.parse(await readFile(join(dir, "generation_config.json"), "utf8"));
    assert.ok(Array.isArray(gen.eos_token_id));
    const raw = await readSafetensors(join(dir, "model.safetensors"));
    assert.ok(raw.has("model.layers.1.self_attn.q_proj.weight"));
    assert.ok(raw.has("model.layers.0.mlp.gate_proj.weight"));
    const back = await readHfCheckpoint(dir);
    assert.deepEqual(back.config, tiny);
    for (const [name, t] of weights) assert.deepEqual(back.tensors.get(name)!.data, t.data, name);
  });

  it("reads sharded bf16 checkpoints through model.safetensors.index.json", async () => {
    const dir = await tmp();
    const weights = initWeights(tiny, 6);
    await writeHfCheckpoint(dir, tiny, weights, { dtype: "BF16", maxShardBytes: 40_000 });
    const index = JSON.parse(await readFile(join(dir, "model.safetensors.index.json"), "utf8"));
    assert.ok(new Set(Object.values(index.weight_map)).size > 1, "expected several shards");
    const back = await readHfCheckpoint(dir);
    const w = weights.get("model.embed_tokens.weight")!.data;
    const r = back.tensors.get("model.embed_tokens.weight")!.data;
    for (let i = 0; i < w.length; i += 97) assert.ok(Math.abs(w[i] - r[i]) <= Math.abs(w[i]) / 128 + 1e-9);
  });

  it("loads a Qwen2 checkpoint with q/k/v biases", async () => {
    const dir = await tmp();
    const qwen: LlamaConfig = { ...tiny, architecture: "Qwen2ForCausalLM", attention_bias: true };
    await writeHfCheckpoint(dir, qwen, initWeights(qwen, 1), { dtype: "F16" });
    const back = await readHfCheckpoint(dir);
    assert.equal(back.config.architecture, "Qwen2ForCausalLM");
    assert.ok(back.tensors.has("model.layers.0.self_attn.v_proj.bias"));
  });

  it("names the architecture, the missing tensor and the wrong shape in load errors", async () => {
    const dir = await tmp();
    await writeHfCheckpoint(dir, tiny, initWeights(tiny, 1));
    const config = JSON.parse(await readFile(join(dir, "config.json"), "utf8"));
    await writeFile(
      join(dir, "config.json"),
      JSON.stringify({ ...config, architectures: ["GPT2LMHeadModel"] }),
    );
    await assert.rejects(readHfCheckpoint(dir), /unsupported architecture \["GPT2LMHeadModel"\]/);
    await writeFile(join(dir, "config.json"), JSON.stringify(config));
    const tensors = await readSafetensors(join(dir, "model.safetensors"));
    tensors.delete("model.layers.1.mlp.up_proj.weight");
    await writeSafetensors(join(dir, "model.safetensors"), tensors);
    await assert.rejects(readHfCheckpoint(dir), /missing tensor model\.layers\.1\.mlp\.up_proj\.weight/);
    tensors.set("model.layers.1.mlp.up_proj.weight", { shape: [3, 3], data: new Float32Array(9) });
    await writeSafetensors(join(dir, "model.safetensors"), tensors);
    await assert.rejects(
      readHfCheckpoint(dir),
      /model\.safetensors: tensor model\.layers\.1\.mlp\.up_proj\.weight has shape \[3, 3\], expected \[176, 64\]/,
    );
    await writeFile(join(dir, "model.safetensors"), "garbage!garbage!");
    await assert.rejects(readHfCheckpoint(dir), /model\.safetensors: corrupt safetensors header/);
  });

  it("reads RoPE's base from transformers 5's rope_parameters and names the RoPE variants it does not run", async () => {
    const dir = await tmp();
    await writeHfCheckpoint(dir, tiny, initWeights(tiny, 1));
    const {
      rope_theta: _,
      rope_scaling: __,
      ...config
    } = JSON.parse(await readFile(join(dir, "config.json"), "utf8"));
    const write = (fields: Record<string, unknown>) =>
      writeFile(join(dir, "config.json"), JSON.stringify({ ...config, ...fields }));
    await write({ rope_parameters: { rope_type: "default", rope_theta: 500000 } });
    assert.equal((await readHfCheckpoint(dir)).config.rope_theta, 500000);
    await write({ rope_parameters: { rope_type: "longrope", rope_theta: 500000, factor: 8 } });
    await assert.rejects(readHfCheckpoint(dir), /rope scaling type "longrope" is not supported/);
    await write({ rope_parameters: { rope_type: "llama3", rope_theta: 500000, factor: 8 } });
    await assert.rejects(readHfCheckpoint(dir), /rope scaling low_freq_factor: expected a positive number/);
    await write({ rope_parameters: { rope_type: "default" } });
    await assert.rejects(
      readHfCheckpoint(dir),
      /rope_parameters\.rope_theta: expected a number, got undefined/,
    );
    await write({ rope_theta: 1e6, use_sliding_window: true });
    await assert.rejects(readHfCheckpoint(dir), /use_sliding_window: expected false, got true/);
  });

  it("throws a CheckpointError (400) carrying the file and the tensor at fault", async () => {
    const dir = await tmp();
    await writeHfCheckpoint(dir, tiny, initWeights(tiny, 1));
    const tensors = await readSafetensors(join(dir, "model.safetensors"));
    tensors.set("model.norm.weight", { shape: [2], data: new Float32Array(2) });
    await writeSafetensors(join(dir, "model.safetensors"), tensors);
    const error = await readHfCheckpoint(dir).then(
      () => assert.fail("expected the wrong shape to be rejected"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof CheckpointError && ArcError.isInstance(error));
    assert.equal(error.name, "CheckpointError");
    assert.equal(error.statusCode, 400);
    assert.equal(error.file, join(dir, "model.safetensors"));
    assert.equal(error.tensor, "model.norm.weight");
    await assert.rejects(readHfCheckpoint(join(dir, "absent")), (e: unknown) => {
      assert.ok(e instanceof CheckpointError);
      assert.equal(e.file, join(dir, "absent", "config.json"));
      assert.equal(e.tensor, undefined);
      return true;
    });
  });

  it("loads a checkpoint with another tokenizer to run on token ids, and says so when asked for text", async () => {
    const dir = await tmp();
    await writeHfCheckpoint(dir, tiny, initWeights(tiny, 1));
    const foreign = {
      model: { type: "BPE", vocab: { a: 0, b: 1, ab: 2 }, merges: ["a b"] },
      added_tokens: [],
    };
    await writeFile(join(dir, "tokenizer.json"), JSON.stringify(foreign));
    await writeFile(join(dir, "generation_config.json"), JSON.stringify({ eos_token_id: 7 }));
    const read = await readHfCheckpoint(dir);
    assert.match(read.foreignTokenizer ?? "", /tokenizer\.json is not the byte-level tokenizer/);
    assert.deepEqual(read.eosTokenIds, [7]);
    const engine = await EmbeddedInferenceEngine.load(dir);
    await assert.rejects(
      engine.generate([{ messages: [{ role: "user", content: "hi" }] }]),
      /tokenizer\.json: cannot be read as a Hugging Face tokenizer.*give promptTokens/,
    );
    const [out] = await engine.generate([{ promptTokens: [1, 2, 3], maxTokens: 4, seed: 1 }]);
    assert.ok(out.outputTokens.length >= 1 && out.outputTokens.length <= 4);
    assert.equal(out.text, "");
  });
});
