import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import OpenAI from "openai";
import { type Arc, createArc } from "../arc/create-arc.ts";
import { CollectorTestServer } from "../test-doubles/collector-test-server.ts";
import { OpenAITestServer } from "../test-doubles/openai-test-server.ts";
import type { WireStep, WireTrace } from "../wire/wire-types.ts";

let provider: OpenAITestServer;
let collector: CollectorTestServer;
let arc: Arc;
let raw: OpenAI;
let client: OpenAI;

before(async () => {
  provider = await OpenAITestServer.start();
  collector = await CollectorTestServer.start();
  arc = createArc({ baseUrl: collector.url, apiKey: "tenant-key", flushIntervalMs: 10, onWarning: () => {} });
  raw = new OpenAI({ baseURL: provider.url, apiKey: "provider-key", maxRetries: 0 });
  client = arc.wrapOpenAI(raw);
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

/** The traces the wrapped client produced since the test began. */
async function sentTraces(): Promise<WireTrace[]> {
  assert.equal(await arc.flush(), true);
  return collector.traces();
}

async function onlyStep(): Promise<{ trace: WireTrace; step: WireStep }> {
  const traces = await sentTraces();
  assert.equal(traces.length, 1, `expected one trace, got ${traces.length}`);
  assert.equal(traces[0]!.steps.length, 1);
  return { trace: traces[0]!, step: traces[0]!.steps[0]! };
}

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Current weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: "system", content: "You are terse." },
  {
    role: "user",
    content: [
      { type: "text", text: "Weather in Paris? And look:" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
    ],
  },
];

const toolCall = { id: "call_1", name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' };

function isIso(value: unknown): boolean {
  return typeof value === "string" && new Date(value).toISOString() === value;
}

describe("wrapOpenAI with the official openai client", () => {
  it("records a non-streamed call with tools field by field", async () => {
    provider.reply = () => ({ content: null, toolCalls: [toolCall], model: "gpt-test-2026-01-01" });
    await client.chat.completions.create({
      model: "gpt-test",
      messages,
      tools: [weatherTool],
      tool_choice: "auto",
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 64,
      seed: 7,
      stop: ["\n\n"],
      n: 1,
      response_format: { type: "text" },
    });
    const { trace, step } = await onlyStep();
    assert.equal(trace.status, "ok");
    assert.equal(trace.name, "chat.completions.create");
    assert.equal(trace.startedAt, step.startedAt);
    assert.equal(step.kind, "llm");
    assert.ok(isIso(step.startedAt) && isIso(step.endedAt));
    assert.ok(typeof step.latencyMs === "number" && step.latencyMs > 0);
    assert.equal(step.error, undefined);
    assert.deepEqual(step.llm, {
      modelRequested: "gpt-test",
      modelServed: "gpt-test-2026-01-01",
      modelVersion: "fp_test",
      messages,
      tools: [weatherTool],
      params: {
        tool_choice: "auto",
        temperature: 0.2,
        top_p: 0.9,
        max_tokens: 64,
        seed: 7,
        stop: ["\n\n"],
        n: 1,
        response_format: { type: "text" },
      },
      output: {
        content: null,
        toolCalls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: toolCall.arguments },
          },
        ],
      },
      finishReason: "tool_calls",
      usage: { promptTokens: 11, completionTokens: 7, totalTokens: 18 },
    });
    assert.match(String(step.metadata?.requestId), /^req-test-\d+$/);
    assert.match(String(step.metadata?.responseId), /^chatcmpl-test-\d+$/);
  });

  it("returns exactly what the unwrapped client returns", async () => {
    provider.reply = () => ({ id: "chatcmpl-fixed", content: "Sunny, 21°C.", toolCalls: [toolCall] });
    const body = { model: "gpt-test", messages, tools: [weatherTool] };
    const plain = await raw.chat.completions.create(body);
    const traced = await client.chat.completions.create(body);
    assert.deepStrictEqual(traced, plain);
    assert.equal(Object.getPrototypeOf(traced), Object.getPrototypeOf(plain));
    assert.match(String(traced._request_id), /^req-test-\d+$/);
  });

  it("hands back the client's own APIPromise, with withResponse and asResponse working", async () => {
    provider.reply = () => ({ id: "chatcmpl-fixed", content: "hi" });
    const body = { model: "gpt-test", messages };
    const promise = client.chat.completions.create(body);
    assert.equal(promise.constructor, raw.chat.completions.create(body).constructor);
    const { data, response, request_id } = await promise.withResponse();
    assert.deepStrictEqual(data, await raw.chat.completions.create(body));
    assert.equal(response.status, 200);
    assert.match(String(request_id), /^req-test-\d+$/);

    const rawResponse = await client.chat.completions.create(body).asResponse();
    assert.equal(rawResponse.status, 200);
    const json = (await rawResponse.json()) as { choices: { message: { content: string } }[] };
    assert.equal(json.choices[0]!.message.content, "hi");

    await collector.waitFor(() => collector.traces().length === 2);
    const traces = await sentTraces();
    const [withResponseStep, asResponseStep] = traces.map((t) => t.steps[0]!);
    assert.equal(withResponseStep!.llm!.output!.content, "hi");
    assert.equal(asResponseStep!.llm!.output!.content, "hi", "asResponse: read from a clone of the body");
    assert.equal(asResponseStep!.metadata!.rawResponse, true);
  });

  it("streams the same chunks as the unwrapped client and records the assembled output, tool calls and usage", async () => {
    provider.reply = () => ({
      id: "chatcmpl-fixed",
      content: "Let me check.",
      toolCalls: [toolCall, { ...toolCall, id: "call_2", arguments: '{"city":"Lyon"}' }],
    });
    const body = {
      model: "gpt-test",
      messages,
      tools: [weatherTool],
      stream: true as const,
      stream_options: { include_usage: true },
    };
    const plainChunks = [];
    for await (const chunk of await raw.chat.completions.create(body)) plainChunks.push(chunk);
    await arc.flush();
    collector.requests.length = 0;
    const stream = await client.chat.completions.create(body);
    assert.equal(typeof stream.tee, "function");
    assert.ok(stream.controller instanceof AbortController);
    const tracedChunks = [];
    for await (const chunk of stream) tracedChunks.push(chunk);
    assert.deepStrictEqual(tracedChunks, plainChunks);
    assert.ok(tracedChunks.length > 10, "the content and arguments came in many pieces");

    const { step } = await onlyStep();
    assert.deepEqual(step.llm!.output, {
      content: "Let me check.",
      toolCalls: [
        { id: "call_1", type: "function", function: { name: "get_weather", arguments: toolCall.arguments } },
        { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Lyon"}' } },
      ],
    });
    assert.equal(step.llm!.finishReason, "tool_calls");
    assert.deepEqual(step.llm!.usage, { promptTokens: 11, completionTokens: 7, totalTokens: 18 });
    assert.equal(step.llm!.modelServed, "gpt-test-served");
    assert.deepEqual(step.llm!.params, { stream: true, stream_options: { include_usage: true } });
    assert.equal(typeof step.metadata!.timeToFirstChunkMs, "number");
    assert.match(String(step.metadata!.requestId), /^req-test-\d+$/);
  });

  it("records a stream read through tee() once", async () => {
    provider.reply = () => ({ content: "abcdefgh" });
    const stream = await client.chat.completions.create({ model: "m", messages, stream: true });
    const [left, right] = stream.tee();
    let text = "";
    for await (const chunk of left) text += chunk.choices[0]?.delta.content ?? "";
    for await (const _ of right);
    assert.equal(text, "abcdefgh");
    const { step } = await onlyStep();
    assert.equal(step.llm!.output!.content, "abcdefgh");
  });

  it("records what was streamed when the caller stops reading early", async () => {
    provider.reply = () => ({ content: "0123456789", pieceSize: 2 });
    const stream = await client.chat.completions.create({ model: "m", messages, stream: true });
    let seen = 0;
    for await (const _ of stream) if (++seen === 3) break;
    const { step } = await onlyStep();
    assert.equal(step.llm!.output!.content, "0123");
    assert.equal(step.metadata!.streamClosedEarly, true);
    assert.equal(step.llm!.finishReason, undefined);
  });

  it("re-throws the provider's error unchanged and records it on the step", async () => {
    provider.reply = () => ({
      error: {
        status: 400,
        message: "messages: too long",
        type: "invalid_request_error",
        code: "context_length_exceeded",
      },
    });
    const body = { model: "gpt-test", messages };
    const plainError = await raw.chat.completions.create(body).catch((e: unknown) => e);
    await arc.flush();
    collector.requests.length = 0;
    const tracedError = await client.chat.completions.create(body).catch((e: unknown) => e);
    assert.ok(tracedError instanceof OpenAI.BadRequestError);
    assert.equal(Object.getPrototypeOf(tracedError), Object.getPrototypeOf(plainError));
    const shape = (e: unknown) => {
      const { status, message, code, type, param, error } = e as InstanceType<typeof OpenAI.APIError>;
      return { status, message, code, type, param, error };
    };
    assert.deepStrictEqual(shape(tracedError), shape(plainError));

    const { trace, step } = await onlyStep();
    assert.equal(trace.status, "error");
    assert.deepEqual(step.error, {
      message: (tracedError as Error).message,
      type: "invalid_request_error",
      code: "context_length_exceeded",
      status: 400,
    });
    assert.equal(step.llm!.output, undefined);
    assert.deepEqual(step.llm!.messages, messages);
  });

  it("re-throws an error raised mid-stream and records it with the partial output", async () => {
    provider.reply = () => ({ content: "abcdefghij", pieceSize: 2, streamErrorAfterChunks: 3 });
    const stream = await client.chat.completions.create({ model: "m", messages, stream: true });
    let text = "";
    await assert.rejects(async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    }, /stream broke/);
    assert.equal(text, "abcd");
    const { trace, step } = await onlyStep();
    assert.equal(trace.status, "error");
    assert.match(step.error!.message, /stream broke/);
    assert.equal(step.llm!.output!.content, "abcd");
  });

  it("records a connection failure and re-throws the client's own error", async () => {
    const unreachable = arc.wrapOpenAI(
      new OpenAI({ baseURL: "http://127.0.0.1:1/v1", apiKey: "k", maxRetries: 0 }),
    );
    const error = await unreachable.chat.completions
      .create({ model: "m", messages })
      .catch((e: unknown) => e);
    assert.ok(error instanceof OpenAI.APIConnectionError);
    const { step } = await onlyStep();
    assert.equal(step.error!.type, "APIConnectionError");
  });

  it("traces the client's helpers (stream(), parse()) through the wrapped create", async () => {
    provider.reply = () => ({ content: "helped" });
    const runner = client.chat.completions.stream({ model: "m", messages });
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0]!.message.content, "helped");
    const parsed = await client.chat.completions.parse({ model: "m", messages });
    assert.equal(parsed.choices[0]!.message.content, "helped");
    const traces = await sentTraces();
    assert.deepEqual(
      traces.map((t) => t.steps[0]!.llm!.output!.content),
      ["helped", "helped"],
    );
  });

  it("leaves the original client untraced and the rest of the client working", async () => {
    await raw.chat.completions.create({ model: "m", messages });
    assert.deepEqual(await sentTraces(), []);
    assert.ok(client instanceof OpenAI);
    assert.equal(client.baseURL, raw.baseURL);
    assert.equal(
      client.withOptions({ timeout: 5000 }).baseURL,
      raw.baseURL,
      "methods using private fields work",
    );
    assert.equal(arc.wrapOpenAI(client), client, "wrapping twice does not trace twice");
  });

  it("wraps any client of the same shape whose create returns a plain promise (e.g. another SDK version)", async () => {
    const completion = {
      id: "c",
      model: "served",
      choices: [{ index: 0, message: { content: "z" }, finish_reason: "stop" }],
    };
    const lookalike = {
      chat: { completions: { create: async (_body: { model: string; messages: unknown[] }) => completion } },
    };
    const wrapped = arc.wrapOpenAI(lookalike);
    assert.equal(await wrapped.chat.completions.create({ model: "m", messages: [] }), completion);
    const { step } = await onlyStep();
    assert.equal(step.llm!.output!.content, "z");
    assert.equal(step.llm!.modelServed, "served");
  });

  it("rejects something that is not an OpenAI client, naming what it expected", () => {
    assert.throws(() => arc.wrapOpenAI({} as OpenAI), {
      name: "ArcInputError",
      message: /client: expected an OpenAI client with chat.completions.create/,
    });
  });
});

