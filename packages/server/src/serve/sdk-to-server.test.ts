import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import { createArc } from "@arc/sdk";
import { OpenAITestServer } from "@arc/sdk/test-doubles";
import OpenAI from "openai";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "./start-server.ts";

/** The SDK wrapping the official `openai` client, shipping to a real `arc serve` (embedded PGlite, real HTTP). */
describe("SDK → arc serve, end to end", () => {
  let home: string;
  let provider: OpenAITestServer;
  let server: RunningServer;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), "arc-sdk-e2e-"));
    provider = await OpenAITestServer.start();
    server = await startServer(loadServerConfig({}, { home, port: 0 }));
  });
  after(async () => {
    await server?.close();
    await provider?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const fetchTrace = async (id: string) => {
    const res = await fetch(`${server.url}/v1/traces/${id}`, {
      headers: { authorization: `Bearer ${server.credentials?.tenantKey}` },
    });
    assert.equal(res.status, 200, `trace ${id} should be stored`);
    return res.json();
  };

  it("stores a traced episode field by field, streaming and tool calls included, and leaves results unchanged", async () => {
    const arc = createArc({
      baseUrl: server.url,
      apiKey: server.credentials?.tenantKey,
      flushIntervalMs: 20,
    });
    const plain = new OpenAI({ baseURL: provider.url, apiKey: "test" });
    const client = arc.wrapOpenAI(new OpenAI({ baseURL: provider.url, apiKey: "test" }));
    provider.reply = (body) =>
      body.tools
        ? { id: "fixed", toolCalls: [{ id: "call_7", name: "get_weather", arguments: '{"city":"Oslo"}' }] }
        : {
            id: "fixed",
            content: "Sunny and cold.",
            usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
          };
    const tools = [
      {
        type: "function" as const,
        function: {
          name: "get_weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
        },
      },
    ];
    const messages = [{ role: "user" as const, content: "Weather in Oslo?" }];

    let traceId = "";
    const streamed: string[] = [];
    const [toolAnswer, unwrappedToolAnswer] = await arc.trace(
      "weather-agent",
      async (handle) => {
        traceId = handle.traceId;
        const wrapped = await client.chat.completions.create({
          model: "arc-small",
          messages,
          tools,
          temperature: 0,
        });
        const unwrapped = await plain.chat.completions.create({
          model: "arc-small",
          messages,
          tools,
          temperature: 0,
        });
        const stream = await client.chat.completions.create({
          model: "arc-small",
          messages,
          stream: true,
          stream_options: { include_usage: true },
        });
        for await (const chunk of stream) streamed.push(chunk.choices[0]?.delta?.content ?? "");
        return [wrapped, unwrapped];
      },
      { userId: "u-1", env: "toolcall" },
    );
    await arc.shutdown();

    assert.deepEqual(toolAnswer, unwrappedToolAnswer, "the caller's result is what it is without Arc");
    assert.equal(streamed.join(""), "Sunny and cold.");
    const stored = await fetchTrace(traceId);
    assert.equal(stored.name, "weather-agent");
    assert.equal(stored.userId, "u-1");
    assert.equal(stored.env, "toolcall");
    const [toolStep, streamStep] = stored.steps;
    assert.equal(toolStep.kind, "llm");
    assert.equal(toolStep.llm.modelRequested, "arc-small");
    assert.equal(toolStep.llm.modelServed, toolAnswer.model);
    assert.deepEqual(toolStep.llm.messages, messages);
    assert.deepEqual(toolStep.llm.tools, tools);
    assert.deepEqual(toolStep.llm.params, { temperature: 0 });
    assert.equal(toolStep.llm.finishReason, "tool_calls");
    assert.deepEqual(toolStep.llm.output.toolCalls, toolAnswer.choices[0].message.tool_calls);
    assert.equal(streamStep.llm.output.content, "Sunny and cold.");
    assert.deepEqual(streamStep.llm.usage, { promptTokens: 11, completionTokens: 4, totalTokens: 15 });
    assert.equal(streamStep.llm.params.stream, true);
  });

  it("refuses to open an embedded database another server holds", async () => {
    await assert.rejects(startServer(loadServerConfig({}, { home, port: 0 })), {
      message: /is already open in this process/,
    });
  });

  it("keeps the agent working while Arc is down and delivers its traces once Arc is back", async () => {
    const port = Number(new URL(server.url).port);
    await server.close();
    const warnings: string[] = [];
    const arc = createArc({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: server.credentials?.tenantKey,
      flushIntervalMs: 10,
      initialBackoffMs: 20,
      maxBackoffMs: 100,
      onWarning: (m) => warnings.push(m),
    });
    const client = arc.wrapOpenAI(new OpenAI({ baseURL: provider.url, apiKey: "test" }));
    provider.reply = () => ({ content: "still working" });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await arc.trace(`while-down-${i}`, async (handle) => {
        ids.push(handle.traceId);
        return client.chat.completions.create({
          model: "arc-small",
          messages: [{ role: "user", content: `hi ${i}` }],
        });
      });
      assert.equal(answer.choices[0].message.content, "still working");
    }
    await waitUntil(() => warnings.length > 0, "the SDK to warn that Arc is unreachable", {
      timeoutMs: 5_000,
    });
    assert.ok(arc.stats().pending >= 5, "traces wait in the buffer");

    server = await startServer(loadServerConfig({}, { home, port }));
    try {
      await arc.flush();
      for (const id of ids) assert.equal((await fetchTrace(id)).steps.length, 1);
    } finally {
      await arc.shutdown();
    }
  });
});
