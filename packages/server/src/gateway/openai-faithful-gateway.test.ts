/**
 * The gateway as the official `openai` client sees it: tool calls and structured output from the shipped toolcall
 * model deployed in-process, the requested model name echoed (from an upstream too), `models.retrieve`, every edge
 * error in OpenAI's shape, and the request rules it shares with `arc engine serve`, held side by side.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { toOpenAiTools } from "@arc/core";
import { TOOLCALL_TOOLS } from "@arc/core/families";
import { waitUntil } from "@arc/core/testing";
import { EmbeddedInferenceEngine, type RunningEngineServer, startEngineServer } from "@arc/engine";
import { OpenAITestServer } from "@arc/sdk/test-doubles";
import OpenAI from "openai";
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import { loadServerConfig } from "../config/server-config.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import type { Database } from "../store/database.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { getTrace, listTraces } from "../store/trace-store.ts";
import { ModelPool } from "./model-pool.ts";

const MODEL_DIR = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const tools = toOpenAiTools(TOOLCALL_TOOLS) as unknown as ChatCompletionTool[];
const ask = [{ role: "user" as const, content: "What's the weather in Paris in celsius?" }];

const pglite = databasesUnderTest()[0];

/** An error answer's status and body. */
async function errorOf(res: Response): Promise<{ status: number; error: Record<string, unknown> }> {
  const body = (await res.json()) as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
  return { status: res.status, error: body.error };
}

/** POSTs `size` bytes with no Content-Length (chunked), as a client streaming a body does; resolves with the answer. */
function postChunked(url: string, size: number, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    });
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

