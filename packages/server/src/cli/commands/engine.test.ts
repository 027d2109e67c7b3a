import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import OpenAI from "openai";
import { main } from "../main.ts";

const arc = join(import.meta.dirname, "../../../../../bin/arc.mjs");

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
    const child = spawn(process.execPath, [arc, "engine", "serve", "--model", out, "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const baseURL = await new Promise<string>((resolve, reject) => {
        let seen = "";
        child.stdout.on("data", (d) => {
          seen += d;
          const m = seen.match(/at (http:\/\/\S+\/v1)/);
          if (m) resolve(m[1]);
        });
        child.on("exit", (code) => reject(new Error(`arc engine serve exited with ${code}: ${seen}`)));
      });
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
      child.kill("SIGINT");
    }
    const code = child.exitCode ?? (await new Promise((resolve) => child.on("exit", resolve)));
    assert.equal(code, 0);
  });
});
