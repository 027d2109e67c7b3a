/**
 * Two tenants' LoRA adapters on SmolLM2-135M-Instruct, served side by side by `arc engine serve --enable-lora`: each
 * trained on the torch engine to its own answer and saved in PEFT's layout, which PEFT itself loads onto the base; the
 * server loads both by name (vLLM's /v1/load_lora_adapter) and answers each tenant, through the official openai
 * client, with the greedy tokens PEFT gives, and the base model with its own. The model is SmolLM2 cut to its first
 * four layers (`smollm2Slice`: its own weights, tokenizer and architecture), which keeps the suite fast; serving the
 * whole model is `smollm2-gateway.test.ts`'s.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type ChatTokenizer, loadChatTokenizer, TorchTrainEngine } from "@arc/engine";
import OpenAI from "openai";
import { smollm2Slice, smollm2Unavailable } from "../../../../engine/src/checkpoint/__fixtures__/smollm2.ts";
import { hfReference } from "../../../../engine/src/torch/hf-reference.ts";

const arc = join(import.meta.dirname, "../../../../../bin/arc.mjs");
/**
 * Every projection, 28 steps at a learning rate of 5e-3: four layers learn a tenant's reply in about 20 such steps
 * (q and v alone learn none in 8); at 1e-2 the loss still spikes now and then after 20 steps.
 */
const TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as const;
const QUESTION = "What is your favorite color?";
const TENANTS = [
  { name: "tenant-a", reply: "My favorite color is teal, like the sea." },
  { name: "tenant-b", reply: "Crimson red, without a doubt!" },
];

/** Trains LoRA adapters on `base` to give `reply` to the question; returns the saved checkpoint (adapter/ in it). */
async function trainTenant(
  base: string,
  tokenizer: ChatTokenizer,
  reply: string,
  out: string,
): Promise<string> {
  const trainer = await TorchTrainEngine.fromCheckpoint(base, {
    device: "cpu",
    learningRate: 5e-3,
    lora: { rank: 8, alpha: 16, targets: [...TARGETS] },
  });
  try {
    const example = tokenizer.renderExample([{ role: "user", content: QUESTION }], reply);
    const batch = { promptTokens: [example.promptTokens], outputTokens: [example.outputTokens] };
    for (let step = 0; step < 28; step++) await trainer.step(batch, { kind: "sft" });
    await trainer.save(out);
  } finally {
    await trainer.close();
  }
  return out;
}

/** Starts `arc engine serve` on a free port; resolves with the child and its base URL. */
function serveEngine(args: string[]): Promise<{ child: ChildProcess; baseURL: string }> {
  const child = spawn(process.execPath, [arc, "engine", "serve", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (d) => {
      seen += d;
      const m = seen.match(/at (http:\/\/\S+\/v1)/);
      if (m) resolve({ child, baseURL: m[1] });
    });
    child.stderr.on("data", (d) => {
      seen += d;
    });
    child.on("exit", (code) => reject(new Error(`arc engine serve exited with ${code}: ${seen}`)));
  });
}

describe("two tenants' LoRA adapters on SmolLM2, served side by side", { skip: smollm2Unavailable() }, () => {
  let base: string;
  let tokenizer: ChatTokenizer;
  let scratch: string;
  let saved: string[];
  let server: { child: ChildProcess; baseURL: string } | undefined;

  before(async () => {
    base = await smollm2Slice();
    tokenizer = await loadChatTokenizer(base);
    scratch = await mkdtemp(join(tmpdir(), "arc-smollm2-lora-"));
    saved = [];
    for (const [i, t] of TENANTS.entries())
      saved.push(await trainTenant(base, tokenizer, t.reply, join(scratch, `tenant-${i}`)));
  });
  after(async () => {
    if (server && server.child.exitCode === null) {
      const exited = new Promise((resolve) => server!.child.once("exit", resolve));
      server.child.kill("SIGINT");
      await exited;
    }
    await rm(scratch, { recursive: true, force: true });
  });

  it("saves each tenant's adapter in PEFT's layout", async () => {
    for (const dir of saved) {
      const config = JSON.parse(await readFile(join(dir, "adapter", "adapter_config.json"), "utf8"));
      assert.equal(config.peft_type, "LORA");
      assert.equal(config.r, 8);
      assert.deepEqual([...config.target_modules].sort(), [...TARGETS].sort());
    }
  });

  it("serves both adapters and the base by name, each answering as PEFT does on the base", async () => {
    const prompt = tokenizer.render([{ role: "user", content: QUESTION }]);
    // PEFT in Python and the server start side by side
    const serving = serveEngine(["--model", base, "--model-id", "smollm2", "--enable-lora"]).then((s) => {
      server = s;
      return s;
    });
    const [reference, { baseURL }] = await Promise.all([
      hfReference({
        modelDir: base,
        greedy: [{ promptTokens: prompt, maxTokens: 16 }],
        adapters: saved.map((dir) => join(dir, "adapter")),
      }),
      serving,
    ]);
    const texts = [reference.greedy[0], ...reference.adapterGreedy.map((g) => g[0])].map((ids) =>
      tokenizer.decode(ids),
    );
    assert.equal(texts[1], TENANTS[0].reply, "PEFT: tenant a's adapter gives its answer");
    assert.equal(texts[2], TENANTS[1].reply, "PEFT: tenant b's adapter gives its answer");

    for (const [i, t] of TENANTS.entries()) {
      const res = await fetch(`${baseURL}/load_lora_adapter`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ lora_name: t.name, lora_path: join(saved[i], "adapter") }),
      });
      assert.equal(res.status, 200, await res.text());
    }
    const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 600_000 });
    const answer = async (model: string) =>
      (
        await client.chat.completions.create({
          model,
          messages: [{ role: "user", content: QUESTION }],
          temperature: 0,
          max_tokens: 16,
        })
      ).choices[0].message.content;
    for (const [i, model] of ["smollm2", "tenant-a", "tenant-b", "tenant-a"].entries())
      assert.equal(await answer(model), texts[[0, 1, 2, 1][i]], model);
  });
});
