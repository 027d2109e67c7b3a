/**
 * `arc engine serve` as the official `openai` client sees it, on the shipped toolcall model: tool calls for each
 * `tool_choice`, streamed and not, a multi-turn tool conversation, structured output, and OpenAI's error shapes.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type JsonSchema, toOpenAiTools, validateJsonSchema } from "@arc/core";
import { TOOLCALL_TOOLS } from "@arc/core/families";
import OpenAI from "openai";
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { SPECIAL_TOKENS, type SpecialToken, specialId } from "../tokenizer/byte-tokenizer.ts";
import { renderChat } from "../tokenizer/chat-template.ts";
import { type RunningEngineServer, startEngineServer } from "./start-engine-server.ts";

const MODEL_DIR = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const KEY = "sk-serve-test";
const tools = toOpenAiTools(TOOLCALL_TOOLS) as unknown as ChatCompletionTool[];
const names = TOOLCALL_TOOLS.map((t) => t.name);
const question = "What's the weather in Paris in celsius?";
const ask = [{ role: "user" as const, content: question }];

/** The id of a token of the byte-level model, from a log-prob entry: its byte, or its special-token string. */
function tokenId(entry: { token: string; bytes: number[] | null }): number {
  if (entry.bytes?.length) return entry.bytes[0];
  assert.ok(SPECIAL_TOKENS.includes(entry.token as SpecialToken), entry.token);
  return specialId(entry.token as SpecialToken);
}

/** A greedy answer's tokens and, at each, the log-probs of the tokens it lists by id. */
function positions(r: OpenAI.ChatCompletion): { token: number; top: Map<number, number> }[] {
  return (r.choices[0].logprobs?.content ?? []).map((e) => ({
    token: tokenId(e),
    top: new Map(e.top_logprobs.map((t) => [tokenId(t), t.logprob])),
  }));
}

/**
 * Holds two greedy answers to one prompt to OpenAI's definition of `logit_bias`, `frequency_penalty` and
 * `presence_penalty`: `logit[j] + bias[j] - count[j] * frequency - (count[j] > 0) * presence`, `count[j]` being how
 * often token j was sampled before. At each position where both answers have written the same tokens so far, the
 * log-prob gap between two tokens both list moves by exactly that much from `plain` to `adjusted` (a gap leaves the
 * normalizer out). Returns the two counts of each pair checked.
 */
function checkAdjusted(
  plain: OpenAI.ChatCompletion,
  adjusted: OpenAI.ChatCompletion,
  settings: { bias?: Record<number, number>; frequency?: number; presence?: number },
): [number, number][] {
  const { bias = {}, frequency = 0, presence = 0 } = settings;
  const shift = (token: number, counts: Map<number, number>) => {
    const count = counts.get(token) ?? 0;
    return (bias[token] ?? 0) - count * frequency - (count > 0 ? presence : 0);
  };
  const [p, a] = [positions(plain), positions(adjusted)];
  const counts = new Map<number, number>();
  const checked: [number, number][] = [];
  for (let k = 0; k < Math.min(p.length, a.length); k++) {
    const shared = [...p[k].top.keys()].filter((t) => a[k].top.has(t));
    for (const x of shared) {
      for (const y of shared) {
        if (x >= y) continue;
        const want = p[k].top.get(x)! - p[k].top.get(y)! + shift(x, counts) - shift(y, counts);
        const got = a[k].top.get(x)! - a[k].top.get(y)!;
        assert.ok(
          Math.abs(got - want) < 2e-3,
          `position ${k}, tokens ${x} and ${y}: gap ${got}, expected ${want}`,
        );
        checked.push([counts.get(x) ?? 0, counts.get(y) ?? 0]);
      }
    }
    if (p[k].token !== a[k].token) break;
    counts.set(p[k].token, (counts.get(p[k].token) ?? 0) + 1);
  }
  return checked;
}

