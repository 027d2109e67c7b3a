import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { startEngineServer } from "@arc/engine";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { SseAccumulator } from "./completion-summary.ts";
import { answerJson, headerValue, isWholeBody } from "./model-answer.ts";
import { upstreamBackend } from "./model-backend.ts";

describe("upstreamBackend", () => {
  it("sends the key from the named environment variable and the upstream's own model name", async () => {
    let seen: { headers: IncomingHttpHeaders; body: string } | null = null;
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (d) => {
        body += d;
      });
      req.on("end", () => {
        seen = { headers: req.headers, body };
        res.writeHead(200, { "content-type": "application/json" }).end('{"choices":[]}');
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as AddressInfo;
      const backend = upstreamBackend(
        { baseUrl: `http://127.0.0.1:${port}/v1/`, model: "hosted-model", apiKeyEnv: "HOSTED_KEY" },
        { HOSTED_KEY: "sk-test-123" },
      );
      const res = await backend.chat({ model: "arc", messages: [{ role: "user", content: "hi" }] });
      assert.equal(res.status, 200);
      assert.deepEqual(await answerJson(res), { choices: [] });
      assert.ok(seen);
      const got = seen as { headers: IncomingHttpHeaders; body: string };
      assert.equal(got.headers.authorization, "Bearer sk-test-123");
      assert.equal(JSON.parse(got.body).model, "hosted-model");
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("hands a streamed answer back as a stream of its server-sent events", async () => {
    const upstream = await startEngineServer(new AnswerBookEngine(new Map(), "streamed answer"), {
      modelId: "m",
    });
    try {
      const res = await upstreamBackend({ baseUrl: upstream.baseURL, model: "m" }).chat({
        messages: [{ role: "user", content: "x" }],
        stream: true,
      });
      assert.match(headerValue(res, "content-type"), /text\/event-stream/);
      const acc = new SseAccumulator();
      assert.ok(!isWholeBody(res.body), "a stream, not a body read whole");
      for await (const chunk of res.body) acc.push(chunk);
      assert.equal(acc.summary().content, "streamed answer");
      assert.equal(acc.summary().finishReason, "stop");
    } finally {
      await upstream.close();
    }
  });

  it("rejects with the connection error when the upstream is down", async () => {
    const backend = upstreamBackend({ baseUrl: "http://127.0.0.1:1/v1", model: "m" });
    await assert.rejects(backend.chat({ messages: [] }), /ECONNREFUSED/);
  });
});
