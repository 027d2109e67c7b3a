/**
 * A gradient worker thread: owns an embedded train engine whose weights the trainer thread keeps current, and
 * computes the loss and summed gradients of the shard of a step's rows it is sent (data-parallel training).
 */
import { parentPort } from "node:worker_threads";
import type { NamedTensor } from "../checkpoint/safetensors.ts";
import { EmbeddedTrainEngine } from "./embedded-train-engine.ts";
import type { FromGradientWorker, ToGradientWorker, WireTensor } from "./gradient-workers.ts";

const port = parentPort;
if (!port) throw new Error("gradient-worker.ts must run as a worker thread");

let engine: EmbeddedTrainEngine | undefined;
let ready: Promise<void> = Promise.resolve();
const post = (message: FromGradientWorker, transfer: ArrayBuffer[] = []) =>
  port.postMessage(message, transfer);
const byName = (tensors: WireTensor[]) =>
  new Map<string, NamedTensor>(tensors.map((t) => [t.name, { shape: t.shape, data: t.data }]));

port.on("message", (message: ToGradientWorker) => {
  ready = ready.then(async () => {
    try {
      if (message.type === "init") {
        engine = await EmbeddedTrainEngine.create(message.config, byName(message.tensors), {
          lora: message.lora,
          microBatchRows: message.microBatchRows,
        });
        post({ type: "ready" });
      } else if (message.type === "params" || message.type === "adapters")
        engine?.setTrainState(message.type, message.tensors);
      else if (message.type === "reference") engine?.setReference(message.tensors);
      else {
        const shard = (engine as EmbeddedTrainEngine).shardGradients(
          message.batch,
          message.objective,
          message.totals,
        );
        const grads: WireTensor[] = [];
        for (const [name, g] of shard.grads) {
          const data = g.dataSync() as Float32Array;
          // transfer only a buffer of its own (never a view of the wasm heap)
          const owned =
            data.byteOffset === 0 && data.buffer.byteLength === data.byteLength ? data : data.slice();
          grads.push({ name, shape: [...g.shape], data: owned });
          g.dispose();
        }
        post(
          { type: "gradients", id: message.id, shard: { loss: shard.loss, extra: shard.extra, grads } },
          grads.map((g) => g.data.buffer as ArrayBuffer),
        );
      }
    } catch (error) {
      post({
        type: "error",
        id: message.type === "gradients" ? message.id : undefined,
        message: (error as Error).message,
      });
    }
  });
});
