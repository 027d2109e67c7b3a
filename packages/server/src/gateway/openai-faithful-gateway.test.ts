/**
 * The gateway as the official `openai` client sees it: tool calls and structured output from the shipped toolcall
 * model deployed in-process, the requested model name echoed (from an upstream too), `models.retrieve`, and every
 * edge error in OpenAI's shape.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { TOOLCALL_TOOLS, toOpenAiTools } from "@arc/core";
import { waitUntil } from "@arc/core/testing";
import { EmbeddedInferenceEngine, type RunningEngineServer, startEngineServer } from "@arc/engine";
import OpenAI from "openai";
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import {
  type ReleaseTestServer,
  startReleaseTestServer,
} from "../deploy/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { getTrace, listTraces } from "../store/trace-store.ts";
import { ModelPool } from "./model-pool.ts";

const MODEL_DIR = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const tools = toOpenAiTools(TOOLCALL_TOOLS) as unknown as ChatCompletionTool[];
const ask = [{ role: "user" as const, content: "What's the weather in Paris in celsius?" }];

const pglite = databasesUnderTest()[0];

describe("the gateway, as the official openai client expects it", () => {
  let db: Database;
  let server: ReleaseTestServer;
  let upstream: RunningEngineServer;
  let remote: ReleaseTestServer;
  let client: OpenAI;

  before(async () => {
    db = await pglite.open();
    server = await startReleaseTestServer(db, { pool: new ModelPool() });
    await registerModelVersion(db, server.tenantId, {
      name: "toolcall-base",
      status: "promoted",
      artifactDir: MODEL_DIR,
      actor: "test",
    });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 });
    upstream = await startEngineServer(await EmbeddedInferenceEngine.load(MODEL_DIR), {
      modelId: "served-name",
    });
    remote = await startReleaseTestServer(db, { pool: new ModelPool() });
    await registerModelVersion(db, remote.tenantId, {
      name: "remote",
      status: "promoted",
      upstream: { baseUrl: upstream.baseURL, model: "served-name" },
      actor: "test",
    });
  });
  after(async () => {
    await remote.close();
    await upstream.close();
    await server.close();
    await db.close();
  });

  it("returns the model's call as tool_calls, names the model as asked, and records the call in the trace", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: "arc", messages: ask, tools, temperature: 0, max_tokens: 96 })
      .withResponse();
    assert.equal(data.model, "arc");
    assert.match(response.headers.get("x-arc-model-version") ?? "", /^mv_/);
    const [call] = data.choices[0].message.tool_calls ?? [];
    assert.ok(call && call.type === "function");
    assert.equal(call.function.name, "get_weather");
    assert.equal(data.choices[0].finish_reason, "tool_calls");
    const page = await waitUntil(async () => {
      await server.release.gateway.flush();
      const p = await listTraces(db, server.tenantId, {});
      return p.data.length > 0 ? p : undefined;
    }, "the call's trace");
    const trace = await getTrace(db, server.tenantId, page.data[0].id);
    assert.deepEqual(
      trace.steps[0].llm?.output?.toolCalls?.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
      [["get_weather", { city: "Paris", unit: "c" }]],
    );
  });

  it("streams tool calls the official client assembles, and json_schema output that validates", async () => {
    const stream = client.chat.completions.stream({
      model: "toolcall-base",
      messages: ask,
      tools,
      tool_choice: "required",
      temperature: 0,
      max_tokens: 96,
    });
    const final = await stream.finalChatCompletion();
    assert.equal(final.model, "toolcall-base");
    const [call] = final.choices[0].message.tool_calls ?? [];
    assert.ok(call && call.type === "function");
    assert.deepEqual(JSON.parse(call.function.arguments), { city: "Paris", unit: "c" });
    const r = await client.chat.completions.create({
      model: "arc",
      messages: ask,
      temperature: 0,
      max_tokens: 96,
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "count",
          strict: true,
          schema: {
            type: "object",
            properties: { n: { type: "integer" } },
            required: ["n"],
            additionalProperties: false,
          },
        },
      },
    });
    assert.ok(Number.isInteger(JSON.parse(r.choices[0].message.content ?? "").n));
  });

  it("names an upstream's answer as the client asked, streamed and not", async () => {
    const upstreamClient = new OpenAI({ baseURL: `${remote.url}/v1`, apiKey: remote.key, maxRetries: 0 });
    const r = await upstreamClient.chat.completions.create({ model: "arc", messages: ask, max_tokens: 8 });
    assert.equal(r.model, "arc");
    const stream = await upstreamClient.chat.completions.create({
      model: "remote",
      messages: ask,
      max_tokens: 8,
      stream: true,
    });
    const models = new Set<string>();
    for await (const chunk of stream) models.add(chunk.model);
    assert.deepEqual([...models], ["remote"]);
  });

  it("retrieves a model, and answers an unknown one 404 model_not_found", async () => {
    assert.equal((await client.models.retrieve("arc")).id, "arc");
    assert.equal((await client.models.retrieve("toolcall-base")).object, "model");
    // OpenAI: {"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.",
    //          "type":"invalid_request_error","param":null,"code":"model_not_found"}}
    await assert.rejects(client.models.retrieve("gpt-9"), (e: InstanceType<typeof OpenAI.NotFoundError>) => {
      assert.deepEqual(e.error, {
        message: "The model `gpt-9` does not exist or you do not have access to it.",
        type: "invalid_request_error",
        param: null,
        code: "model_not_found",
      });
      return true;
    });
  });

  it("answers key, body and route errors in OpenAI's shape", async () => {
    const post = (path: string, body: string, authorization?: string) =>
      fetch(`${server.url}/v1/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body,
      });
    const error = async (res: Response, status: number) => {
      assert.equal(res.status, status);
      const body = (await res.json()) as { error: Record<string, unknown> };
      assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
      return body.error;
    };
    const body = JSON.stringify({ model: "arc", messages: ask });
    // OpenAI: 401 {"error":{"message":"You didn't provide an API key. ...","type":"invalid_request_error",
    //               "param":null,"code":null}}
    const missing = await error(await post("chat/completions", body), 401);
    assert.deepEqual([missing.type, missing.code, missing.param], ["invalid_request_error", null, null]);
    assert.match(String(missing.message), /You didn't provide an API key/);
    // OpenAI: 401 {"error":{"message":"Incorrect API key provided: sk-wrong. ...","type":"invalid_request_error",
    //               "param":null,"code":"invalid_api_key"}}
    const wrong = await error(await post("chat/completions", body, "Bearer sk-wrong"), 401);
    assert.deepEqual([wrong.type, wrong.code], ["invalid_request_error", "invalid_api_key"]);
    const auth = `Bearer ${server.key}`;
    // OpenAI: 400 {"error":{"message":"We could not parse the JSON body of your request. ...",
    //               "type":"invalid_request_error","param":null,"code":null}}
    const json = await error(await post("chat/completions", "{oops", auth), 400);
    assert.deepEqual([json.type, json.code], ["invalid_request_error", null]);
    // OpenAI: 404 {"error":{"message":"Invalid URL (POST /v1/chat/completion)","type":"invalid_request_error",
    //               "param":null,"code":null}}
    const route = await error(await post("chat/completion", body, auth), 404);
    assert.deepEqual(route, {
      message: "Invalid URL (POST /v1/chat/completion)",
      type: "invalid_request_error",
      param: null,
      code: null,
    });
    // OpenAI: 400 {"error":{"message":"This model's maximum context length is ...","type":"invalid_request_error",
    //               "param":"messages","code":"context_length_exceeded"}}
    const long = JSON.stringify({ model: "arc", messages: [{ role: "user", content: "x".repeat(2000) }] });
    const context = await error(await post("chat/completions", long, auth), 400);
    assert.deepEqual([context.code, context.param], ["context_length_exceeded", "messages"]);
  });
});
