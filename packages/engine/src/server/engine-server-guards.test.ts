import assert from "node:assert/strict";
import { request } from "node:http";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { type RunningEngineServer, startEngineServer } from "./start-engine-server.ts";

const tiny = configForSize("tiny");
const KEY = "sk-engine-test-key";
const hi = { model: "arc-tiny", messages: [{ role: "user" as const, content: "hi" }], max_tokens: 2 };

/** POSTs `size` bytes in 64 KiB chunks without a Content-Length (chunked), and returns the status and body. */
function postChunked(url: string, size: number, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "content-type": "application/json", ...headers } });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    const chunk = Buffer.alloc(64 * 1024, " ");
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

/**
 * Opens a raw connection, sends the head of a POST announcing `declared` body bytes, then one byte every 100 ms;
 * resolves with what the server wrote once it closes the connection (or after 20 s, when the test gives up).
 */
function trickle(port: number, path: string, declared: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => socket.destroy(), 20_000);
    socket.on("connect", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      timer = setInterval(() => socket.write(" "), 100);
    });
    socket.on("data", (d) => {
      answer += d;
    });
    socket.on("error", (error) => {
      if (
        (error as NodeJS.ErrnoException).code !== "ECONNRESET" &&
        (error as NodeJS.ErrnoException).code !== "EPIPE"
      )
        reject(error);
    });
    socket.on("close", () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve(answer);
    });
  });
}

describe("arc engine serve guards: API key, body limit, slow bodies", () => {
  let engine: EmbeddedInferenceEngine;
  let server: RunningEngineServer;

  before(async () => {
    engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1));
    server = await startEngineServer(engine, {
      modelId: "arc-tiny",
      apiKey: KEY,
      maxBodyBytes: 64 * 1024,
      requestTimeoutMs: 500,
    });
  });
  after(() => server?.close());

  it("answers 401 invalid_api_key in OpenAI's shape without the key or with another one, and serves the right key", async () => {
    const bare = await fetch(`${server.baseURL}/models`);
    assert.equal(bare.status, 401);
    const body = (await bare.json()) as { error: Record<string, unknown> };
    assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
    assert.equal(body.error.type, "invalid_request_error");
    assert.equal(body.error.code, "invalid_api_key");
    assert.match(String(body.error.message), /Authorization: Bearer/);

    const wrong = new OpenAI({ baseURL: server.baseURL, apiKey: "sk-wrong", maxRetries: 0 });
    await assert.rejects(
      wrong.chat.completions.create(hi),
      (e: unknown) => e instanceof OpenAI.AuthenticationError && e.code === "invalid_api_key",
    );
    assert.ok(!JSON.stringify(await (await fetch(`${server.baseURL}/models`)).json()).includes(KEY));

    const right = new OpenAI({ baseURL: server.baseURL, apiKey: KEY, maxRetries: 0 });
    assert.deepEqual(
      (await right.models.list()).data.map((m) => m.id),
      ["arc-tiny"],
    );
    const res = await right.chat.completions.create(hi);
    assert.equal(res.choices[0].message.role, "assistant");
  });

  it("answers 413 naming the limit for a body over it, with a Content-Length or streamed without one", async () => {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: KEY, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ ...hi, messages: [{ role: "user", content: "x".repeat(100_000) }] }),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 413 && /65536 bytes/.test(e.message),
    );
    const streamed = await postChunked(`${server.baseURL}/chat/completions`, 8 * 1024 * 1024, {
      authorization: `Bearer ${KEY}`,
    });
    assert.equal(streamed.status, 413);
    const body = JSON.parse(streamed.body) as { error: { message: string; type: string } };
    assert.match(body.error.message, /exceeds the limit of 65536 bytes/);
    assert.equal(body.error.type, "invalid_request_error");
  });

  it("refuses a body over the default limit of 10 MiB when none is set", async () => {
    const open = await startEngineServer(engine, { modelId: "arc-tiny" });
    try {
      const res = await postChunked(`${open.baseURL}/chat/completions`, 10 * 1024 * 1024 + 64 * 1024);
      assert.equal(res.status, 413);
      assert.match(res.body, /10485760 bytes/);
    } finally {
      await open.close();
    }
  });

  it("answers 408 to a body that trickles in slower than the request timeout, and keeps serving", async () => {
    const answer = await trickle(server.port, "/v1/chat/completions", 10_000);
    assert.match(answer, /^HTTP\/1\.1 408 /);
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: KEY, maxRetries: 0 });
    assert.equal((await client.models.list()).data.length, 1);
  });
});
