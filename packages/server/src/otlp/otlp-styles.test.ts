import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import type { EvalRow } from "@arc/core";
import { type Attributes, SpanStatusCode } from "@opentelemetry/api";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import protobuf from "protobufjs/light.js";
import { getDataset } from "../failures/dataset-store.ts";
import { DetectionWorker } from "../failures/detection-worker.ts";
import { parseDatasetRequest, synthesizeDataset } from "../failures/synthesize-dataset.ts";
import { startTestAppServer, type TestAppServer } from "../http/test-app-server.ts";
import type { Database } from "../store/database.ts";
import { databasesUnderTest } from "../store/test-databases.ts";

const pglite = databasesUnderTest()[0];

const SCHEMA = { type: "object", properties: { value: { type: "number" } } };
const ANSWER = "That is 9.84 ft.";

/** The conversation every style below records about `value` meters: what Arc must store, in OpenAI's format. */
function expectedMessages(value: number) {
  return [
    { role: "system", content: "You convert units." },
    { role: "user", content: `Convert ${value} m to ft.` },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "convert_units", arguments: JSON.stringify({ value, from: "m", to: "ft" }) },
        },
      ],
    },
    { role: "tool", content: '{"value":9.84}', tool_call_id: "call_1" },
  ];
}

/** The same LLM call about `value` meters in each attribute style an instrumentation emits, with its span name. */
function styles(value: number): Record<string, { name: string; attributes: Attributes }> {
  const CALL_ARGS = { value, from: "m", to: "ft" };
  const question = `Convert ${value} m to ft.`;
  return {
    "GenAI semantic conventions": {
      name: "chat gpt-4o-mini",
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: "You convert units." }]),
        "gen_ai.input.messages": JSON.stringify([
          { role: "user", parts: [{ type: "text", content: question }] },
          {
            role: "assistant",
            parts: [{ type: "tool_call", id: "call_1", name: "convert_units", arguments: CALL_ARGS }],
          },
          { role: "tool", parts: [{ type: "tool_call_response", id: "call_1", response: { value: 9.84 } }] },
        ]),
        "gen_ai.output.messages": JSON.stringify([
          { role: "assistant", parts: [{ type: "text", content: ANSWER }], finish_reason: "stop" },
        ]),
        "gen_ai.tool.definitions": JSON.stringify([
          { type: "function", function: { name: "convert_units", parameters: SCHEMA } },
        ]),
      },
    },
    OpenLLMetry: {
      name: "openai.chat",
      attributes: {
        "llm.request.type": "chat",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "You convert units.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": question,
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.tool_calls.0.id": "call_1",
        "gen_ai.prompt.2.tool_calls.0.name": "convert_units",
        "gen_ai.prompt.2.tool_calls.0.arguments": JSON.stringify(CALL_ARGS),
        "gen_ai.prompt.3.role": "tool",
        "gen_ai.prompt.3.content": '{"value":9.84}',
        "gen_ai.prompt.3.tool_call_id": "call_1",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": ANSWER,
        "gen_ai.completion.0.finish_reason": "stop",
        "llm.request.functions.0.name": "convert_units",
        "llm.request.functions.0.parameters": JSON.stringify(SCHEMA),
        "gen_ai.usage.prompt_tokens": 40,
        "gen_ai.usage.completion_tokens": 8,
      },
    },
    OpenInference: {
      name: "ChatCompletion",
      attributes: {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.invocation_parameters": JSON.stringify({ temperature: 0 }),
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "You convert units.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": question,
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_1",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "convert_units",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": JSON.stringify(CALL_ARGS),
        "llm.input_messages.3.message.role": "tool",
        "llm.input_messages.3.message.content": '{"value":9.84}',
        "llm.input_messages.3.message.tool_call_id": "call_1",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": ANSWER,
        "llm.tools.0.tool.json_schema": JSON.stringify({
          type: "function",
          function: { name: "convert_units", parameters: SCHEMA },
        }),
        "llm.token_count.prompt": 40,
        "llm.token_count.completion": 8,
      },
    },
    "Vercel AI SDK": {
      name: "ai.generateText.doGenerate",
      attributes: {
        "ai.operationId": "ai.generateText.doGenerate",
        "ai.model.id": "gpt-4o-mini",
        "ai.prompt.messages": JSON.stringify([
          { role: "system", content: "You convert units." },
          { role: "user", content: [{ type: "text", text: question }] },
          {
            role: "assistant",
            content: [
              { type: "tool-call", toolCallId: "call_1", toolName: "convert_units", input: CALL_ARGS },
            ],
          },
          {
            role: "tool",
            content: [
              {
                type: "tool-result",
                toolCallId: "call_1",
                toolName: "convert_units",
                output: { type: "json", value: { value: 9.84 } },
              },
            ],
          },
        ]),
        "ai.prompt.tools": [JSON.stringify({ type: "function", name: "convert_units", inputSchema: SCHEMA })],
        "ai.response.text": ANSWER,
        "ai.response.finishReason": "stop",
        "ai.usage.inputTokens": 40,
        "ai.usage.outputTokens": 8,
      },
    },
  };
}

