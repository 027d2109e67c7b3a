import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { startTestAppServer, type TestAppServer } from "../http/test-app-server.ts";
import type { Database } from "../store/database.ts";
import { databasesUnderTest } from "../store/test-databases.ts";

const pglite = databasesUnderTest()[0];

describe("OTLP/HTTP JSON from the official OpenTelemetry JS SDK", () => {
  let db: Database;
  let server: TestAppServer;
  let provider: BasicTracerProvider;

  before(async () => {
    db = await pglite.open();
    server = await startTestAppServer(db);
    const exporter = new OTLPTraceExporter({
      url: `${server.url}/v1/otlp/v1/traces`,
      headers: { authorization: `Bearer ${server.tenants[0].key}` },
    });
    provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "travel-agent" }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
  });
  after(async () => {
    await provider?.shutdown();
    await server?.close();
    await db?.close();
  });

  it("stores GenAI chat and tool spans as LLM and tool steps of one trace", async () => {
    const tracer = provider.getTracer("agent", "1.0.0");
    const root = tracer.startSpan("invoke_agent travel", {
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": "conv-9",
        "user.id": "u-42",
      },
    });
    const inRoot = trace.setSpan(context.active(), root);
    const chat = tracer.startSpan(
      "chat arc-small",
      {
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "arc",
          "gen_ai.request.model": "arc-small",
          "gen_ai.response.model": "arc-small-v2",
          "gen_ai.request.temperature": 0.3,
          "gen_ai.request.max_tokens": 128,
          "gen_ai.usage.input_tokens": 31,
          "gen_ai.usage.output_tokens": 9,
          "gen_ai.response.finish_reasons": ["tool_calls"],
          "gen_ai.system_instructions": JSON.stringify([
            { type: "text", content: "You are a travel agent." },
          ]),
          "gen_ai.input.messages": JSON.stringify([
            { role: "user", parts: [{ type: "text", content: "Weather in Oslo?" }] },
          ]),
          "gen_ai.output.messages": JSON.stringify([
            {
              role: "assistant",
              parts: [{ type: "tool_call", id: "call_1", name: "get_weather", arguments: { city: "Oslo" } }],
              finish_reason: "tool_call",
            },
          ]),
          "gen_ai.tool.definitions": JSON.stringify([
            { type: "function", function: { name: "get_weather", parameters: { type: "object" } } },
          ]),
        },
      },
      inRoot,
    );
    chat.end();
    const tool = tracer.startSpan(
      "execute_tool get_weather",
      {
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "get_weather",
          "gen_ai.tool.call.id": "call_1",
          "gen_ai.tool.call.arguments": JSON.stringify({ city: "Oslo" }),
          "gen_ai.tool.call.result": JSON.stringify({ tempC: -3 }),
        },
      },
      inRoot,
    );
    tool.setStatus({ code: SpanStatusCode.ERROR, message: "weather service timed out" });
    tool.end();
    root.end();
    await provider.forceFlush();

    const traceId = root.spanContext().traceId;
    const res = await fetch(`${server.url}/v1/traces/${traceId}`, {
      headers: { authorization: `Bearer ${server.tenants[0].key}` },
    });
    assert.equal(res.status, 200);
    const stored = await res.json();
    assert.equal(stored.name, "invoke_agent travel");
    assert.equal(stored.status, "error");
    assert.equal(stored.userId, "u-42");
    assert.equal(stored.sessionId, "conv-9");
    assert.equal(stored.steps.length, 3);

    const llm = stored.steps.find((s: { kind: string }) => s.kind === "llm");
    assert.equal(llm.id, chat.spanContext().spanId);
    assert.equal(llm.parentId, root.spanContext().spanId);
    assert.equal(llm.llm.modelRequested, "arc-small");
    assert.equal(llm.llm.modelServed, "arc-small-v2");
    assert.deepEqual(llm.llm.params, { temperature: 0.3, max_tokens: 128 });
    assert.deepEqual(llm.llm.usage, { promptTokens: 31, completionTokens: 9, totalTokens: 40 });
    assert.equal(llm.llm.finishReason, "tool_calls");
    assert.deepEqual(llm.llm.messages, [
      { role: "system", content: "You are a travel agent." },
      { role: "user", content: "Weather in Oslo?" },
    ]);
    assert.deepEqual(llm.llm.output.toolCalls, [
      { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
    ]);
    assert.equal(llm.llm.tools[0].function.name, "get_weather");
    assert.equal(llm.metadata["gen_ai.provider.name"], "arc");

    const toolStep = stored.steps.find((s: { kind: string }) => s.kind === "tool");
    assert.equal(toolStep.name, "get_weather");
    assert.deepEqual(toolStep.input, { city: "Oslo" });
    assert.deepEqual(toolStep.output, { tempC: -3 });
    assert.equal(toolStep.error.message, "weather service timed out");
  });

  it("answers OTLP partial success for spans it cannot use and stores the rest", async () => {
    const good = {
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      name: "chat",
      startTimeUnixNano: "1767225600000000000",
      endTimeUnixNano: "1767225601000000000",
      attributes: [{ key: "gen_ai.operation.name", value: { stringValue: "chat" } }],
    };
    const res = await fetch(`${server.url}/v1/otlp/v1/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.tenants[0].key}`, "content-type": "application/json" },
      body: JSON.stringify({
        resourceSpans: [{ scopeSpans: [{ spans: [good, { ...good, spanId: "xyz", name: "broken" }] }] }],
      }),
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.partialSuccess.rejectedSpans, 1);
    assert.match(body.partialSuccess.errorMessage, /span "broken": spanId must be 8 bytes as hex/);
    const stored = await fetch(`${server.url}/v1/traces/0af7651916cd43dd8448eb211c80319c`, {
      headers: { authorization: `Bearer ${server.tenants[0].key}` },
    });
    assert.equal((await stored.json()).steps[0].latencyMs, 1000);
  });
});
