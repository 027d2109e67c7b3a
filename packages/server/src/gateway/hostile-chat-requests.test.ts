import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { configForSize, initWeights, writeHfCheckpoint } from "@arc/engine";
import { OpenAITestServer } from "@arc/sdk/test-doubles";
import OpenAI from "openai";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { getTrace, listTraces } from "../store/trace-store.ts";
import { ModelPool } from "./model-pool.ts";

const hi = [{ role: "user", content: "hi" }];

/** Bodies a client may send that OpenAI refuses with a 400, and the `param` the answer must name. */
const badBodies: [name: string, body: Record<string, unknown>, param: string][] = [
  ["a null message", { messages: [null] }, "messages[0]"],
  ["a message without a role", { messages: [{ content: "hi" }] }, "messages[0].role"],
  ["numeric content", { messages: [{ role: "user", content: 5 }] }, "messages[0].content"],
  ["a null content part", { messages: [{ role: "user", content: [null] }] }, "messages[0].content[0]"],
  [
    "a text part with numeric text",
    { messages: [{ role: "user", content: [{ type: "text", text: 3 }] }] },
    "messages[0].content[0].text",
  ],
  [
    "a null tool call",
    { messages: [{ role: "assistant", content: null, tool_calls: [null] }, ...hi] },
    "messages[0].tool_calls[0]",
  ],
  ["seed 1e300", { messages: hi, seed: 1e300 }, "seed"],
  ["a fractional seed", { messages: hi, seed: 1.5 }, "seed"],
  ["max_tokens 1e12", { messages: hi, max_tokens: 1e12 }, "max_tokens"],
  ["max_completion_tokens 0", { messages: hi, max_completion_tokens: 0 }, "max_completion_tokens"],
  ["n -1", { messages: hi, n: -1 }, "n"],
  ["n 1e9", { messages: hi, n: 1e9 }, "n"],
  ["temperature as text", { messages: hi, temperature: "hot" }, "temperature"],
  ["top_p 2", { messages: hi, top_p: 2 }, "top_p"],
  ["frequency_penalty 1e300", { messages: hi, frequency_penalty: 1e300 }, "frequency_penalty"],
  ["top_logprobs 1e9", { messages: hi, logprobs: true, top_logprobs: 1e9 }, "top_logprobs"],
  ["tools [null]", { messages: hi, tools: [null] }, "tools[0]"],
  ["tools as an object", { messages: hi, tools: {} }, "tools"],
  ["stop as a number", { messages: hi, stop: 5 }, "stop"],
  ["stop holding a number", { messages: hi, stop: ["a", 5] }, "stop[1]"],
  ["five stop strings", { messages: hi, stop: ["a", "b", "c", "d", "e"] }, "stop"],
  ["stream as text", { messages: hi, stream: "yes" }, "stream"],
  ["stream_options as text", { messages: hi, stream: true, stream_options: "x" }, "stream_options"],
  ["a numeric model", { model: 5, messages: hi }, "model"],
  ["a numeric user", { messages: hi, user: 5 }, "user"],
  ["a 300-character user", { messages: hi, user: "u".repeat(300) }, "user"],
];

