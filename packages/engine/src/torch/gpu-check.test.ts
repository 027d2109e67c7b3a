/**
 * The real-model GPU check (`python -m arc_tools.gpu_check`) as a dry run on the CPU, from Python alone, on a tiny
 * shape: Arc's torch engine and plain transformers (+ PEFT) each train full and LoRA, and the file it writes carries
 * what `npm run bench:real-model` reads from a GPU run. (No GPU is at hand here: the real run is the command in
 * docs/real-models.md.)
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { torchUnavailable } from "./__fixtures__/torch-available.ts";
import { TORCH_WORKER_DIR, torchPython } from "./torch-worker.ts";

describe("the real-model GPU check, as a dry run on the CPU", { skip: torchUnavailable() }, () => {
  it("trains full and LoRA on Arc's engine and on plain transformers, and writes the figures the bench reads", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-gpu-check-"));
    try {
      const out = join(dir, "real-model-gpu.json");
      const args = ["--device", "cpu", "--dtype", "float32", "--shapes", "tiny", "--batch", "2"];
      await promisify(execFile)(
        torchPython(),
        [
          "-m",
          "arc_tools.gpu_check",
          ...args,
          "--length",
          "16",
          "--steps",
          "1",
          "--micro-batch-rows",
          "1",
          "--out",
          out,
        ],
        { cwd: TORCH_WORKER_DIR, env: { ...process.env, OMP_NUM_THREADS: "1" } },
      );
      const result = JSON.parse(await readFile(out, "utf8"));
      assert.equal(result.bench, "real-model-python");
      assert.match(result.command, /-m arc_tools\.gpu_check --device cpu/);
      assert.match(result.script_sha256, /^[0-9a-f]{64}$/);
      for (const mode of ["full", "lora"]) {
        const figures = result.shapes.tiny[mode];
        assert.ok(figures.arc_tokens_per_s > 0 && figures.transformers_tokens_per_s > 0, mode);
        assert.equal(figures.arc_step_seconds.length, 1);
      }
      assert.equal(result.train_tokens_per_s_lora.tiny, result.shapes.tiny.lora.arc_tokens_per_s);
      assert.deepEqual(Object.keys(result.train_tokens_per_s_vs_transformers.tiny), ["full", "lora"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
