/**
 * The rollout worker thread (AReaLite's rollout side): owns its own embedded InferenceEngine and runs
 * every rollout it is sent concurrently (the engine batches them continuously). New weights arrive by
 * version as transferred buffers; the engine swaps them between two decoding steps, so episodes in flight
 * pause for the swap and resume on the new version, and each token records the version that produced it.
 */
import { parentPort } from "node:worker_threads";
import type { InferenceEngine } from "@arc/core";
import { EmbeddedInferenceEngine } from "@arc/engine";
import { loadTaskFamilies } from "../families/index.ts";
import type { GrpoTrainer } from "../recipe/recipe-schema.ts";
import type { GroupReward } from "../reward/index.ts";
import { sampleGroups } from "../rollout/sample-groups.ts";
import { buildReward } from "../run/build-reward.ts";
import type { FromWorker, ToWorker } from "./rollout-messages.ts";

const port = parentPort;
if (!port) throw new Error("rollout-worker.ts must run as a worker thread");

let engine: InferenceEngine | undefined;
let trainer: GrpoTrainer | undefined;
let reward: GroupReward | undefined;
let ready: Promise<void> = Promise.resolve();
const post = (message: FromWorker) => port.postMessage(message);

port.on("message", (message: ToWorker) => {
  switch (message.type) {
    case "init":
      trainer = message.trainer;
      ready = (async () => {
        await loadTaskFamilies(message.familyModules);
        engine = await EmbeddedInferenceEngine.load(message.modelDir, {
          version: message.version,
          maxBatchSize: message.trainer.maxConcurrentRollouts * message.trainer.samplesPerPrompt,
        });
        reward = (await buildReward(message.reward)).reward;
        post({ type: "ready" });
      })().catch((error) => post({ type: "error", message: (error as Error).message }));
      break;
    case "weights":
      ready = ready.then(async () => {
        const tensors = new Map(message.tensors.map((t) => [t.name, { shape: t.shape, data: t.data }]));
        await engine?.setWeights(message.version, { kind: "tensors", tensors });
        post({ type: "weights-applied", version: message.version });
      });
      break;
    case "rollout":
      void ready.then(async () => {
        const began = performance.now();
        try {
          const t = trainer as GrpoTrainer;
          const [group] = await sampleGroups(engine as InferenceEngine, [message.task], {
            n: t.samplesPerPrompt,
            temperature: t.temperature,
            maxTokens: t.maxTokens,
            seedOf: () => message.seed,
            reward: reward as GroupReward,
            workflow: t.workflow,
          });
          post({
            type: "group",
            index: message.index,
            group: group ?? null,
            busyMs: performance.now() - began,
          });
        } catch (error) {
          post({ type: "error", message: (error as Error).message });
        }
      });
      break;
    case "close":
      port.close();
      break;
  }
});
