/**
 * Builds and loads the engine's native kernels (native/engine-kernels.c, a Node-API addon). It is compiled on first
 * use with the machine's C compiler for this CPU (`cc -O3 -march=native`, under a second) and cached by a hash of
 * the source, Node's ABI and the CPU, so nothing is fetched and nothing is built at install time. Where it cannot
 * be built (no compiler, no Node headers) or `ARC_ENGINE_NATIVE=0`, the engine keeps the wasm backend's own
 * XNNPACK products, and `nativeAddonStatus()` says why.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { arch, cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The addon's kernels; outputs are written into the arrays given (see native/engine-kernels.c). */
export interface NativeAddon {
  /** For each of `batch` entries, c = op(a) op(b), [m, k] x [k, n] -> [m, n]. */
  matMul(
    a: Float32Array,
    b: Float32Array,
    c: Float32Array,
    batch: number,
    m: number,
    n: number,
    k: number,
    transposeA: number,
    transposeB: number,
    aBatchStride: number,
    bBatchStride: number,
  ): void;
  rmsNorm(
    x: Float32Array,
    w: Float32Array,
    y: Float32Array,
    inv: Float32Array,
    width: number,
    eps: number,
  ): void;
  rmsNormGrad(
    dy: Float32Array,
    x: Float32Array,
    w: Float32Array,
    inv: Float32Array,
    dx: Float32Array,
    dw: Float32Array,
    width: number,
  ): void;
  swiGlu(gate: Float32Array, up: Float32Array, y: Float32Array): void;
  swiGluGrad(
    dy: Float32Array,
    gate: Float32Array,
    up: Float32Array,
    dGate: Float32Array,
    dUp: Float32Array,
  ): void;
  rope(
    x: Float32Array,
    cos: Float32Array,
    sin: Float32Array,
    y: Float32Array,
    heads: number,
    headWidth: number,
    scale: number,
    inverse: number,
  ): void;
  /** The row-major k x n matrix `b` as 16-column slivers, the layout `matMulPacked` reads in order. */
  packPanels(b: Float32Array, packed: Float32Array, k: number, n: number): void;
  /** c (m x n) = a (m x k) times a matrix packed by `packPanels`. */
  matMulPacked(a: Float32Array, packed: Float32Array, c: Float32Array, m: number, n: number, k: number): void;
  /** Attention of T positions over themselves: probs [B, H, T, T] = softmax(q k^T + mask), out = probs v. */
  attend(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    probs: Float32Array,
    mask: Float32Array,
    out: Float32Array,
    B: number,
    T: number,
    H: number,
    K: number,
    D: number,
  ): void;
  /** The gradient of `attend` with respect to q, k and v. */
  attendGrad(
    dy: Float32Array,
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    probs: Float32Array,
    mask: Float32Array,
    dq: Float32Array,
    dk: Float32Array,
    dv: Float32Array,
    B: number,
    T: number,
    H: number,
    K: number,
    D: number,
  ): void;
  /** logp [B, L-1] = log softmax(logits [B, L, V]) at the next tokens `targets` [B, L-1] (ids as floats). */
  tokenLogprobs(
    logits: Float32Array,
    targets: Float32Array,
    logp: Float32Array,
    B: number,
    L: number,
    V: number,
  ): void;
  /** The gradient of `tokenLogprobs` with respect to the logits (zero at the last position). */
  tokenLogprobsGrad(
    dlogp: Float32Array,
    logits: Float32Array,
    targets: Float32Array,
    dlogits: Float32Array,
    B: number,
    L: number,
    V: number,
  ): void;
  /** entropy [B, L-1] of softmax(logits [B, L, V]) at every position but the last. */
  tokenEntropy(logits: Float32Array, entropy: Float32Array, B: number, L: number, V: number): void;
  /** The gradient of `tokenEntropy` with respect to the logits (zero at the last position). */
  tokenEntropyGrad(
    dentropy: Float32Array,
    logits: Float32Array,
    dlogits: Float32Array,
    B: number,
    L: number,
    V: number,
  ): void;
  /**
   * Attention of T new positions over a cache kept in place: writes k and v ([B, T, K, D]) into the cache
   * ([B, K, capacity, D]) at `past`, then out [B, T, H, D] = softmax(q k^T + mask) v over past + T positions.
   */
  attendCached(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    mask: Float32Array,
    cacheKeys: Float32Array,
    cacheValues: Float32Array,
    out: Float32Array,
    B: number,
    T: number,
    H: number,
    K: number,
    D: number,
    past: number,
    capacity: number,
  ): void;
}

