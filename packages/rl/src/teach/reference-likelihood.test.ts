import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TeachMessage, TokenBatch } from "@arc/core";
import { configForSize, EmbeddedTrainEngine, initWeights, renderChatExample } from "@arc/engine";
import { trainEngineReferenceLikelihood } from "./reference-likelihood.ts";

const tiny = configForSize("tiny");
const ask = (content: string): TeachMessage[] => [{ role: "user", content }];
const rows: [TeachMessage[], string][] = [
  [ask("Weather in Oslo in celsius?"), '{"tool":"get_weather","args":{"city":"Oslo","unit":"c"}}'],
  [ask("Hint: March is month 03.\nTable for 2 at Nori, March 3"), '{"tool":"book_table"}'],
  [ask("x"), "y"],
];

async function student() {
  const engine = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 4), { learningRate: 1e-2 });
  const passes: number[] = [];
  const counted = {
    logprobs: (batch: TokenBatch) => {
      passes.push(batch.promptTokens.length);
      return engine.logprobs(batch);
    },
  };
  return { engine, passes, counted };
}

describe("trainEngineReferenceLikelihood", () => {
  it("gives each reply's teacher-forced probability, end-of-turn token included, from one shared pass", async () => {
    const { engine, passes, counted } = await student();
    const likelihood = trainEngineReferenceLikelihood(counted, renderChatExample, () => "");
    const together = await Promise.all(
      rows.map(([messages, reply]) => likelihood.probability(messages, reply)),
    );
    assert.deepEqual(passes, [3], "requests of one turn share a pass");
    for (const [i, [messages, reply]] of rows.entries()) {
      const alone = renderChatExample(messages, reply);
      const [logprobs] = await engine.logprobs({
        promptTokens: [alone.promptTokens],
        outputTokens: [alone.outputTokens],
      });
      assert.equal(logprobs.length, reply.length + 1, "every byte of the reply and its end-of-turn token");
      const expected = Math.exp(logprobs.reduce((a, b) => a + b, 0));
      assert.ok(together[i] > 0 && together[i] < 1);
      assert.ok(Math.abs(together[i] - expected) <= 1e-5 * expected, `${together[i]} vs ${expected} alone`);
    }
    await engine.close();
  });

  it("rises for the reply the student is trained to write", async () => {
    const { engine } = await student();
    const likelihood = trainEngineReferenceLikelihood(engine, renderChatExample, () => "");
    const [messages, reply] = rows[2];
    const before = await likelihood.probability(messages, reply);
    const example = renderChatExample(messages, reply);
    for (let step = 0; step < 5; step++)
      await engine.step(
        { promptTokens: [example.promptTokens], outputTokens: [example.outputTokens] },
        { kind: "sft" },
      );
    const after = await likelihood.probability(messages, reply);
    assert.ok(after > 2 * before, `${before} -> ${after}`);
    await engine.close();
  });

  it("rejects every request of a pass the engine fails", async () => {
    const failing = {
      logprobs: async () => {
        throw new Error("engine closed");
      },
    };
    const likelihood = trainEngineReferenceLikelihood(failing, renderChatExample, () => "");
    const results = await Promise.allSettled(rows.map(([m, r]) => likelihood.probability(m, r)));
    assert.deepEqual(
      results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "fulfilled")),
      ["engine closed", "engine closed", "engine closed"],
    );
  });
});
