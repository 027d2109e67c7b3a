/** One request's failure in the embedded engine fails that request only, and never leaves a call unanswered. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TokenEvent } from "@arc/core";
import { GrammarError } from "../grammar/grammar-bounds.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { EmbeddedInferenceEngine } from "./embedded-inference-engine.ts";

const tiny = configForSize("tiny");
const messages = [{ role: "user", content: "hello" }];

/** Rejects when `promise` has not settled within `ms`: a call left unanswered fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe("EmbeddedInferenceEngine under failing requests", () => {
  it("fails the request whose grammar allows no output, while a request sharing its batch generates on", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1));
    const heard: TokenEvent[] = [];
    const running = engine.generate([{ messages, maxTokens: 40, ignoreEos: true, seed: 1 }], {
      onToken: (e) => heard.push(e),
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const empty = engine.generate([
      { messages, maxTokens: 8, grammar: { kind: "json-schema", schema: { anyOf: [] } } },
    ]);
    await assert.rejects(
      within(empty, 10_000),
      (error: unknown) => error instanceof GrammarError && /allows no token/.test(error.message),
    );
    const [result] = await within(running, 30_000);
    assert.equal(result.outputTokens.length, 40);
    assert.equal(result.finishReason, "length");
    assert.equal(heard.length, 40);
  });

  it("fails only the call whose listener throws", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1));
    const thrower = engine.generate([{ messages, maxTokens: 20, ignoreEos: true }], {
      onToken: () => {
        throw new Error("listener broke");
      },
    });
    const other = engine.generate([{ messages, maxTokens: 20, ignoreEos: true }]);
    await assert.rejects(within(thrower, 10_000), /listener broke/);
    assert.equal((await within(other, 30_000))[0].outputTokens.length, 20);
  });

  it("rejects the calls being admitted when the math fails, instead of leaving them unanswered", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1));
    await engine.close(); // the weights' tensors are freed: the next forward pass throws
    await assert.rejects(within(engine.generate([{ messages, maxTokens: 4 }]), 10_000), (error: unknown) => {
      assert.doesNotMatch(String(error), /no answer within/);
      return true;
    });
  });
});
