// What a BLAS sgemm gives a training step's matrix products on this machine: NumPy's OpenBLAS, on one thread
// (the engine's trainer runs on one), timed over the same shapes the embedded engine multiplies; and what the
// engine's native products give the same shapes, timed the same way.
import { spawnSync } from "node:child_process";
import { nativeAddon } from "../packages/engine/src/backend/native-addon.ts";

/** One product shape [m, k] x [k, n] and how many times a step runs it. */
export interface ProductShape {
  m: number;
  k: number;
  n: number;
  count: number;
}

const SCRIPT = `
import json, sys, time
import numpy as np
shapes = json.loads(sys.argv[1])
total_flops = total_seconds = 0.0
for s in shapes:
    a = np.random.rand(s["m"], s["k"]).astype(np.float32)
    b = np.random.rand(s["k"], s["n"]).astype(np.float32)
    for _ in range(3): a @ b
    runs = max(5, int(2e8 / (s["m"] * s["k"] * s["n"] + 1)))
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(runs): a @ b
        best = min(best, (time.perf_counter() - t) / runs)
    total_flops += 2.0 * s["m"] * s["k"] * s["n"] * s["count"]
    total_seconds += best * s["count"]
print(json.dumps({"gflops": total_flops / total_seconds / 1e9, "numpy": np.__version__}))
`;

/** BLAS GFLOP/s over `shapes` (weighted by count), or the reason it could not be measured. */
export function blasGflops(shapes: ProductShape[]): { gflops: number; numpy: string } | { error: string } {
  const python = process.env.PYTHON || "python3";
  const threads = { OPENBLAS_NUM_THREADS: "1", OMP_NUM_THREADS: "1", MKL_NUM_THREADS: "1" };
  const run = spawnSync(python, ["-c", SCRIPT, JSON.stringify(shapes)], {
    env: { ...process.env, ...threads },
    encoding: "utf8",
    timeout: 300_000,
  });
  if (run.error) return { error: `${python}: ${run.error.message}` };
  if (run.status !== 0)
    return { error: `${python} with NumPy failed: ${run.stderr.trim().split("\n").at(-1)}` };
  return JSON.parse(run.stdout);
}

/** The engine's native products' GFLOP/s over `shapes` (weighted by count), timed as blasGflops times NumPy's. */
export function nativeProductGflops(shapes: ProductShape[]): number | undefined {
  const addon = nativeAddon();
  if (!addon) return undefined;
  let flops = 0;
  let seconds = 0;
  for (const { m, k, n, count } of shapes) {
    const a = Float32Array.from({ length: m * k }, Math.random);
    const b = Float32Array.from({ length: k * n }, Math.random);
    const c = new Float32Array(m * n);
    const product = () => addon.matMul(a, b, c, 1, m, n, k, 0, 0, 0, 0);
    for (let i = 0; i < 3; i++) product();
    const runs = Math.max(5, Math.floor(2e8 / (m * k * n + 1)));
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < 3; r++) {
      const t0 = performance.now();
      for (let i = 0; i < runs; i++) product();
      best = Math.min(best, (performance.now() - t0) / 1000 / runs);
    }
    flops += 2 * m * k * n * count;
    seconds += best * count;
  }
  return flops / seconds / 1e9;
}
