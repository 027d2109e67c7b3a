// Prints, as JSON, the native-kernel status and what the shipped toolcall base decodes greedily under continuous
// batching: more samples than rows, prompts of different lengths, n > 1 sharing a prefill, answers of different
// lengths. Run under ARC_ENGINE_NATIVE=0 and =1, the two must agree.
import { toolcallFamily } from "@arc/core/families";
import { EmbeddedInferenceEngine } from "../../inference/embedded-inference-engine.ts";
import { nativeAddonStatus } from "../native-addon.ts";
import { initBackend } from "../tf-backend.ts";

await initBackend("wasm");
const model = new URL("../../../../../models/toolcall-base", import.meta.url).pathname;
const engine = await EmbeddedInferenceEngine.load(model, { maxBatchSize: 3 });
const tasks = toolcallFamily.generate({ split: "production", seed: 77, count: 6 });
const results = await engine.generate(
  tasks.map((task, r) => ({
    messages: toolcallFamily.prompt(task),
    maxTokens: 6 + 20 * (r % 3),
    n: r === 1 ? 3 : 1,
    temperature: 0,
  })),
);
console.log(
  JSON.stringify({
    status: nativeAddonStatus(),
    samples: results.map((r) => ({ tokens: r.outputTokens, logprobs: r.outputLogprobs })),
  }),
);