describe("the gateway, as the official openai client expects it", () => {
  let db: Database;
  let server: ReleaseTestServer;
  let upstream: RunningEngineServer;
  let remote: ReleaseTestServer;
  /** TEST DOUBLE of a hosted provider (no hosted LLM here): it records what the gateway passes on. */
  let provider: OpenAITestServer;
  let hosted: ReleaseTestServer;
  let client: OpenAI;
  let versionId: string;

  before(async () => {
    db = await pglite.open();
    server = await startReleaseTestServer(db, { pool: new ModelPool() });
    versionId = (
      await registerModelVersion(db, server.tenantId, {
        name: "toolcall-base",
        status: "promoted",
        artifactDir: MODEL_DIR,
        actor: "test",
      })
    ).id;
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
    provider = await OpenAITestServer.start();
    hosted = await startReleaseTestServer(db, { pool: new ModelPool() });
    await registerModelVersion(db, hosted.tenantId, {
      name: "hosted",
      status: "promoted",
      upstream: { baseUrl: provider.url, model: "gpt-hosted" },
      actor: "test",
    });
  });
  after(async () => {
    await hosted.close();
    await provider.close();
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

  it("answers a model the tenant does not serve 404 model_not_found, and serves arc, its models' names and ids", async () => {
    const before = provider.requests.length;
    for (const [gateway, name] of [
      [client, "gpt-4o"],
      [new OpenAI({ baseURL: `${hosted.url}/v1`, apiKey: hosted.key, maxRetries: 0 }), "gpt-hosted"],
    ] as const) {
      // OpenAI: 404 {"error":{"message":"The model `gpt-4o` does not exist or you do not have access to it.",
      //               "type":"invalid_request_error","param":null,"code":"model_not_found"}}
      await assert.rejects(
        gateway.chat.completions.create({ model: name, messages: ask, max_tokens: 4 }),
        (e: InstanceType<typeof OpenAI.NotFoundError>) => {
          assert.equal(e.status, 404);
          assert.deepEqual(e.error, {
            message: `The model \`${name}\` does not exist or you do not have access to it.`,
            type: "invalid_request_error",
            param: null,
            code: "model_not_found",
          });
          return true;
        },
      );
    }
    assert.equal(
      provider.requests.length,
      before,
      "the upstream's own model name is not a name of the tenant's",
    );
    // a version the tenant has that is not routed now (a candidate here) follows the route, as `arc` does
    await registerModelVersion(db, server.tenantId, {
      name: "next-candidate",
      status: "candidate",
      artifactDir: MODEL_DIR,
      actor: "test",
    });
    await waitUntil(async () => {
      const r = await client.chat.completions
        .create({ model: "next-candidate", messages: ask, max_tokens: 1 })
        .catch(() => null);
      return r ?? undefined;
    }, "the new version's name known to the gateway");
    for (const model of ["arc", "toolcall-base", versionId, "next-candidate"]) {
      const { data, response } = await client.chat.completions
        .create({ model, messages: ask, max_tokens: 4 })
        .withResponse();
      assert.equal(data.model, model);
      assert.equal(response.headers.get("x-arc-model-version"), versionId);
    }
  });

  it("refuses an argument OpenAI does not document, before any model is called, on every backend", async () => {
    const before = provider.requests.length;
    for (const target of [server, remote, hosted]) {
      const gateway = new OpenAI({ baseURL: `${target.url}/v1`, apiKey: target.key, maxRetries: 0 });
      // OpenAI: 400 {"error":{"message":"Unrecognized request argument supplied: thinking",
      //               "type":"invalid_request_error","param":null,"code":null}}
      await assert.rejects(
        gateway.chat.completions.create({
          model: "arc",
          messages: ask,
          thinking: { type: "enabled" },
        } as never),
        (e: InstanceType<typeof OpenAI.BadRequestError>) => {
          assert.deepEqual(e.error, {
            message: "Unrecognized request argument supplied: thinking",
            type: "invalid_request_error",
            param: null,
            code: null,
          });
          return true;
        },
      );
    }
    assert.equal(provider.requests.length, before, "a refused request reached the model");
  });

  it("applies logit_bias and the penalties on its models, and passes them to an upstream as sent", async () => {
    const Z = "Z".charCodeAt(0);
    for (const target of [server, remote]) {
      const gateway = new OpenAI({ baseURL: `${target.url}/v1`, apiKey: target.key, maxRetries: 0 });
      const forced = await gateway.chat.completions.create({
        model: "arc",
        messages: ask,
        temperature: 0,
        max_tokens: 5,
        logit_bias: { [Z]: 100 },
      });
      assert.equal(forced.choices[0].message.content, "ZZZZZ", target.url);
      const greedy = { model: "arc", messages: ask, temperature: 0, max_tokens: 48 };
      const plain = await gateway.chat.completions.create(greedy);
      const penalized = await gateway.chat.completions.create({ ...greedy, frequency_penalty: 2 });
      assert.notEqual(penalized.choices[0].message.content, plain.choices[0].message.content);
    }
    const sent = {
      logit_bias: { "17": -5 },
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      functions: [{ name: "get_weather", parameters: { type: "object", properties: {} } }],
      function_call: "auto" as const,
      reasoning_effort: "low" as const,
      user: "user-1",
      store: false,
    };
    const hostedClient = new OpenAI({ baseURL: `${hosted.url}/v1`, apiKey: hosted.key, maxRetries: 0 });
    await hostedClient.chat.completions.create({ model: "arc", messages: ask, ...sent });
    const received = provider.requests.at(-1) ?? {};
    for (const [key, value] of Object.entries(sent)) assert.deepEqual(received[key], value, key);
  });

  it("refuses, naming it, what its embedded model cannot honour", async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: "arc",
        messages: ask,
        functions: [{ name: "get_weather", parameters: { type: "object", properties: {} } }],
      }),
      (e: InstanceType<typeof OpenAI.BadRequestError>) => {
        assert.deepEqual([e.status, e.param, e.code], [400, "functions", "unsupported_parameter"]);
        assert.match(
          e.message,
          /Unsupported parameter: 'functions' is not supported by this server: offer them as tools/,
        );
        return true;
      },
    );
  });

  it("holds a request to the same rules as arc engine serve, answering each refusal alike", async () => {
    const gatewayPost = (body: object) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${server.key}` },
        body: JSON.stringify({ model: "arc", ...body }),
      });
    const enginePost = (body: object) =>
      fetch(`${upstream.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "served-name", ...body }),
      });
    const bodies: [name: string, body: Record<string, unknown>][] = [
      ["an unknown argument", { messages: ask, top_k_typo: 1 }],
      ["two unknown arguments", { messages: ask, thinking: {}, ignore_eos: true }],
      ["no model", { model: undefined, messages: ask }],
      ["an empty model", { model: "", messages: ask }],
      ["no messages", { messages: [] }],
      ["temperature 5", { messages: ask, temperature: 5 }],
      ["n 0", { messages: ask, n: 0 }],
      ["frequency_penalty 3", { messages: ask, frequency_penalty: 3 }],
      ["presence_penalty as text", { messages: ask, presence_penalty: "high" }],
      ["logit_bias keyed by a word", { messages: ask, logit_bias: { hello: 5 } }],
      ["logit_bias of 300", { messages: ask, logit_bias: { "5": 300 } }],
      ["logit_bias as a list", { messages: ask, logit_bias: [5] }],
      ["function_call 5", { messages: ask, function_call: 5 }],
      ["modalities as text", { messages: ask, modalities: "text" }],
      ["store as text", { messages: ask, store: "yes" }],
      ["five stop strings", { messages: ask, stop: ["a", "b", "c", "d", "e"] }],
      ["functions as an object", { messages: ask, functions: {} }],
      ["a null message", { messages: [null] }],
    ];
    for (const [name, body] of bodies) {
      const [fromGateway, fromEngine] = [
        await errorOf(await gatewayPost(body)),
        await errorOf(await enginePost(body)),
      ];
      assert.equal(fromGateway.status, 400, `${name}: ${JSON.stringify(fromGateway)}`);
      assert.deepEqual(fromGateway, fromEngine, name);
    }
    for (const [method, path] of [
      ["GET", "/v1/files"],
      ["POST", "/v1/completions"],
      ["POST", "/v1/chat/completions/extra"],
    ]) {
      const init = { method, headers: { authorization: `Bearer ${server.key}` } };
      const fromGateway = await errorOf(await fetch(`${server.url}${path}`, init));
      const fromEngine = await errorOf(await fetch(`${upstream.baseURL.replace(/\/v1$/, "")}${path}`, init));
      // OpenAI: 404 {"error":{"message":"Invalid URL (GET /v1/files)","type":"invalid_request_error",...}}
      assert.deepEqual(fromGateway, {
        status: 404,
        error: {
          message: `Invalid URL (${method} ${path})`,
          type: "invalid_request_error",
          param: null,
          code: null,
        },
      });
      if (path !== "/v1/completions") assert.deepEqual(fromEngine, fromGateway);
    }
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

