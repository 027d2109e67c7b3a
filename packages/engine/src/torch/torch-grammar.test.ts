/**
 * Constrained decoding on the PyTorch engine: a required tool call and JSON-schema output from the shipped toolcall
 * model, the same tokens as the embedded engine's greedy constrained samples, and the same grammar errors.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type JsonSchema, type OutputGrammar, validateJsonSchema } from "@arc/core";
import { TOOLCALL_TOOLS } from "@arc/core/families";
import { ambiguousNesting, chainOfChoices } from "../grammar/__fixtures__/hostile-schemas.ts";
import { GrammarError, MAX_LIVE_STATES, MAX_MASK_STEPS } from "../grammar/grammar-bounds.ts";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { arcJsonFormat, hermesFormat } from "../server/tool-calls/tool-call-format.ts";
import { torchUnavailable } from "./__fixtures__/torch-available.ts";
import { TorchInferenceEngine } from "./torch-inference-engine.ts";

const MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const BPE_MODEL = fileURLToPath(new URL("../../../../models/toolcall-bpe", import.meta.url));
const skip = torchUnavailable();

const forecast = {
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

describe("constrained decoding on the PyTorch engine", { skip }, () => {
  let torch: TorchInferenceEngine;
  let embedded: EmbeddedInferenceEngine;
  before(async () => {
    torch = await TorchInferenceEngine.load(MODEL);
    embedded = await EmbeddedInferenceEngine.load(MODEL);
  });
  after(() => torch?.close());

  const asks = [
    "Tell me a joke.",
    "Book a table for 4 at Nobu on 2026-05-01.",
    "How many yen is 250 euros?",
  ].map((q) => [{ role: "user", content: q }]);

  it("writes a call of the offered tools, arguments valid against their schema, as the embedded engine does", async () => {
    const grammar = arcJsonFormat.callGrammar(
      TOOLCALL_TOOLS.map((t) => ({ name: t.name, parameters: { ...t.parameters } })),
    );
    const requests = asks.map((messages) => ({ messages, grammar, maxTokens: 120, temperature: 0 }));
    const [fromTorch, fromEmbedded] = await Promise.all([
      torch.generate(requests),
      embedded.generate(requests),
    ]);
    for (const [i, result] of fromTorch.entries()) {
      const [call] = arcJsonFormat.parse(result.text).toolCalls;
      assert.ok(call, `not a call: ${result.text}`);
      const tool = TOOLCALL_TOOLS.find((t) => t.name === call.name);
      assert.ok(tool, `not an offered tool: ${call.name}`);
      assert.deepEqual(validateJsonSchema(JSON.parse(call.arguments), tool.parameters), []);
      assert.equal(result.text, fromEmbedded[i].text, "the two engines agree on greedy constrained output");
    }
  });

  it("writes JSON matching a schema, sampled, with a seed", async () => {
    const grammar: OutputGrammar = { kind: "json-schema", schema: forecast };
    const results = await torch.generate([
      { messages: asks[2], grammar, maxTokens: 200, temperature: 1, seed: 7, n: 3 },
    ]);
    for (const r of results) {
      if (r.finishReason === "length") continue;
      assert.deepEqual(validateJsonSchema(JSON.parse(r.text), forecast as unknown as JsonSchema), [], r.text);
    }
    assert.ok(results.some((r) => r.finishReason === "stop"));
  });

  it("constrains a BPE model's tokens alike: a Hermes call on models/toolcall-bpe, as the embedded engine writes it", async () => {
    const bpeTorch = await TorchInferenceEngine.load(BPE_MODEL);
    try {
      const bpeEmbedded = await EmbeddedInferenceEngine.load(BPE_MODEL);
      const weather = TOOLCALL_TOOLS.find((t) => t.name === "get_weather")!;
      const grammar = hermesFormat.callGrammar([
        { name: weather.name, parameters: { ...weather.parameters } },
      ]);
      const requests = asks.map((messages) => ({ messages, grammar, maxTokens: 60, temperature: 0 }));
      const [fromTorch, fromEmbedded] = await Promise.all([
        bpeTorch.generate(requests),
        bpeEmbedded.generate(requests),
      ]);
      for (const [i, result] of fromTorch.entries()) {
        const [call] = hermesFormat.parse(result.text).toolCalls;
        assert.equal(call?.name, "get_weather", result.text);
        assert.deepEqual(validateJsonSchema(JSON.parse(call.arguments), weather.parameters), []);
        assert.equal(result.text, fromEmbedded[i].text);
      }
    } finally {
      await bpeTorch.close();
    }
  });

  it("names a schema it cannot follow", async () => {
    await assert.rejects(
      torch.generate([
        { messages: asks[0], grammar: { kind: "json-schema", schema: { type: "text" } }, maxTokens: 4 },
      ]),
      /grammar\.schema\.type: expected one of object, array, string, number, integer, boolean, null, got "text"/,
    );
  });

  it("follows 16 levels of anyOf over two $refs to one place at once, as the embedded engine does", async () => {
    const started = performance.now();
    const [result] = await torch.generate([
      {
        messages: asks[0],
        grammar: { kind: "json-schema", schema: chainOfChoices(16) },
        maxTokens: 8,
        temperature: 0,
      },
    ]);
    assert.ok(result.text.startsWith('"'), result.text);
    assert.ok(performance.now() - started < 10_000, `${performance.now() - started} ms`);
  });

  it("fails a request whose grammar is over its bounds alone, naming the bound, while a request batched with it streams on", async () => {
    const heard: string[] = [];
    const good = torch.generate([{ messages: asks[0], maxTokens: 24, temperature: 0, ignoreEos: true }], {
      onToken: (e) => heard.push(e.textDelta),
    });
    const cyclic = torch.generate([
      { messages: asks[1], maxTokens: 4, grammar: { kind: "json-schema", schema: { $ref: "#" } } },
    ]);
    const ambiguous = torch.generate([
      { messages: asks[2], maxTokens: 120, grammar: { kind: "json-schema", schema: ambiguousNesting() } },
    ]);
    await assert.rejects(
      cyclic,
      (e: unknown) => e instanceof GrammarError && /\(a \$ref cycle\)/.test(e.message),
    );
    await assert.rejects(
      ambiguous,
      (e: unknown) =>
        e instanceof GrammarError &&
        new RegExp(`more than (${MAX_LIVE_STATES} states at once|${MAX_MASK_STEPS} matcher steps)`).test(
          e.message,
        ),
    );
    const [result] = await good;
    assert.equal(result.outputTokens.length, 24);
    assert.equal(heard.join(""), result.text);
  });
});
