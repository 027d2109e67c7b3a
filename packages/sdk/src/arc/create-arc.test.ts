import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { CollectorTestServer, freePort } from "../test-doubles/collector-test-server.ts";
import { OpenAITestServer } from "../test-doubles/openai-test-server.ts";
import { createArc } from "./create-arc.ts";

let provider: OpenAITestServer;
const collectors: CollectorTestServer[] = [];

before(async () => {
  provider = await OpenAITestServer.start();
  provider.reply = () => ({ content: "fine" });
});

after(async () => {
  await Promise.all([provider.close(), ...collectors.map((c) => c.close())]);
});

async function collector(port = 0): Promise<CollectorTestServer> {
  const c = await CollectorTestServer.start(port);
  collectors.push(c);
  return c;
}

const body = { model: "m", messages: [{ role: "user" as const, content: "hi" }] };

describe("createArc options", () => {
  it("names the option at fault", () => {
    const base = { baseUrl: "http://127.0.0.1:9", apiKey: "k" };
    assert.throws(() => createArc({ apiKey: "k" }), {
      name: "ArcConfigError",
      message: "baseUrl: missing: pass { baseUrl } or set ARC_URL",
    });
    assert.throws(() => createArc({ ...base, baseUrl: "localhost:4318" }), { field: "baseUrl" });
    assert.throws(() => createArc({ baseUrl: base.baseUrl }), { field: "apiKey" });
    assert.throws(() => createArc({ ...base, maxQueueSize: 0 }), {
      message: "maxQueueSize: expected a positive integer, got 0",
    });
    assert.throws(() => createArc({ ...base, flushIntervalMs: -1 }), { field: "flushIntervalMs" });
  });

  it("reads ARC_URL and ARC_API_KEY from the environment", async () => {
    const c = await collector();
    const saved = { url: process.env.ARC_URL, key: process.env.ARC_API_KEY };
    process.env.ARC_URL = `${c.url}/`;
    process.env.ARC_API_KEY = "env-key";
    try {
      const arc = createArc({ flushIntervalMs: 10 });
      await arc.trace("from-env", () => 1);
      await arc.shutdown();
      assert.equal(c.requests[0]!.headers.authorization, "Bearer env-key");
      assert.equal(c.requests[0]!.path, "/v1/traces");
    } finally {
      process.env.ARC_URL = saved.url;
      process.env.ARC_API_KEY = saved.key;
      if (saved.url === undefined) delete process.env.ARC_URL;
      if (saved.key === undefined) delete process.env.ARC_API_KEY;
    }
  });

  it("sends nothing and needs no URL when disabled, while the wrapped client keeps working", async () => {
    const arc = createArc({ enabled: false });
    const client = arc.wrapOpenAI(new OpenAI({ baseURL: provider.url, apiKey: "k", maxRetries: 0 }));
    const answer = await arc.trace("off", () => client.chat.completions.create(body));
    assert.equal(answer.choices[0]!.message.content, "fine");
    assert.deepEqual(arc.stats(), { sent: 0, dropped: 0, failed: 0, retried: 0, pending: 0 });
    assert.equal(await arc.shutdown(), true);
  });
});