for (const target of databasesUnderTest()) {
  describe(`gateway under hostile chat requests (${target.name})`, { skip: target.skip }, () => {
    let db: Database;
    let dir: string;
    let provider: OpenAITestServer;
    let embedded: ReleaseTestServer;
    let upstream: ReleaseTestServer;

    before(async () => {
      db = await target.open();
      dir = await mkdtemp(join(tmpdir(), "arc-gateway-hostile-"));
      const config = configForSize("tiny");
      await writeHfCheckpoint(join(dir, "tiny"), config, initWeights(config, 1));
      embedded = await startReleaseTestServer(db, { pool: new ModelPool() });
      await registerModelVersion(db, embedded.tenantId, {
        name: "tiny",
        status: "promoted",
        artifactDir: join(dir, "tiny"),
        actor: "test",
      });
      provider = await OpenAITestServer.start();
      upstream = await startReleaseTestServer(db, { pool: new ModelPool() });
      await registerModelVersion(db, upstream.tenantId, {
        name: "remote",
        status: "promoted",
        upstream: { baseUrl: provider.url, model: "m" },
        actor: "test",
      });
    });

    after(async () => {
      await embedded?.close();
      await upstream?.close();
      await provider?.close();
      await db?.close();
      await rm(dir, { recursive: true, force: true });
    });

    const post = (server: ReleaseTestServer, body: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json", ...headers },
        body,
      });

    it("answers messages:[null] with 400 naming messages[0] in OpenAI's shape, on both backends, through the openai client", async () => {
      for (const server of [embedded, upstream]) {
        const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 });
        await assert.rejects(
          client.chat.completions.create({ model: "arc", messages: [null as never] }),
          (error: unknown) => {
            assert.ok(error instanceof OpenAI.BadRequestError, String(error));
            assert.equal(error.param, "messages[0]");
            assert.equal(error.code, "invalid_type");
            assert.match(error.message, /messages\[0\]: expected a message object, got null/);
            return true;
          },
        );
      }
    });

    it("answers a prompt longer than the embedded model's context with 400 context_length_exceeded", async () => {
      const client = new OpenAI({ baseURL: `${embedded.url}/v1`, apiKey: embedded.key, maxRetries: 0 });
      await assert.rejects(
        client.chat.completions.create({
          model: "arc",
          messages: [{ role: "user", content: "a".repeat(130_000) }],
        }),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.BadRequestError, String(error));
          assert.equal(error.code, "context_length_exceeded");
          assert.equal(error.param, "messages");
          assert.match(error.message, /maximum context length is 512 tokens.*at least 130004 tokens/);
          return true;
        },
      );
    });

    it("answers every malformed or out-of-range field with 400 naming it, before any model is called", async () => {
      const asked = provider.requests.length;
      for (const server of [embedded, upstream]) {
        for (const [name, body, param] of badBodies) {
          const res = await post(server, JSON.stringify({ model: "arc", ...body }));
          const answer = (await res.json()) as { error: Record<string, unknown> };
          assert.equal(res.status, 400, `${name}: ${JSON.stringify(answer)}`);
          assert.equal(answer.error.param, param, name);
          assert.equal(answer.error.type, "invalid_request_error", name);
          assert.ok(
            String(answer.error.message).startsWith(`${param}: `),
            `${name}: ${answer.error.message}`,
          );
        }
      }
      assert.equal(provider.requests.length, asked, "a refused request reached the model");
    });

    it("answers headers longer than the trace fields they fill with 400 naming the header", async () => {
      for (const [header, max] of [
        ["x-arc-user", 256],
        ["x-arc-session", 256],
        ["x-arc-env", 128],
      ] as const) {
        const res = await post(upstream, JSON.stringify({ model: "arc", messages: hi }), {
          [header]: "h".repeat(max + 1),
        });
        const answer = (await res.json()) as { error: Record<string, unknown> };
        assert.equal(res.status, 400, `${header}: ${JSON.stringify(answer)}`);
        assert.equal(answer.error.param, header);
      }
    });

    it("answers a body it cannot read in OpenAI's error shape", async () => {
      const res = await post(upstream, '{"messages": [');
      assert.equal(res.status, 400);
      const { error } = (await res.json()) as { error: Record<string, unknown> };
      assert.equal(error.type, "invalid_request_error");
      assert.equal(error.code, null, "OpenAI gives a body that is not JSON no code");
      assert.equal(error.param, null);
      assert.match(String(error.message), /not valid JSON/);
    });

    it("stores the trace of an answer holding NUL and a lone surrogate, with token counts beyond int32 left out", async () => {
      provider.reply = () => ({
        content: "a\u0000b\ud800",
        usage: { prompt_tokens: 3e9, completion_tokens: 2, total_tokens: 3e9 },
      });
      try {
        const client = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: upstream.key, maxRetries: 0 });
        const reply = await client.chat.completions.create({
          model: "arc",
          messages: [{ role: "user", content: "unstorable answer" }],
        });
        assert.equal(
          reply.choices[0].message.content,
          "a\u0000b\ud800",
          "the client gets the answer untouched",
        );
        await upstream.release.gateway.flush();
        const page = await listTraces(db, upstream.tenantId, { limit: 200 });
        const traces = await Promise.all(page.data.map((t) => getTrace(db, upstream.tenantId, t.id)));
        const trace = traces.find((t) => t.input === "unstorable answer");
        assert.ok(trace, "the call's trace was not stored");
        assert.equal(trace.output, "a\ufffdb\ufffd");
        assert.deepEqual(trace.steps[0].llm?.usage, { completionTokens: 2 });
      } finally {
        provider.reply = () => ({});
      }
    });

    it("keeps two calls of one SDK trace that name no step as two steps", async () => {
      const headers = { "x-arc-trace-id": "sdk-trace-two-calls" };
      for (const content of ["first call", "second call"]) {
        const body = JSON.stringify({ model: "arc", messages: [{ role: "user", content }] });
        assert.equal((await post(upstream, body, headers)).status, 200);
      }
      await upstream.release.gateway.flush();
      const trace = await getTrace(db, upstream.tenantId, "sdk-trace-two-calls");
      assert.equal(trace.steps.length, 2);
      assert.notEqual(trace.steps[0].id, trace.steps[1].id);
    });
  });
}
