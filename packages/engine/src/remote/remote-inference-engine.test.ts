import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { GenResult } from "@arc/core";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import { readHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { type RunningEngineServer, startEngineServer } from "../server/start-engine-server.ts";
import { byteChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { RemoteInferenceEngine } from "./remote-inference-engine.ts";

const MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));

/** Chat requests of toolcall tasks. */
const requests = (count: number) =>
  generateToolcallTasks({ split: "eval", seed: 33, count }).map((t, i) => ({
    id: `q${i}`,
    messages: toolcallFamily.prompt(t),
    n: 2,
    temperature: 1,
    seed: 100 + i,
    maxTokens: 32,
  }));

/** The remote samples equal the in-process ones: ids, tokens, text, finish reasons, log-probs within 1e-6. */
function assertSameSamples(got: GenResult[], want: GenResult[]): void {
  assert.equal(got.length, want.length);
  got.forEach((r, i) => {
    assert.deepEqual(
      [r.requestId, r.sampleIndex, r.promptTokens, r.outputTokens, r.text, r.finishReason],
      [
        want[i].requestId,
        want[i].sampleIndex,
        want[i].promptTokens,
        want[i].outputTokens,
        want[i].text,
        want[i].finishReason,
      ],
    );
    r.outputLogprobs.forEach((x, j) => {
      assert.ok(Math.abs(x - want[i].outputLogprobs[j]) < 1e-6);
    });
  });
}

/** Resolves when the server hands its next generation to `engine`, so an update can be sent while it decodes. */
function engineEntered(engine: EmbeddedInferenceEngine): Promise<void> {
  const generate = engine.generate;
  return new Promise((resolve) => {
    engine.generate = (...args) => {
      engine.generate = generate;
      resolve();
      return generate.apply(engine, args);
    };
  });
}

describe("the remote inference engine, on an inference server over HTTP", () => {
  let served: EmbeddedInferenceEngine;
  let server: RunningEngineServer;
  let remote: RemoteInferenceEngine;

  before(async () => {
    served = await EmbeddedInferenceEngine.load(MODEL, { maxBatchSize: 16 });
    server = await startEngineServer(served, {
      modelId: "toolcall-base",
      tokenizer: byteChatTokenizer,
      allowWeightUpdates: true,
    });
    remote = await RemoteInferenceEngine.connect({
      url: server.baseURL,
      model: "toolcall-base",
      modelDir: MODEL,
    });
  });
  after(() => server.close());

  it("samples what the engine samples in process: tokens, log-probs, text, versions", async () => {
    const local = await EmbeddedInferenceEngine.load(MODEL, { maxBatchSize: 16 });
    const [got, want] = [await remote.generate(requests(3)), await local.generate(requests(3))];
    assert.equal(got.length, 6);
    assertSameSamples(got, want);
    assert.ok(got.every((r) => r.outputVersions.every((v) => v === 0)));
  });

  it("pushes weights as tensors or a checkpoint, and the samples carry the server's version", async () => {
    await remote.setWeights(4, { kind: "tensors", tensors: (await readHfCheckpoint(MODEL)).tensors });
    assert.deepEqual([remote.getVersion(), served.getVersion()], [4, 4]);
    await remote.setWeights(5, { kind: "checkpoint", dir: MODEL });
    const [r] = await remote.generate([{ ...requests(1)[0], n: 1 }]);
    assert.ok(r.outputVersions.length > 0 && r.outputVersions.every((v) => v === 5));
  });

  it("samples through SGLang's /generate alike, and updates its weights between a pause and a continue", async () => {
    const sglang = await RemoteInferenceEngine.connect({
      url: server.baseURL,
      model: "toolcall-base",
      modelDir: MODEL,
      version: 6,
      api: "sglang",
    });
    const local = await EmbeddedInferenceEngine.load(MODEL, { maxBatchSize: 16 });
    const [got, want] = [await sglang.generate(requests(2)), await local.generate(requests(2))];
    assert.equal(got.length, 4);
    assertSameSamples(got, want);
    assert.ok(
      got.every((r) => r.outputVersions.every((v) => v === 6)),
      "the server's version of each token",
    );
    // a request in flight over the update: paused in place, it goes on afterwards with the new weights
    const entered = engineEntered(served);
    const long = sglang.generate([{ ...requests(1)[0], n: 1, maxTokens: 400, ignoreEos: true }]);
    await entered;
    await sglang.setWeights(7, { kind: "checkpoint", dir: MODEL });
    const [spanning] = await long;
    assert.equal(spanning.outputTokens.length, 400);
    assert.equal(spanning.outputVersions[0], 6);
    assert.equal(spanning.outputVersions.at(-1), 7);
    await assert.rejects(
      RemoteInferenceEngine.connect({
        url: server.baseURL,
        modelDir: MODEL,
        api: "sglang",
        weightSync: "lora",
      }),
      /generator.api sglang takes weightSync disk/,
    );
  });

  it("carries a logit bias and penalties to the server, through /v1/completions and /generate alike", async () => {
    const sglang = await RemoteInferenceEngine.connect({
      url: server.baseURL,
      model: "toolcall-base",
      modelDir: MODEL,
      api: "sglang",
    });
    const local = await EmbeddedInferenceEngine.load(MODEL, { maxBatchSize: 16 });
    const adjusted = requests(2).map((r) => ({
      ...r,
      logitBias: { [`${"{".charCodeAt(0)}`]: -3, 34: 1.5 },
      frequencyPenalty: 0.75,
      presencePenalty: -0.25,
    }));
    const want = await local.generate(adjusted);
    assertSameSamples(await remote.generate(adjusted), want);
    assertSameSamples(await sglang.generate(adjusted), want);
    const plain = await local.generate(requests(2));
    assert.notDeepEqual(
      want.map((r) => r.outputLogprobs),
      plain.map((r) => r.outputLogprobs),
      "the adjustment changes the distribution sampled from",
    );
  });

  it("ends aborted requests with finishReason abort", async () => {
    const controller = new AbortController();
    controller.abort();
    const results = await remote.generate(requests(1), { signal: controller.signal });
    assert.deepEqual(
      results.map((r) => r.finishReason),
      ["abort", "abort"],
    );
  });

  it("names an unreachable server, a wrong model and a server that takes no weights", async () => {
    await assert.rejects(
      RemoteInferenceEngine.connect({ url: "http://127.0.0.1:9/v1", model: "m", modelDir: MODEL }),
      /http:\/\/127.0.0.1:9\/v1: no inference server answers there/,
    );
    const wrong = await RemoteInferenceEngine.connect({
      url: server.baseURL,
      model: "other",
      modelDir: MODEL,
    });
    await assert.rejects(
      wrong.generate(requests(1)),
      /\/v1\/completions: 404 The model `other` does not exist/,
    );
    const fixed = await startEngineServer(served, { modelId: "toolcall-base" });
    try {
      await assert.rejects(
        RemoteInferenceEngine.connect({ url: fixed.baseURL, model: "toolcall-base", modelDir: MODEL }),
        /update_weights_from_disk .*404.*--allow-weight-updates/,
      );
    } finally {
      await fixed.close();
    }
  });
});
