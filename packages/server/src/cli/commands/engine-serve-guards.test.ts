import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { main } from "../main.ts";

const arc = join(import.meta.dirname, "../../../../../bin/arc.mjs");
const hi = { model: "m", messages: [{ role: "user" as const, content: "hi" }], max_tokens: 2 };

/** Starts `arc engine serve` on a free port and resolves with the child and its base URL. */
function serveEngine(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; baseURL: string }> {
  const child = spawn(process.execPath, [arc, "engine", "serve", "--port", "0", ...args], {
    env: { ...process.env, ...env },
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

describe("arc engine serve --api-key, --max-body-bytes", () => {
  let dir: string;
  const children: ChildProcess[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "arc-engine-guards-"));
    assert.equal(await main(["engine", "init", "--size", "tiny", "--out", join(dir, "m")]), 0);
  });
  after(async () => {
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGINT");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("takes the key from ARC_ENGINE_API_KEY or --api-key, refusing other keys with 401, and bodies over the limit with 413", async () => {
    const [fromEnv, fromFlag] = await Promise.all([
      serveEngine(["--model", join(dir, "m"), "--max-body-bytes", "4096"], { ARC_ENGINE_API_KEY: "sk-env" }),
      serveEngine(["--model", join(dir, "m"), "--api-key", "sk-flag"], { ARC_ENGINE_API_KEY: "" }),
    ]);
    children.push(fromEnv.child, fromFlag.child);
    const client = (baseURL: string, apiKey: string) => new OpenAI({ baseURL, apiKey, maxRetries: 0 });
    const refused = (e: unknown) => e instanceof OpenAI.AuthenticationError && e.code === "invalid_api_key";

    await assert.rejects(client(fromEnv.baseURL, "sk-flag").chat.completions.create(hi), refused);
    await assert.rejects(client(fromFlag.baseURL, "sk-env").models.list(), refused);
    assert.equal(
      (await client(fromEnv.baseURL, "sk-env").chat.completions.create(hi)).object,
      "chat.completion",
    );
    assert.deepEqual(
      (await client(fromFlag.baseURL, "sk-flag").models.list()).data.map((m) => m.id),
      ["m"],
    );
    await assert.rejects(
      client(fromEnv.baseURL, "sk-env").chat.completions.create({
        ...hi,
        messages: [{ role: "user", content: "x".repeat(5000) }],
      }),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 413 && /4096 bytes/.test(e.message),
    );
  });

  it("refuses a limit that is not a positive whole number with exit code 2", async () => {
    assert.equal(await main(["engine", "serve", "--model", join(dir, "m"), "--max-body-bytes", "0"]), 2);
  });
});