describe("the Responses API", () => {
  const input: OpenAI.Responses.ResponseInput = [
    { role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] },
    { type: "function_call", call_id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' },
    { type: "function_call_output", call_id: "call_0", output: '{"tempC":18}' },
  ];
  const tools: OpenAI.Responses.Tool[] = [
    {
      type: "function",
      name: "get_weather",
      description: "Current weather in a city",
      parameters: weatherTool.function.parameters,
      strict: false,
    },
  ];
  const asChat = [
    { role: "system", content: "You are terse." },
    { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      ],
    },
    { role: "tool", tool_call_id: "call_0", content: '{"tempC":18}' },
  ];

  it("records instructions, input items and tools as the chat they are, and the output, usage and ids", async () => {
    provider.reply = () => ({ content: "18°C and sunny.", toolCalls: [toolCall] });
    const response = await client.responses.create({
      model: "gpt-test",
      instructions: "You are terse.",
      input,
      tools,
      temperature: 0,
    });
    assert.equal(response.output_text, "18°C and sunny.");
    const { step } = await onlyStep();
    assert.equal(step.name, "responses.create");
    assert.deepEqual(step.llm?.messages, asChat);
    assert.deepEqual(step.llm?.tools, [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Current weather in a city",
          parameters: weatherTool.function.parameters,
          strict: false,
        },
      },
    ]);
    assert.deepEqual(step.llm?.params, { temperature: 0 });
    assert.deepEqual(step.llm?.output, {
      content: "18°C and sunny.",
      toolCalls: [
        { id: "call_1", type: "function", function: { name: "get_weather", arguments: toolCall.arguments } },
      ],
    });
    assert.equal(step.llm?.finishReason, "tool_calls");
    assert.equal(step.llm?.modelServed, "gpt-test-served");
    assert.deepEqual(step.llm?.usage, { promptTokens: 11, completionTokens: 7, totalTokens: 18 });
    assert.equal((step.metadata as { responseId?: string }).responseId, response.id);
  });

  it("assembles a streamed response from its events as the caller reads them", async () => {
    provider.reply = () => ({ content: "Sunny in Paris." });
    const stream = await client.responses.create({
      model: "gpt-test",
      input: "Weather in Paris?",
      stream: true,
    });
    let text = "";
    for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta;
    assert.equal(text, "Sunny in Paris.");
    const { step } = await onlyStep();
    assert.deepEqual(step.llm?.messages, [{ role: "user", content: "Weather in Paris?" }]);
    assert.deepEqual(step.llm?.output, { content: "Sunny in Paris." });
    assert.equal(step.llm?.finishReason, "stop");
    assert.deepEqual(step.llm?.params, { stream: true });
  });

  it("records an HTTP error the caller gets, and leaves the unwrapped client untraced", async () => {
    provider.reply = () => ({ error: { status: 400, message: "bad input" } });
    await assert.rejects(client.responses.create({ model: "gpt-test", input: "hi" }), /bad input/);
    const { step } = await onlyStep();
    assert.match(String(step.error?.message), /bad input/);
    collector.requests.length = 0;
    provider.reply = () => ({});
    await raw.responses.create({ model: "gpt-test", input: "hi" });
    assert.equal((await sentTraces()).length, 0);
  });
});
