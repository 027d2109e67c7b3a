/**
 * `arc engine serve` under hostile grammars: schemas that blow up, `$ref` cycles and grammars that fail while
 * generating get a fast answer naming the field and the bound, and never cost another request its answer or its
 * place in the queue. `server/src/serve/grammar-attack.alone.test.ts` times `/health` and other calls while they run.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { ambiguousNesting, chainOfChoices, chainOfPairs } from "../grammar/__fixtures__/hostile-schemas.ts";
import { MAX_GRAMMAR_STATES, MAX_LIVE_STATES, MAX_MASK_STEPS } from "../grammar/grammar-bounds.ts";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { type RunningEngineServer, startEngineServer } from "./start-engine-server.ts";

const tiny = configForSize("tiny");
const messages = [{ role: "user" as const, content: "hi" }];

/** A chat body whose output must match `schema`, through `response_format` or as the one tool's parameters. */
function constrained(schema: unknown, via: "response_format" | "tools", extra: Record<string, unknown> = {}) {
  return via === "response_format"
    ? {
        model: "arc-tiny",
        messages,
        response_format: { type: "json_schema", json_schema: { name: "x", schema } },
        ...extra,
      }
    : {
        model: "arc-tiny",
        messages,
        tools: [{ type: "function", function: { name: "f", parameters: schema } }],
        tool_choice: "required",
        ...extra,
      };
}

/** What the tests read of an answer: its error, when it is one. */
type ErrorBody = { error: { param: string | null; message: string } };

/** POSTs a chat body; gives up (and says so) after `ms`, so a request the server never answers fails the test. */
async function post(url: string, body: unknown, ms = 10_000) {
  const res = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ms),
  });
  return { status: res.status, body: (await res.json()) as ErrorBody };
}

describe("arc engine serve under hostile grammars", () => {
  let engine: EmbeddedInferenceEngine;
  let server: RunningEngineServer;

  before(async () => {
    engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1));
    server = await startEngineServer(engine, { modelId: "arc-tiny" });
  });
  after(() => server?.close());

  it("answers 16 levels of anyOf over two $refs at once, through response_format and through a required tool", async () => {
    for (const via of ["response_format", "tools"] as const) {
      const started = performance.now();
      const { status, body } = await post(
        server.baseURL,
        constrained(chainOfChoices(16), via, { max_tokens: 12 }),
      );
      assert.equal(status, 200, JSON.stringify(body));
      assert.ok(performance.now() - started < 5_000, `${via}: ${performance.now() - started} ms`);
    }
  });

  it("refuses a schema that compiles to more states than the bound with 400 naming the field and the bound", async () => {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "none", maxRetries: 0 });
    for (const [via, param] of [
      ["response_format", "response_format.json_schema.schema"],
      ["tools", "tools[0].function.parameters"],
    ] as const) {
      await assert.rejects(
        client.chat.completions.create(constrained(chainOfPairs(16), via) as never),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.BadRequestError, String(error));
          assert.equal(error.param, param);
          assert.match(
            error.message,
            new RegExp(`^400 ${param.replace(/[.[\]]/g, "\\$&")}\\.\\$defs\\.l\\d+\\.`),
          );
          assert.match(error.message, new RegExp(`more than ${MAX_GRAMMAR_STATES} grammar states`));
          return true;
        },
      );
    }
  });

  it("refuses a $ref cycle with 400 naming the $ref, through response_format and through a required tool", async () => {
    for (const [via, param] of [
      ["response_format", "response_format.json_schema.schema"],
      ["tools", "tools[0].function.parameters"],
    ] as const) {
      const { status, body } = await post(server.baseURL, constrained({ $ref: "#" }, via));
      assert.equal(status, 400, JSON.stringify(body));
      assert.equal(body.error.param, param);
      assert.ok(
        body.error.message.startsWith(`${param}.$ref: "#" leads back to ${param} `),
        body.error.message,
      );
      assert.match(body.error.message, /a \$ref cycle/);
    }
  });

  it("answers a good request with 200 after 300 requests with a cyclic schema (the pending count does not leak)", async () => {
    for (let i = 0; i < 300; i++) {
      const { status } = await post(
        server.baseURL,
        constrained({ $ref: "#" }, i % 2 ? "tools" : "response_format"),
      );
      assert.equal(status, 400);
    }
    const { status, body } = await post(server.baseURL, { model: "arc-tiny", messages, max_tokens: 2 });
    assert.equal(status, 200, JSON.stringify(body));
  });

  it("answers 400 to grammars that fail while generating, frees their places, and lets a streamed request beside them finish", async () => {
    const small = await startEngineServer(engine, { modelId: "arc-tiny", maxPendingRequests: 2 });
    try {
      const client = new OpenAI({ baseURL: small.baseURL, apiKey: "none", maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: "arc-tiny",
        messages,
        max_tokens: 80,
        stream: true,
        seed: 3,
      });
      const read = (async () => {
        let text = "";
        let finish: string | null = null;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? "";
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        return { text, finish };
      })();
      for (let i = 0; i < 3; i++) {
        const nothing = await post(
          small.baseURL,
          constrained({ anyOf: [] }, "response_format", { max_tokens: 8 }),
        );
        assert.equal(nothing.status, 400, JSON.stringify(nothing.body));
        assert.equal(nothing.body.error.param, "response_format.json_schema.schema");
        assert.match(nothing.body.error.message, /allows no token/);
        const ambiguous = await post(
          small.baseURL,
          constrained(ambiguousNesting(), "tools", { max_tokens: 200 }),
        );
        assert.equal(ambiguous.status, 400, JSON.stringify(ambiguous.body));
        assert.equal(ambiguous.body.error.param, "tools");
        // whichever bound it meets first: the states held at once, or the steps of one token's mask
        assert.match(
          ambiguous.body.error.message,
          new RegExp(`more than (${MAX_LIVE_STATES} states at once|${MAX_MASK_STEPS} matcher steps)`),
        );
      }
      const streamed = await read;
      assert.ok(streamed.finish === "stop" || streamed.finish === "length", JSON.stringify(streamed));
      const { status } = await post(small.baseURL, { model: "arc-tiny", messages, max_tokens: 2 });
      assert.equal(status, 200);
    } finally {
      await small.close();
    }
  });
});
