// What a BLAS sgemm gives a training step's matrix products on this machine: NumPy's OpenBLAS, on one thread
// (the engine's trainer runs on one), timed over the same shapes the embedded engine multiplies.
import { spawnSync } from "node:child_process";

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