/** Whether the native products are in use, and why not when they are not. */
export type NativeAddonStatus = { active: true; path: string } | { active: false; reason: string };

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "native", "engine-kernels.c");

let loaded: { addon?: NativeAddon; status: NativeAddonStatus } | undefined;

/** The addon, built if needed; undefined when it cannot be (see nativeAddonStatus). */
export function nativeAddon(): NativeAddon | undefined {
  loaded ??= load();
  return loaded.addon;
}

/** Whether the native products are in use, and why not when they are not. */
export function nativeAddonStatus(): NativeAddonStatus {
  loaded ??= load();
  return loaded.status;
}

function load(): { addon?: NativeAddon; status: NativeAddonStatus } {
  if (process.env.ARC_ENGINE_NATIVE === "0")
    return { status: { active: false, reason: "ARC_ENGINE_NATIVE=0" } };
  try {
    const path = builtAddon();
    const addon = createRequire(import.meta.url)(path) as NativeAddon;
    return { addon, status: { active: true, path } };
  } catch (error) {
    const reason = (error as Error).message.split("\n")[0];
    return { status: { active: false, reason } };
  }
}

/** Path of the compiled addon for this source, Node ABI and CPU, compiling it when it is not cached yet. */
function builtAddon(): string {
  if (!existsSync(SOURCE)) throw new Error(`native source not found at ${SOURCE}`);
  const source = readFileSync(SOURCE);
  const nodeInclude = join(dirname(process.execPath), "..", "include", "node");
  if (!existsSync(join(nodeInclude, "node_api.h"))) throw new Error(`no Node-API headers at ${nodeInclude}`);
  const key = createHash("sha256")
    .update(source)
    .update(`${process.versions.modules} ${arch()} ${cpus()[0]?.model ?? ""}`)
    .digest("hex")
    .slice(0, 16);
  const name = `arc-engine-kernels-${key}.node`;
  for (const dir of cacheDirs()) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  let lastError: unknown;
  for (const dir of cacheDirs()) {
    const path = join(dir, name);
    const partial = `${path}.${process.pid}.${Date.now()}.tmp`;
    try {
      mkdirSync(dir, { recursive: true });
      const compiler = process.env.CC || "cc";
      execFileSync(
        compiler,
        ["-O3", "-march=native", "-shared", "-fPIC", `-I${nodeInclude}`, SOURCE, "-o", partial],
        { stdio: ["ignore", "ignore", "pipe"], timeout: 60_000 },
      );
      renameSync(partial, path); // atomic: a concurrent builder finds either no file or a whole one
      for (const old of readdirSync(dir)) {
        if (old.startsWith("arc-engine-kernels-") && old.endsWith(".node") && old !== name)
          rmSync(join(dir, old), { force: true });
      }
      return path;
    } catch (error) {
      rmSync(partial, { force: true });
      lastError = error;
    }
  }
  const detail = (lastError as { stderr?: Buffer }).stderr?.toString().trim() || (lastError as Error).message;
  throw new Error(`could not compile ${SOURCE}: ${detail}`);
}

/** Where built addons are kept: beside the source, else in the temporary directory. */
function cacheDirs(): string[] {
  return [join(dirname(SOURCE), "build"), join(tmpdir(), "arc-native")];
}
