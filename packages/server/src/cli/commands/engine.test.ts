import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, mock } from "node:test";
import { torchPython } from "@arc/engine";
import OpenAI from "openai";
import { pythonLacks, skipWithout } from "../../../../../scripts/required-parts.mjs";
import { main } from "../main.ts";

const arc = join(import.meta.dirname, "../../../../../bin/arc.mjs");
const BPE_MODEL = join(import.meta.dirname, "../../../../../models/toolcall-bpe");
const noTorch = skipWithout("python", pythonLacks(torchPython(), ["torch", "transformers", "peft"]));

/** `arc engine serve` in a child process, and the base URL it prints once it listens. */
function serveProcess(flags: string[]) {
  const child = spawn(process.execPath, [arc, "engine", "serve", ...flags, "--port", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const baseURL = new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (d) => {
      seen += d;
      const m = seen.match(/at (http:\/\/\S+\/v1)/);
      if (m) resolve(m[1]);
    });
    child.stderr.on("data", (d) => {
      seen += d;
    });
    child.on("exit", (code) => reject(new Error(`arc engine serve exited with ${code}: ${seen}`)));
  });
  return { child, baseURL };
}

/** Interrupts a served engine and waits for its exit code. */
async function interrupt(child: ReturnType<typeof spawn>): Promise<number | null> {
  child.kill("SIGINT");
  return child.exitCode ?? (await new Promise((resolve) => child.on("exit", resolve)));
}

describe("arc engine", () => {
  it("init writes a model of the requested size in the HF layout", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "arc-cli-")), "tiny");
    assert.equal(await main(["engine", "init", "--size", "tiny", "--out", out, "--dtype", "bf16"]), 0);
    const config = JSON.parse(await readFile(join(out, "config.json"), "utf8"));
    assert.deepEqual(config.architectures, ["LlamaForCausalLM"]);
    assert.equal(config.torch_dtype, "bfloat16");
    assert.equal(config.hidden_size, 64);
  });

  it("rejects an unknown size or subcommand with exit code 2", async () => {
    assert.equal(await main(["engine", "init", "--size", "huge", "--out", "/tmp/x"]), 2);
    assert.equal(await main(["engine", "train"]), 2);
  });

  it("serve answers the official openai client, streaming and not, until interrupted", async () => {
    const out = join(await mkdtemp(join(tmpdir(), "arc-cli-")), "m");
    assert.equal(await main(["engine", "init", "--size", "tiny", "--out", out]), 0);
    const { child, baseURL: listening } = serveProcess(["--model", out]);
    try {
      const baseURL = await listening;
      const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
      const res = await client.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 4,
        seed: 1,
      });
      assert.equal(res.choices[0].message.role, "assistant");
      assert.ok(res.usage!.completion_tokens >= 1 && res.usage!.completion_tokens <= 4);
      const stream = await client.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 4,
        seed: 1,
        stream: true,
      });
      let finish: string | null = null;
      for await (const chunk of stream) finish = chunk.choices[0]?.finish_reason ?? finish;
      assert.ok(finish === "length" || finish === "stop");
    } finally {
      assert.equal(await interrupt(child), 0);
    }
  });

  it("serve --engine torch answers the openai client from the PyTorch worker, streaming token by token", {
    skip: noTorch,
  }, async () => {
    const { child, baseURL: listening } = serveProcess([
      "--model",
      BPE_MODEL,
      "--engine",
      "torch",
      "--device",
      "cpu",
    ]);
    try {
      const client = new OpenAI({ baseURL: await listening, apiKey: "unused", maxRetries: 0 });
      const request = {
        model: "toolcall-bpe",
        messages: [{ role: "user" as const, content: "What is the weather in Paris?" }],
        max_tokens: 24,
        temperature: 0,
      };
      const whole = await client.chat.completions.create(request);
      const text = whole.choices[0].message.content ?? "";
      assert.ok(text.length > 0, "an answer");
      const stream = await client.chat.completions.create({ ...request, stream: true });
      const deltas: string[] = [];
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta?.content;
        if (delta) deltas.push(delta);
      }
      assert.equal(deltas.join(""), text);
      assert.ok(deltas.length > 2, `the answer came in ${deltas.length} pieces`);
    } finally {
      assert.equal(await interrupt(child), 0);
    }
  });

  it("serve names a wrong --engine or --dtype", async () => {
    const err = mock.method(console, "error", () => {});
    try {
      assert.equal(await main(["engine", "serve", "--model", BPE_MODEL, "--engine", "vllm"]), 2);
      assert.equal(
        await main(["engine", "serve", "--model", BPE_MODEL, "--engine", "torch", "--dtype", "f8"]),
        2,
      );
      const printed = err.mock.calls.map((c) => c.arguments.join(" ")).join("\n");
      assert.match(printed, /--engine: expected embedded or torch, got "vllm"/);
      assert.match(printed, /--dtype: expected f32, bf16 or f16, got "f8"/);
    } finally {
      err.mock.restore();
    }
  });
});
