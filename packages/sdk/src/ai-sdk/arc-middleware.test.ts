import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, type ModelMessage, Output, streamText, tool, wrapLanguageModel } from "ai";
import { type Arc, createArc } from "../arc/create-arc.ts";
import { CollectorTestServer } from "../test-doubles/collector-test-server.ts";
import { OpenAITestServer } from "../test-doubles/openai-test-server.ts";
import type { WireStep, WireTrace } from "../wire/wire-types.ts";

// The real `ai` package and its real OpenAI provider, over HTTP to the OpenAI TEST DOUBLE (no hosted model here).
let provider: OpenAITestServer;
let collector: CollectorTestServer;
let arc: Arc;
let openai: ReturnType<typeof createOpenAI>;

before(async () => {
  provider = await OpenAITestServer.start();
  collector = await CollectorTestServer.start();
  arc = createArc({ baseUrl: collector.url, apiKey: "tenant-key", flushIntervalMs: 10, onWarning: () => {} });
  openai = createOpenAI({ baseURL: provider.url, apiKey: "provider-key" });
});

after(async () => {
  await arc.shutdown();
  await Promise.all([provider.close(), collector.close()]);
});

beforeEach(async () => {
  await arc.flush();
  collector.requests.length = 0;
  provider.reply = () => ({});
});

const traced = () =>
  wrapLanguageModel({ model: openai.chat("gpt-test"), middleware: arc.languageModelMiddleware() });

async function onlyStep(): Promise<{ trace: WireTrace; step: WireStep }> {
  assert.equal(await arc.flush(), true);
  const traces = collector.traces();
  assert.equal(traces.length, 1, `expected one trace, got ${traces.length}`);
  assert.equal(traces[0]!.steps.length, 1);
  return { trace: traces[0]!, step: traces[0]!.steps[0]! };
}

const PNG = Uint8Array.from(
  Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
    "base64",
  ),
);

const weather = tool({
  description: "Current weather in a city",
  inputSchema: jsonSchema<{ city: string }>({
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  }),
});

/** A conversation with an image, an earlier tool call and its result. */
const conversation: ModelMessage[] = [
  {
    role: "user",
    content: [
      { type: "text", text: "Weather where this was taken?" },
      { type: "image", image: PNG, mediaType: "image/png" },
    ],
  },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "call_1", toolName: "get_weather", input: { city: "Oslo" } }],
  },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "call_1",
        toolName: "get_weather",
        output: { type: "json", value: { c: 4 } },
      },
    ],
  },
];