describe("arc serve and arc engine serve at their defaults, as an OpenAI client sees their edges", () => {
  let home: string;
  let arc: RunningServer;
  let engine: RunningEngineServer;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), "arc-openai-edges-"));
    arc = await startServer(loadServerConfig({}, { home, port: 0 }));
    engine = await startEngineServer(await EmbeddedInferenceEngine.load(MODEL_DIR), {
      modelId: "toolcall-base",
    });
  });
  after(async () => {
    await engine?.close();
    await arc?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("answers an 11 MiB chunked body 413 in OpenAI's shape on both, not with a reset connection", async () => {
    const key = arc.credentials?.tenantKey ?? "";
    const size = 11 * 1024 * 1024;
    const fromArc = await postChunked(`${arc.url}/v1/chat/completions`, size, key);
    const fromEngine = await postChunked(`${engine.baseURL}/chat/completions`, size, key);
    for (const answer of [fromArc, fromEngine]) {
      assert.equal(answer.status, 413, answer.body);
      const { error } = JSON.parse(answer.body) as { error: Record<string, unknown> };
      assert.deepEqual(
        [error.type, error.param, error.code],
        ["invalid_request_error", null, "request_too_large"],
        answer.body,
      );
      assert.match(String(error.message), /exceeds the limit of 10485760 bytes/);
    }
    // Arc's own routes answer the same size 413 in Arc's shape, and the server goes on serving
    const traces = await postChunked(`${arc.url}/v1/traces`, size, key);
    assert.equal(traces.status, 413);
    assert.equal((JSON.parse(traces.body) as { error: { type: string } }).error.type, "payload_too_large");
    assert.equal((await fetch(`${arc.url}/health`)).status, 200);
  });

  it("answers an unknown /v1 route 404 Invalid URL on both", async () => {
    const key = arc.credentials?.tenantKey ?? "";
    const init = { headers: { authorization: `Bearer ${key}` } };
    const fromArc = await errorOf(await fetch(`${arc.url}/v1/assistants`, init));
    const fromEngine = await errorOf(await fetch(`${engine.baseURL}/assistants`, init));
    assert.deepEqual(fromArc, {
      status: 404,
      error: {
        message: "Invalid URL (GET /v1/assistants)",
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    });
    assert.deepEqual(fromEngine, fromArc);
  });
});