const ENCODINGS = [
  { name: "JSON", Exporter: JsonExporter, gzip: false },
  { name: "JSON, gzip", Exporter: JsonExporter, gzip: true },
  { name: "protobuf", Exporter: ProtobufExporter, gzip: false },
  { name: "protobuf, gzip", Exporter: ProtobufExporter, gzip: true },
];

/** Reads a google.rpc.Status with protobufjs's wire reader: field 1 the code, field 2 the message. */
function readRpcStatus(bytes: Uint8Array): { code: number; message: string } {
  const reader = protobuf.Reader.create(bytes);
  const status = { code: 0, message: "" };
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === 1) status.code = reader.int32();
    else if (tag >>> 3 === 2) status.message = reader.string();
    else reader.skipType(tag & 7);
  }
  return status;
}

describe("OTLP from the official exporters, in every encoding and GenAI attribute style", () => {
  let db: Database;
  let server: TestAppServer;
  const providers: BasicTracerProvider[] = [];

  before(async () => {
    db = await pglite.open();
    server = await startTestAppServer(db);
  });
  after(async () => {
    for (const p of providers) await p.shutdown();
    await server?.close();
    await db?.close();
  });

  /** The meters each export's conversation is about, by trace id: distinct, so no two rows are near-duplicates. */
  const sent = new Map<string, number>();
  for (const [e, encoding] of ENCODINGS.entries()) {
    for (const [s, style] of Object.keys(styles(0)).entries()) {
      const value = 10 * (e + 1) + s + 1;
      const span = styles(value)[style];
      it(`${encoding.name}, ${style}: stores the LLM call with its whole conversation, tools and answer`, async () => {
        const exporter = new encoding.Exporter({
          url: `${server.url}/v1/otlp/v1/traces`,
          headers: { authorization: `Bearer ${server.tenants[0].key}` },
          ...(encoding.gzip ? { compression: "gzip" as CompressionAlgorithm } : {}),
        });
        const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
        providers.push(provider);
        const recorded = provider.getTracer("agent").startSpan(span.name, { attributes: span.attributes });
        recorded.setStatus({ code: SpanStatusCode.ERROR, message: "the agent's answer was cut off" });
        recorded.end();
        sent.set(recorded.spanContext().traceId, value);
        await provider.forceFlush();

        const res = await fetch(`${server.url}/v1/traces/${recorded.spanContext().traceId}`, {
          headers: { authorization: `Bearer ${server.tenants[0].key}` },
        });
        assert.equal(res.status, 200);
        const [step] = (await res.json()).steps;
        assert.equal(step.kind, "llm");
        assert.deepEqual(step.llm.messages, expectedMessages(value));
        assert.equal(step.llm.output.content, ANSWER);
        assert.equal(step.llm.tools[0].function.name, "convert_units");
        assert.deepEqual(step.llm.tools[0].function.parameters, SCHEMA);
        assert.equal(step.llm.modelRequested, "gpt-4o-mini");
        if (style !== "GenAI semantic conventions") {
          assert.deepEqual(step.llm.usage, { promptTokens: 40, completionTokens: 8, totalTokens: 48 });
        }
        for (const key of Object.keys(step.metadata ?? {})) {
          assert.doesNotMatch(
            key,
            /^(gen_ai\.(prompt|completion)|llm\.(input|output)_messages|ai\.prompt)\./,
            key,
          );
        }
      });
    }
  }

  it("turns every one of those failed exports into a reference-free eval row with the whole conversation", async () => {
    const tenant = server.tenants[0].id;
    const worker = new DetectionWorker(db, { config: { quietMs: 0, batchSize: 500 } });
    while ((await worker.runOnce()).judged > 0);
    const request = parseDatasetRequest({ kind: "eval", seed: 1, perPattern: 50, generalSize: 0 });
    const made = await synthesizeDataset(db, tenant, request, { createdBy: "api" });
    const rows = (await getDataset(db, tenant, made.dataset.id)).rows as EvalRow[];
    const byTrace = new Map(rows.map((r) => [r.meta.sourceTraceIds[0], r]));
    assert.equal(sent.size, ENCODINGS.length * Object.keys(styles(0)).length);
    for (const [traceId, value] of sent) {
      const row = byTrace.get(traceId);
      assert.ok(row, `no row for trace ${traceId}`);
      assert.equal(row.solution, undefined);
      assert.equal(row.env, undefined);
      assert.deepEqual(row.context?.messages, expectedMessages(value));
      const [tool] = row.context?.tools ?? [];
      assert.equal((tool?.function as { name?: string } | undefined)?.name, "convert_units");
    }
  });

  const post = (body: Uint8Array<ArrayBuffer>, headers: Record<string, string>) =>
    fetch(`${server.url}/v1/otlp/v1/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.tenants[0].key}`, ...headers },
      body,
    });

  it("answers bytes that are not an export with 400 and a google.rpc.Status naming the problem", async () => {
    const res = await post(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f]), {
      "content-type": "application/x-protobuf",
    });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("content-type"), "application/x-protobuf");
    const status = readRpcStatus(new Uint8Array(await res.arrayBuffer()));
    assert.equal(status.code, 3);
    assert.match(status.message, /not an OTLP ExportTraceServiceRequest in protobuf/);
  });

  it("refuses a small gzip body that inflates past the body limit with 413, without inflating all of it", async () => {
    const bomb = new Uint8Array(gzipSync(Buffer.alloc(64 * 1024 * 1024)));
    assert.ok(bomb.byteLength < 1024 * 1024);
    const res = await post(bomb, { "content-type": "application/x-protobuf", "content-encoding": "gzip" });
    assert.equal(res.status, 413);
    assert.match(readRpcStatus(new Uint8Array(await res.arrayBuffer())).message, /decompressed body exceeds/);
    const json = await post(bomb, { "content-type": "application/json", "content-encoding": "gzip" });
    assert.equal(json.status, 413);
  });

  it("keeps a protobuf double that is NaN or ±Infinity as protobuf's JSON mapping writes it, not as null", async () => {
    const exporter = new ProtobufExporter({
      url: `${server.url}/v1/otlp/v1/traces`,
      headers: { authorization: `Bearer ${server.tenants[0].key}` },
    });
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    providers.push(provider);
    const recorded = provider.getTracer("agent").startSpan("score", {
      attributes: { "eval.nan": Number.NaN, "eval.max": Number.POSITIVE_INFINITY, "eval.min": -Infinity },
    });
    recorded.end();
    await provider.forceFlush();
    const res = await fetch(`${server.url}/v1/traces/${recorded.spanContext().traceId}`, {
      headers: { authorization: `Bearer ${server.tenants[0].key}` },
    });
    assert.equal(res.status, 200);
    const { metadata } = (await res.json()).steps[0];
    assert.deepEqual(
      [metadata["eval.nan"], metadata["eval.max"], metadata["eval.min"]],
      ["NaN", "Infinity", "-Infinity"],
    );
  });

  it("refuses an encoding other than gzip with 415, and broken gzip with 400", async () => {
    const br = await post(new Uint8Array([1, 2, 3]), {
      "content-type": "application/json",
      "content-encoding": "br",
    });
    assert.equal(br.status, 415);
    assert.match((await br.json()).error.message, /Content-Encoding "br" is not supported/);
    const broken = await post(new Uint8Array([0x1f, 0x8b, 1, 2]), {
      "content-type": "application/json",
      "content-encoding": "gzip",
    });
    assert.equal(broken.status, 400);
    assert.match((await broken.json()).error.message, /not valid gzip/);
  });
});
