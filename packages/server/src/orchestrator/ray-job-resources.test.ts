/**
 * What a Ray job's entrypoint asks the cluster for, by recipe: the local workers of Arc's trainer on the torch engine
 * are the entrypoint's own, so it asks for their GPUs and CPUs; actors (`cluster.address`) and VERL ask for their own.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRecipe } from "@arc/rl";
import { jobEntrypointResources } from "./ray-job-run.ts";

const jobsUrl = "http://127.0.0.1:8265";
const data = { env: "toolcall" };

describe("jobEntrypointResources", () => {
  it("asks for each torch training process's GPUs and CPUs when the workers run inside the job", () => {
    const recipe = parseRecipe({
      data,
      engine: { kind: "torch", device: "cuda", dtype: "bfloat16", processes: 2 },
      cluster: { jobsUrl, gpusPerWorker: 1, cpusPerWorker: 4 },
    });
    assert.deepEqual(jobEntrypointResources(recipe), { entrypointNumCpus: 8, entrypointNumGpus: 2 });
  });

  it("asks for CPUs alone for a CPU engine, and for the embedded engine's one process", () => {
    const torch = parseRecipe({ data, engine: { kind: "torch", device: "cpu" }, cluster: { jobsUrl } });
    assert.deepEqual(jobEntrypointResources(torch), { entrypointNumCpus: 1 });
    const embedded = parseRecipe({ data, cluster: { jobsUrl, cpusPerWorker: 2 } });
    assert.deepEqual(jobEntrypointResources(embedded), { entrypointNumCpus: 2 });
  });

  it("asks for nothing when the engine's workers are actors of their own, or VERL places its workers", () => {
    const actors = parseRecipe({
      data,
      engine: { kind: "torch", device: "cuda" },
      cluster: { jobsUrl, address: "127.0.0.1:6379", gpusPerWorker: 1 },
    });
    assert.deepEqual(jobEntrypointResources(actors), {});
    const verl = parseRecipe({
      data,
      trainer: { backend: "verl", algorithm: "grpo" },
      cluster: { jobsUrl, gpusPerWorker: 1 },
    });
    assert.deepEqual(jobEntrypointResources(verl), {});
  });
});