describe("when Arc is down", () => {
  it("leaves the agent unaffected and delivers the traces once Arc is back", async () => {
    const port = await freePort();
    const warnings: string[] = [];
    const arc = createArc({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: "k",
      flushIntervalMs: 10,
      initialBackoffMs: 20,
      maxBackoffMs: 50,
      onWarning: (m) => warnings.push(m),
    });
    const raw = new OpenAI({ baseURL: provider.url, apiKey: "k", maxRetries: 0 });
    const client = arc.wrapOpenAI(raw);
    for (let i = 0; i < 5; i++) {
      const [traced, plain] = await Promise.all([
        client.chat.completions.create({ ...body, stream: false }),
        raw.chat.completions.create(body),
      ]);
      assert.equal(traced.choices[0]!.message.content, plain.choices[0]!.message.content);
    }
    assert.equal(await arc.flush({ timeoutMs: 200 }), false);
    assert.equal(arc.stats().pending, 5);
    assert.match(warnings.join("\n"), /unreachable.*will retry/);
    const c = await collector(port);
    await c.waitFor(() => c.traces().length === 5, 5000);
    assert.equal(await arc.shutdown(), true);
    assert.deepEqual(arc.stats(), { ...arc.stats(), sent: 5, dropped: 0, failed: 0, pending: 0 });
  });

  it("keeps at most maxQueueSize traces and counts the ones it dropped", async () => {
    const port = await freePort();
    const arc = createArc({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: "k",
      maxQueueSize: 3,
      flushIntervalMs: 10,
      initialBackoffMs: 20,
      maxBackoffMs: 50,
      onWarning: () => {},
    });
    const client = arc.wrapOpenAI(new OpenAI({ baseURL: provider.url, apiKey: "k", maxRetries: 0 }));
    for (let i = 0; i < 8; i++) await arc.trace(`t${i}`, () => client.chat.completions.create(body));
    const c = await collector(port);
    assert.equal(await arc.shutdown({ timeoutMs: 5000 }), true);
    const names = c.traces().map((t) => t.name);
    assert.ok(names.length <= 3 && names.includes("t7"), `delivered ${names.join(",")}`);
    assert.equal(arc.stats().sent + arc.stats().dropped, 8);
    assert.ok(arc.stats().dropped >= 5);
  });
});

describe("shutdown and process exit", () => {
  it("flushes on shutdown; calls after it still work and their traces are counted as dropped", async () => {
    const c = await collector();
    const arc = createArc({ baseUrl: c.url, apiKey: "k", flushIntervalMs: 60_000 });
    const client = arc.wrapOpenAI(new OpenAI({ baseURL: provider.url, apiKey: "k", maxRetries: 0 }));
    await client.chat.completions.create(body);
    assert.equal(c.requests.length, 0, "the batching interval has not passed");
    assert.equal(await arc.shutdown(), true);
    assert.equal(c.traces().length, 1);
    const late = await client.chat.completions.create(body);
    assert.equal(late.choices[0]!.message.content, "fine");
    assert.equal(arc.stats().dropped, 1);
  });

  const agent = fileURLToPath(new URL("../__fixtures__/exit-agent.ts", import.meta.url));

  function runAgent(
    env: Record<string, string>,
  ): Promise<{ code: number | null; stdout: string; ms: number }> {
    const started = Date.now();
    const child = spawn(process.execPath, ["--import", "tsx", agent], {
      env: { ...process.env, ARC_API_KEY: "k", PROVIDER_URL: provider.url, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    return new Promise((resolve) =>
      child.on("exit", (code) => resolve({ code, stdout: stdout.trim(), ms: Date.now() - started })),
    );
  }

  it("sends what is buffered when a script ends without calling shutdown", async () => {
    const c = await collector();
    const run = await runAgent({ ARC_URL: c.url });
    assert.equal(run.code, 0);
    assert.deepEqual(JSON.parse(run.stdout), { content: "fine" });
    assert.deepEqual(
      c.traces().map((t) => t.name),
      ["exit-agent"],
    );
  });

  it("delivers before an awaited shutdown() returns, even when the send must wait for a retry", async () => {
    const c = await collector();
    let first = true;
    c.reply = () => {
      if (!first) return { status: 202 };
      first = false;
      return { status: 503 };
    };
    const run = await runAgent({ ARC_URL: c.url, CALL_SHUTDOWN: "1" });
    assert.equal(run.code, 0, "the process ended before shutdown() settled");
    assert.deepEqual(
      c.traces().map((t) => t.name),
      ["exit-agent"],
    );
  });

  it("never keeps a process alive much past exitFlushTimeoutMs when Arc is down", {
    timeout: 20_000,
  }, async () => {
    const port = await freePort();
    const run = await runAgent({ ARC_URL: `http://127.0.0.1:${port}`, EXIT_FLUSH_MS: "300" });
    assert.equal(run.code, 0);
    assert.deepEqual(JSON.parse(run.stdout), { content: "fine" });
    assert.ok(run.ms < 10_000, `exited after ${run.ms} ms`);
  });
});
