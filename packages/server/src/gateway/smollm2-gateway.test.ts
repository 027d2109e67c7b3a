/**
 * The gateway serving SmolLM2-135M-Instruct (imported from its PyPI wheel) on the embedded engine, through the
 * official openai client: tools rendered into the prompt by the imported ChatML template and tool calls read back in
 * its Hermes format (`<tool_call>{json}</tool_call>`), for each `tool_choice`; tool-call deltas streamed; a tool result
 * answered; `response_format` json_schema. Every answer parses.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import {
  smollm2Checkpoint,
  smollm2Unavailable,
} from "../../../engine/src/checkpoint/__fixtures__/smollm2.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather of a city",
      parameters: {
        type: "object",
        properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
        required: ["city", "unit"],
        additionalProperties: false,
      },
    },
  },
  {
    type: "function",
    function: {
      name: "convert_units",
      description: "Convert a quantity from one unit to another",
      parameters: {
        type: "object",
        properties: { value: { type: "number" }, from: { type: "string" }, to: { type: "string" } },
        required: ["value", "from", "to"],
        additionalProperties: false,
      },
    },
  },
];
const ask: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Is it raining in Paris?" }];

/** The function calls of a message, each checked to be a call of an offered tool with JSON object arguments. */
function calls(message: OpenAI.ChatCompletionMessage): { name: string; args: Record<string, unknown> }[] {
  return (message.tool_calls ?? []).map((call) => {
    assert.equal(call.type, "function");
    const fn = (call as OpenAI.ChatCompletionMessageFunctionToolCall).function;
    assert.ok(
      tools.some((t) => t.type === "function" && t.function.name === fn.name),
      `unknown tool ${fn.name}`,
    );
    const args = JSON.parse(fn.arguments);
    assert.equal(typeof args, "object");
    assert.match(call.id, /^call_/);
    return { name: fn.name, args };
  });
}

describe("the gateway serving SmolLM2-135M-Instruct", { skip: smollm2Unavailable() }, () => {
  let db: Database;
  let server: ReleaseTestServer;
  let client: OpenAI;

  before(async () => {
    const dir = await smollm2Checkpoint();
    db = await openPgliteDatabase("memory://");
    await migrate(db);
    server = await startReleaseTestServer(db, { startWorkers: false });
    await registerModelVersion(db, server.tenantId, {
      name: "smollm2",
      status: "promoted",
      artifactDir: dir,
      actor: "test",
    });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0, timeout: 600_000 });
  });

  after(async () => {
    await server?.close();
    await db?.close();
  });

  it("tool_choice required: one call of an offered tool, its arguments valid JSON of the tool's schema", async () => {
    const reply = await client.chat.completions.create({
      model: "arc",
      messages: ask,
      tools,
      tool_choice: "required",
      temperature: 0,
      max_tokens: 48,
    });
    const choice = reply.choices[0];
    assert.equal(choice.finish_reason, "tool_calls");
    const [call] = calls(choice.message);
    assert.equal(call.name, "get_weather");
    assert.deepEqual(Object.keys(call.args).sort(), ["city", "unit"]);
    assert.equal(call.args.city, "Paris");
  });

  it("tool_choice naming a function: that function is called and the choice ends with stop, as OpenAI's", async () => {
    const reply = await client.chat.completions.create({
      model: "arc",
      messages: [{ role: "user", content: "How many feet are 3 meters?" }],
      tools,
      tool_choice: { type: "function", function: { name: "convert_units" } },
      temperature: 0,
      max_tokens: 48,
    });
    const choice = reply.choices[0];
    assert.equal(choice.finish_reason, "stop");
    const [call] = calls(choice.message);
    assert.equal(call.name, "convert_units");
    assert.equal(typeof call.args.value, "number");
  });

  it("tool_choice auto and none: the answer is text or calls that parse; none never calls", async () => {
    for (const choice of ["auto", "none"] as const) {
      const reply = await client.chat.completions.create({
        model: "arc",
        messages: ask,
        tools,
        tool_choice: choice,
        temperature: 0,
        max_tokens: 32,
      });
      const { message, finish_reason } = reply.choices[0];
      const made = calls(message);
      if (choice === "none") assert.equal(made.length, 0);
      if (made.length > 0) assert.equal(finish_reason, "tool_calls");
      else {
        assert.ok(finish_reason === "stop" || finish_reason === "length", `${choice}: ${finish_reason}`);
        assert.ok((message.content ?? "").length > 0, `${choice}: neither text nor calls`);
      }
      assert.doesNotMatch(message.content ?? "", /<tool_call>/);
    }
  });

  it("streams a tool call's deltas, which the client assembles into the call", async () => {
    const stream = client.chat.completions.stream({
      model: "arc",
      messages: ask,
      tools,
      tool_choice: "required",
      temperature: 0,
      max_tokens: 48,
    });
    let argumentChunks = 0;
    stream.on("chunk", (chunk) => {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? [])
        if (call.function?.arguments) argumentChunks++;
    });
    const final = await stream.finalChatCompletion();
    const [call] = calls(final.choices[0].message);
    assert.equal(call.name, "get_weather");
    assert.equal(final.choices[0].finish_reason, "tool_calls");
    assert.ok(argumentChunks > 1, `the arguments came in ${argumentChunks} deltas`);
  });

  it("answers a tool's result in text", async () => {
    const reply = await client.chat.completions.create({
      model: "arc",
      messages: [
        ...ask,
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city": "Paris", "unit": "celsius"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"temperature": 18, "sky": "cloudy"}' },
      ],
      tools,
      tool_choice: "none",
      temperature: 0,
      max_tokens: 32,
    });
    const { message } = reply.choices[0];
    assert.equal(message.tool_calls, undefined);
    assert.match(message.content ?? "", /18/);
  });

  it("gives each token's log-prob and alternatives, and greedy's token is the likeliest", async () => {
    const reply = await client.chat.completions.create({
      model: "arc",
      messages: [{ role: "user", content: "What is the capital of France? Answer in one word." }],
      temperature: 0,
      max_tokens: 8,
      logprobs: true,
      top_logprobs: 3,
    });
    const tokens = reply.choices[0].logprobs?.content ?? [];
    assert.equal(tokens.length, reply.usage?.completion_tokens);
    assert.match(reply.choices[0].message.content ?? "", /Paris/);
    for (const t of tokens) {
      assert.ok(t.logprob <= 0);
      assert.equal(t.top_logprobs.length, 3);
      assert.equal(t.top_logprobs[0].token, t.token);
      assert.ok(Math.abs(t.top_logprobs[0].logprob - t.logprob) < 1e-5);
    }
  });

  it("response_format json_schema: the content is JSON of the schema", async () => {
    const reply = await client.chat.completions.create({
      model: "arc",
      messages: [
        { role: "system", content: "Answer with a JSON object with the keys city and country." },
        { role: "user", content: "Name a European capital and its country." },
      ],
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "capital",
          strict: true,
          schema: {
            type: "object",
            properties: { city: { type: "string" }, country: { type: "string" } },
            required: ["city", "country"],
            additionalProperties: false,
          },
        },
      },
      temperature: 0,
      max_tokens: 40,
    });
    const value = JSON.parse(reply.choices[0].message.content ?? "");
    assert.deepEqual(Object.keys(value).sort(), ["city", "country"]);
    assert.deepEqual(value, { city: "Paris", country: "France" });
  });
});
