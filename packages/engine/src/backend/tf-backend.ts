import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as tf from "@tensorflow/tfjs-core";
// The union package's Node bundle registers every op's gradient on the shared tfjs-core engine;
// tfjs-core alone ships none, and its ESM gradient files do not resolve under Node.
import "@tensorflow/tfjs";
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm";
import { installNativeMatMul } from "./native-matmul.ts";
import { installSharedDataKernels } from "./shared-data-kernels.ts";

/**
 * Which tensorflow.js backend runs the math: `wasm` (its products on the native addon where it builds, else
 * XNNPACK SIMD; ~20x faster than cpu here) or `cpu` (plain JS).
 */
export type BackendName = "wasm" | "cpu";

let wasmPathsSet = false;
let chosen: BackendName | undefined;
/** The last requested switch; each call waits for the one before, so none sees a backend half set up. */
let lastSwitch: Promise<unknown> = Promise.resolve();

/**
 * Selects and initialises a backend. Without a name it keeps the one chosen before, else takes
 * `ARC_ENGINE_BACKEND` (wasm by default). The wasm binaries are read from the installed
 * `@tensorflow/tfjs-backend-wasm` package, so nothing is fetched. Concurrent calls are safe: tfjs
 * names the new backend before its asynchronous set-up ends, so calls run one after another.
 */
export function initBackend(requested?: BackendName): Promise<BackendName> {
  const name = requested ?? chosen ?? defaultBackend();
  chosen = name;
  const switched = lastSwitch.then(() => switchBackend(name));
  lastSwitch = switched.catch(() => undefined);
  return switched;
}

async function switchBackend(name: BackendName): Promise<BackendName> {
  if (tf.getBackend() === name && tf.findBackend(name) != null) return name;
  if (name === "wasm" && !wasmPathsSet) {
    const require = createRequire(import.meta.url);
    const dist = join(dirname(require.resolve("@tensorflow/tfjs-backend-wasm/package.json")), "dist");
    setWasmPaths(`${dist}/`);
    wasmPathsSet = true;
  }
  // The wasm module's emscripten glue adds process-wide uncaughtException / unhandledRejection handlers that
  // rethrow from its own (minified, one-line) frame; every later crash would print that line. Drop them.
  const before = {
    uncaughtException: process.listeners("uncaughtException"),
    unhandledRejection: process.listeners("unhandledRejection"),
  };
  const ok = await tf.setBackend(name);
  if (!ok) throw new Error(`tensorflow.js backend "${name}" failed to initialise`);
  await tf.ready();
  for (const listener of process.listeners("uncaughtException")) {
    if (!before.uncaughtException.includes(listener)) process.off("uncaughtException", listener);
  }
  for (const listener of process.listeners("unhandledRejection")) {
    if (!before.unhandledRejection.includes(listener)) process.off("unhandledRejection", listener);
  }
  if (name === "wasm") {
    installSharedDataKernels();
    installNativeMatMul();
  }
  return name;
}

/** `ARC_ENGINE_BACKEND` when set to wasm or cpu, else wasm. */
export function defaultBackend(): BackendName {
  const env = process.env.ARC_ENGINE_BACKEND;
  return env === "cpu" ? "cpu" : "wasm";
}

export { tf };