describe("arc.languageModelMiddleware() with the Vercel AI SDK", () => {
  it("records generateText's call as an llm step in OpenAI's chat shape, and returns the model's answer as it is", async () => {
    provider.reply = () => ({
      content: "4 degrees in Oslo.",
      usage: { prompt_tokens: 31, completion_tokens: 6, total_tokens: 37 },
    });
    const plain = await generateText({
      model: openai.chat("gpt-test"),
      system: "Be brief.",
      messages: conversation,
      tools: { get_weather: weather },
    });
    const result = await arc.trace("weather", () =>
      generateText({
        model: traced(),
        system: "Be brief.",
        messages: conversation,
        tools: { get_weather: weather },
        maxOutputTokens: 40,
        temperature: 0.2,
      }),
    );
    assert.equal(result.text, plain.text);
    assert.equal(result.text, "4 degrees in Oslo.");
    const { trace, step } = await onlyStep();
    assert.equal(trace.name, "weather");
    assert.equal(step.kind, "llm");
    assert.equal(step.name, "languageModel.doGenerate");
    assert.equal(step.metadata?.provider, "openai.chat");
    const llm = step.llm!;
    assert.equal(llm.modelRequested, "gpt-test");
    assert.equal(llm.modelServed, "gpt-test-served");
    assert.deepEqual(llm.messages, [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "Weather where this was taken?" },
          {
            type: "image_url",
            image_url: { url: `data:image/png;base64,${Buffer.from(PNG).toString("base64")}` },
          },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"c":4}' },
    ]);
    assert.deepEqual(llm.tools, [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Current weather in a city",
          parameters: {
            type: "object",
            properties: { city: { type: "string" } },
            required: ["city"],
            additionalProperties: false,
          },
        },
      },
    ]);
    assert.equal(llm.params?.max_tokens, 40);
    assert.equal(llm.params?.temperature, 0.2);
    assert.deepEqual(llm.output, { content: "4 degrees in Oslo." });
    assert.equal(llm.finishReason, "stop");
    assert.deepEqual(llm.usage, { promptTokens: 31, completionTokens: 6, totalTokens: 37 });
    assert.ok(typeof step.latencyMs === "number" && step.endedAt);
  });

  it("records a tool call the model makes, with its arguments as the model wrote them", async () => {
    provider.reply = () => ({
      content: null,
      toolCalls: [{ id: "call_9", name: "get_weather", arguments: '{"city":"Bergen"}' }],
    });
    const result = await arc.trace("weather", () =>
      generateText({ model: traced(), prompt: "Weather in Bergen?", tools: { get_weather: weather } }),
    );
    assert.deepEqual(
      result.toolCalls.map((c) => [c.toolName, c.input]),
      [["get_weather", { city: "Bergen" }]],
    );
    const { step } = await onlyStep();
    assert.deepEqual(step.llm?.output?.toolCalls, [
      { id: "call_9", type: "function", function: { name: "get_weather", arguments: '{"city":"Bergen"}' } },
    ]);
    assert.equal(step.llm?.finishReason, "tool_calls");
  });

  it("records a structured-output call's schema as OpenAI's response_format", async () => {
    provider.reply = () => ({ content: '{"city":"Oslo","celsius":4}' });
    const schema = {
      type: "object",
      properties: { city: { type: "string" }, celsius: { type: "number" } },
      required: ["city", "celsius"],
      additionalProperties: false,
    } as const;
    const result = await arc.trace("weather", () =>
      generateText({
        model: traced(),
        prompt: "Weather in Oslo, as JSON",
        output: Output.object({ schema: jsonSchema<{ city: string; celsius: number }>(schema) }),
      }),
    );
    assert.deepEqual(result.output, { city: "Oslo", celsius: 4 });
    const { step } = await onlyStep();
    assert.deepEqual(step.llm?.params?.response_format, {
      type: "json_schema",
      json_schema: { name: "response", schema },
    });
  });

  it("records streamText's call once the caller has read the stream, with the text as streamed", async () => {
    provider.reply = () => ({
      content: "It is cold and clear.",
      pieceSize: 4,
      usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 },
    });
    const text = await arc.trace("weather", async () => {
      const stream = streamText({ model: traced(), prompt: "Weather in Tromsø?" });
      let read = "";
      for await (const piece of stream.textStream) read += piece;
      return read;
    });
    assert.equal(text, "It is cold and clear.");
    const { step } = await onlyStep();
    assert.equal(step.name, "languageModel.doStream");
    assert.equal(step.llm?.output?.content, "It is cold and clear.");
    assert.equal(step.llm?.finishReason, "stop");
    assert.deepEqual(step.llm?.usage, { promptTokens: 9, completionTokens: 5, totalTokens: 14 });
  });

  it("records a failed call with its error, and the caller gets the error the model gave", async () => {
    provider.reply = () => ({
      error: { status: 400, message: "context too long", code: "context_length_exceeded" },
    });
    await assert.rejects(
      arc.trace("weather", () => generateText({ model: traced(), prompt: "hi", maxRetries: 0 })),
      (error: Error) => error.message.includes("context too long"),
    );
    const { step } = await onlyStep();
    assert.ok(step.error, "the step carries the error");
    assert.match(String(step.error?.message), /context too long/);
  });

  it("records a stream the caller cancels with what was read, and marks it closed early", async () => {
    // TEST DOUBLE of a provider's doStream: three text pieces, of which the caller reads one
    const parts = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Cold " },
      { type: "text-delta", id: "t", delta: "and " },
      { type: "text-delta", id: "t", delta: "clear." },
    ];
    const middleware = arc.languageModelMiddleware();
    await arc.trace("weather", async () => {
      const { stream } = await middleware.wrapStream({
        doGenerate: async () => ({}),
        doStream: async () => ({
          stream: new ReadableStream({
            start(controller) {
              for (const part of parts) controller.enqueue(part);
            },
          }),
        }),
        params: { prompt: [{ role: "user", content: [{ type: "text", text: "Weather?" }] }] },
        model: { provider: "test", modelId: "m" },
      });
      const reader = stream.getReader();
      for (let read = 0; read < 3; read++) await reader.read();
      await reader.cancel("the user navigated away");
    });
    const { step } = await onlyStep();
    assert.equal(step.llm?.output?.content, "Cold ");
    assert.equal(step.metadata?.streamClosedEarly, true);
  });

  it("declares ai 6's middleware specification, or ai 7's when asked", () => {
    assert.equal(arc.languageModelMiddleware().specificationVersion, "v3");
    assert.equal(arc.languageModelMiddleware({ specificationVersion: "v4" }).specificationVersion, "v4");
  });
});