describe("arc engine serve, as the official openai client expects it", () => {
  let server: RunningEngineServer;
  let client: OpenAI;

  before(async () => {
    const engine = await EmbeddedInferenceEngine.load(MODEL_DIR);
    server = await startEngineServer(engine, { modelId: "toolcall-base", apiKey: KEY });
    client = new OpenAI({ baseURL: server.baseURL, apiKey: KEY, maxRetries: 0 });
  });
  after(() => server.close());

  const create = (body: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming>) =>
    client.chat.completions.create({
      model: "toolcall-base",
      messages: ask,
      temperature: 0,
      max_tokens: 96,
      ...body,
    });

  it("tool_choice auto: the call comes back as tool_calls with finish_reason tool_calls", async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await create({ tools });
    const [choice] = r.choices;
    assert.equal(choice.finish_reason, "tool_calls");
    assert.equal(choice.message.content, null);
    const [call] = choice.message.tool_calls ?? [];
    assert.ok(call && call.type === "function");
    assert.match(call.id, /^call_[0-9a-f]{24}$/);
    assert.equal(call.function.name, "get_weather");
    assert.deepEqual(JSON.parse(call.function.arguments), { city: "Paris", unit: "c" });
    assert.equal(r.model, "toolcall-base", "model is the name the client asked for");
    assert.ok(
      r.created >= before && r.created <= Math.ceil(Date.now() / 1000),
      "created is the request's time",
    );
  });

  it("tool_choice none: content only, the model's text as it wrote it", async () => {
    const r = await create({ tools, tool_choice: "none" });
    assert.equal(r.choices[0].finish_reason, "stop");
    assert.equal(r.choices[0].message.tool_calls, undefined);
    assert.match(r.choices[0].message.content ?? "", /^\{"tool":"get_weather"/);
  });

  it("tool_choice required: a call of one of the tools", async () => {
    const r = await create({
      tools,
      tool_choice: "required",
      messages: [{ role: "user", content: "Tell me a joke." }],
    });
    const [call] = r.choices[0].message.tool_calls ?? [];
    assert.ok(call && call.type === "function" && names.includes(call.function.name));
    JSON.parse(call.function.arguments);
    assert.equal(r.choices[0].finish_reason, "tool_calls");
  });

  it("a named function: that call, arguments valid against its schema, finish_reason stop as OpenAI gives it", async () => {
    // OpenAI: when tool_choice names a function, the choice ends with "stop", not "tool_calls".
    const r = await create({
      tools,
      tool_choice: { type: "function", function: { name: "convert_currency" } },
    });
    const [call] = r.choices[0].message.tool_calls ?? [];
    assert.ok(call && call.type === "function");
    assert.equal(call.function.name, "convert_currency");
    const schema = TOOLCALL_TOOLS.find((t) => t.name === "convert_currency")!.parameters;
    assert.deepEqual(validateJsonSchema(JSON.parse(call.function.arguments), schema), []);
    assert.equal(r.choices[0].finish_reason, "stop");
  });

  it("streams tool calls as delta tool_calls, usage null on every chunk but the last", async () => {
    const stream = client.chat.completions.stream({
      model: "toolcall-base",
      messages: ask,
      tools,
      temperature: 0,
      max_tokens: 96,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    stream.on("chunk", (chunk) => chunks.push(chunk));
    const final = await stream.finalChatCompletion();
    const [call] = final.choices[0].message.tool_calls ?? [];
    assert.ok(call && call.type === "function");
    assert.equal(call.function.name, "get_weather");
    assert.deepEqual(JSON.parse(call.function.arguments), { city: "Paris", unit: "c" });
    assert.equal(final.choices[0].finish_reason, "tool_calls");
    const fragments = chunks.filter((c) => c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments);
    assert.ok(
      fragments.length > 5,
      `the arguments stream as they are written (${fragments.length} fragments)`,
    );
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === null));
    assert.ok((chunks.at(-1)?.usage?.completion_tokens ?? 0) > 0);
    assert.ok(
      chunks.every((c) => c.choices.every((ch) => !ch.delta.content?.includes("tool"))),
      "no call text leaks as content",
    );
  });

  it("a multi-turn tool conversation: the assistant's tool_calls and the tool result are in the prompt", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      ...ask,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris","unit":"c"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"temp_c":21}' },
    ];
    const r = await create({ tools, messages, max_tokens: 24 });
    const expected = renderChat([
      { role: "user", content: question },
      { role: "assistant", content: '{"tool":"get_weather","args":{"city":"Paris","unit":"c"}}' },
      { role: "tool", content: '{"temp_c":21}' },
    ]);
    assert.equal(r.usage?.prompt_tokens, expected.length);
    assert.ok(r.choices[0].message.content !== null || (r.choices[0].message.tool_calls?.length ?? 0) > 0);
  });

  it("json_schema output validates against its schema, streamed and not", async () => {
    const schema = {
      type: "object",
      properties: {
        city: { type: "string" },
        unit: { type: "string", enum: ["c", "f"] },
        days: { type: "integer" },
        indoors: { type: "boolean" },
      },
      required: ["city", "unit", "days", "indoors"],
      additionalProperties: false,
    };
    const response_format = {
      type: "json_schema" as const,
      json_schema: { name: "forecast", strict: true, schema },
    };
    const r = await create({ response_format });
    assert.deepEqual(
      validateJsonSchema(JSON.parse(r.choices[0].message.content ?? ""), schema as JsonSchema),
      [],
    );
    const stream = await client.chat.completions.create({
      model: "toolcall-base",
      messages: ask,
      response_format,
      temperature: 0.8,
      seed: 3,
      max_tokens: 96,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    assert.deepEqual(validateJsonSchema(JSON.parse(text), schema as JsonSchema), []);
    const any = await create({ response_format: { type: "json_object" }, temperature: 1, seed: 5 });
    const value = JSON.parse(any.choices[0].message.content ?? "");
    assert.ok(typeof value === "object" && value !== null && !Array.isArray(value));
  });

  it("models.retrieve answers the served model and 404 model_not_found for another", async () => {
    assert.equal((await client.models.retrieve("toolcall-base")).id, "toolcall-base");
    // OpenAI: {"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.",
    //          "type":"invalid_request_error","param":null,"code":"model_not_found"}}
    await assert.rejects(client.models.retrieve("gpt-9"), (e: InstanceType<typeof OpenAI.NotFoundError>) => {
      assert.equal(e.status, 404);
      assert.deepEqual(e.error, {
        message: "The model `gpt-9` does not exist or you do not have access to it.",
        type: "invalid_request_error",
        param: null,
        code: "model_not_found",
      });
      return true;
    });
  });

  it("refuses an argument OpenAI does not document, as OpenAI does", async () => {
    // OpenAI: 400 {"error":{"message":"Unrecognized request argument supplied: top_k_typo",
    //               "type":"invalid_request_error","param":null,"code":null}}
    for (const [extra, message] of [
      [{ top_k_typo: 3 }, "Unrecognized request argument supplied: top_k_typo"],
      [{ thinking: true, ignore_eos: true }, "Unrecognized request arguments supplied: ignore_eos, thinking"],
    ] as const) {
      await assert.rejects(create(extra as object), (e: InstanceType<typeof OpenAI.BadRequestError>) => {
        assert.equal(e.status, 400);
        assert.deepEqual(e.error, { message, type: "invalid_request_error", param: null, code: null });
        return true;
      });
    }
  });

  it("accepts the documented parameters it ignores, which change nothing in what the model writes", async () => {
    const plain = await create({ max_tokens: 24 });
    const ignored = await create({
      max_tokens: 24,
      user: "user-1",
      safety_identifier: "hashed-user",
      store: true,
      metadata: { ticket: "42" },
      service_tier: "auto",
      prompt_cache_key: "weather",
      prompt_cache_retention: "24h",
      prediction: { type: "content", content: "sunny" },
      parallel_tool_calls: false,
      modalities: ["text"],
      reasoning_effort: null,
      stream_options: null,
    });
    assert.equal(ignored.choices[0].message.content, plain.choices[0].message.content);
  });

  it("refuses, naming it, each parameter it cannot honour rather than ignoring it", async () => {
    const refused: [string, Record<string, unknown>][] = [
      ["functions", { functions: [{ name: "get_weather", parameters: { type: "object" } }] }],
      ["function_call", { function_call: "auto" }],
      ["audio", { audio: { voice: "alloy", format: "mp3" } }],
      ["reasoning_effort", { reasoning_effort: "low" }],
      ["verbosity", { verbosity: "low" }],
      ["web_search_options", { web_search_options: {} }],
      ["moderation", { moderation: { model: "omni-moderation-latest" } }],
    ];
    for (const [param, body] of refused) {
      await assert.rejects(create(body), (e: InstanceType<typeof OpenAI.BadRequestError>) => {
        assert.equal(e.status, 400, param);
        assert.equal(e.param, param);
        assert.equal(e.code, "unsupported_parameter");
        assert.match(e.message, new RegExp(`Unsupported parameter: '${param}' is not supported`));
        return true;
      });
    }
    await assert.rejects(
      create({ modalities: ["text", "audio"] }),
      (e: InstanceType<typeof OpenAI.BadRequestError>) => {
        assert.deepEqual([e.status, e.param, e.code], [400, "modalities", "unsupported_value"]);
        return true;
      },
    );
  });

  const greedy = (body: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
    create({
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 40,
      logprobs: true,
      top_logprobs: 20,
      ...body,
    });

  it("logit_bias adds to the logits before sampling: 100 makes a token certain, -100 bans it", async () => {
    const Z = "Z".charCodeAt(0);
    const forced = await greedy({ max_tokens: 6, logit_bias: { [Z]: 100 } });
    assert.equal(forced.choices[0].message.content, "ZZZZZZ");
    const plain = await greedy();
    const first = positions(plain)[0].token;
    const banned = await greedy({ logit_bias: { [first]: -100 } });
    assert.notEqual(positions(banned)[0].token, first);
    const bias = { [first]: -1.5, [Z]: 2.25, 10: 0.5 };
    assert.ok(checkAdjusted(plain, await greedy({ logit_bias: bias }), { bias }).length > 0);
  });

  it("frequency_penalty lowers a token's logit by the penalty times its count so far, as OpenAI defines it", async () => {
    const plain = await greedy();
    const adjusted = await greedy({ frequency_penalty: 0.3 });
    const checked = checkAdjusted(plain, adjusted, { frequency: 0.3 });
    assert.ok(
      checked.some(([x, y]) => Math.abs(x - y) >= 2),
      "a pair of tokens sampled a different number of times, twice or more apart",
    );
    const strong = await greedy({ frequency_penalty: 2 });
    assert.notEqual(strong.choices[0].message.content, plain.choices[0].message.content);
  });

  it("presence_penalty lowers a token's logit once it has been sampled, whatever its count", async () => {
    const plain = await greedy();
    const checked = checkAdjusted(plain, await greedy({ presence_penalty: 0.3 }), { presence: 0.3 });
    assert.ok(
      checked.some(([x, y]) => (x >= 2 && y === 0) || (y >= 2 && x === 0)),
      "a token sampled twice or more against one never sampled",
    );
    const both = await greedy({ presence_penalty: -0.4, frequency_penalty: 0.25 });
    checkAdjusted(plain, both, { presence: -0.4, frequency: 0.25 });
  });

  it("answers every error in OpenAI's shape: key, JSON, route, context length, parameter", async () => {
    const post = (body: string, key = KEY, path = "chat/completions") =>
      fetch(`${server.baseURL}/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body,
      });
    const shape = async (res: Response, status: number, code: string | null, param: string | null) => {
      assert.equal(res.status, status);
      const { error } = (await res.json()) as { error: Record<string, unknown> };
      assert.deepEqual(Object.keys(error).sort(), ["code", "message", "param", "type"]);
      assert.equal(error.type, "invalid_request_error");
      assert.equal(error.code, code);
      assert.equal(error.param, param);
      return String(error.message);
    };
    // OpenAI: 401 {"error":{"message":"Incorrect API key provided: sk-wrong...","type":"invalid_request_error",
    //               "param":null,"code":"invalid_api_key"}}
    await shape(await post("{}", "sk-wrong"), 401, "invalid_api_key", null);
    // OpenAI: 400 {"error":{"message":"We could not parse the JSON body of your request. ...",
    //               "type":"invalid_request_error","param":null,"code":null}}
    assert.match(await shape(await post("{not json"), 400, null, null), /could not parse the JSON body/);
    // OpenAI: 404 {"error":{"message":"Invalid URL (POST /v1/chat/completion)","type":"invalid_request_error",
    //               "param":null,"code":null}}
    assert.equal(
      await shape(await post("{}", KEY, "chat/completion"), 404, null, null),
      "Invalid URL (POST /v1/chat/completion)",
    );
    // OpenAI: 400 {"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages
    //               resulted in 8215 tokens. ...","type":"invalid_request_error","param":"messages",
    //               "code":"context_length_exceeded"}}
    const long = JSON.stringify({
      model: "toolcall-base",
      messages: [{ role: "user", content: "x".repeat(2000) }],
    });
    assert.match(
      await shape(await post(long), 400, "context_length_exceeded", "messages"),
      /maximum context length is 1024 tokens/,
    );
    const badChoice = JSON.stringify({
      model: "toolcall-base",
      messages: ask,
      tools,
      tool_choice: { type: "function", function: { name: "fly" } },
    });
    assert.match(
      await shape(await post(badChoice), 400, null, "tool_choice"),
      /"fly" is not among the tools offered/,
    );
    const badSchema = JSON.stringify({
      model: "toolcall-base",
      messages: ask,
      response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "text" } } },
    });
    await shape(await post(badSchema), 400, null, "response_format.json_schema.schema");
  });
});
