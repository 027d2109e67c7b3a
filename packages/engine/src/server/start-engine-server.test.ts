import assert from "node:assert/strict";
import { it } from "node:test";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { startEngineServer } from "./start-engine-server.ts";

it("keeps hono's already-sent answer a native Response for routes loaded after an engine was served", async () => {
  const config = configForSize("tiny");
  const engine = await EmbeddedInferenceEngine.create(config, initWeights(config, 1));
  const server = await startEngineServer(engine, { modelId: "tiny" });
  try {
    // fetch answers with Node's own Response, which serve() has swapped the global for hono's
    const nativeResponse = (await fetch(`${server.baseURL}/models`)).constructor;
    assert.notEqual(globalThis.Response, nativeResponse, "serve() swaps the global Response for hono's own");
    // a module loaded now (as the gateway's routes are, in a process that served an engine first) must still get the
    // sentinel that hono recognises as already sent: a native Response, not one of hono's
    const { RESPONSE_ALREADY_SENT } = await import("@hono/node-server/utils/response");
    assert.ok(RESPONSE_ALREADY_SENT instanceof nativeResponse);
    assert.equal(RESPONSE_ALREADY_SENT instanceof globalThis.Response, false);
  } finally {
    await server.close();
  }
});
