/**
 * Runs submitted to a real local Ray head as jobs, through its Jobs REST API (`cluster.jobsUrl`): Arc's trainer on
 * the PyTorch engine trains, its progress streams from the job's log into the run's row and `arc runs show`, a
 * cancelled run's job is stopped, and the final checkpoint is registered as a candidate. The same submission code
 * launches VERL when a recipe says `trainer.backend: verl`; VERL needs GPUs and vLLM or SGLang, which this machine
 * has not, so its job here is submitted, written (data, reward module, overrides) and followed to the failure the
 * cluster reports, with the key it was given revoked.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type RayJobStatus, RayJobsClient, torchPython } from "@arc/engine";
import { stringify } from "yaml";
import { pythonLacks, rayLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import {
  type LocalRayHead,
  startLocalRayHead,
} from "../../../engine/src/jobs/__fixtures__/local-ray-head.ts";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import { createApiKey, listApiKeys } from "../store/keys.ts";
import { getModelVersion } from "../store/model-registry.ts";
import { ingestJudged, tenantWithProduction, toolcallTraffic } from "./__fixtures__/orchestrator-tenant.ts";
import { executeRun } from "./execute-run.ts";
import { createRun, getRun, type RunRecord, tenantRunsDir } from "./run-store.ts";

const ARC = fileURLToPath(new URL("../../../../bin/arc.mjs", import.meta.url));
const skip =
  skipWithout("python", pythonLacks(torchPython(), ["torch", "transformers"])) ||
  skipWithout("ray", rayLacks(torchPython()));

const { traffic, setupRegistry } = toolcallTraffic(77, 100);

describe("runs on a Ray cluster as jobs", { skip }, () => {
  let head: LocalRayHead;
  let server: RunningServer;
  let home: string;
  let tenantId: string;
  let tenantKey: string;
  let artifactsDir: string;
  let recipeDir: string;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), "arc-ray-jobs-"));
    [head, server] = await Promise.all([
      startLocalRayHead({ cpus: 2 }),
      // the server's own detection may judge the traces first: it resolves their solutions as the test's worker does
      startServer(loadServerConfig({}, { home, port: 0 }), { failures: { setupRegistry } }),
    ]);
    const tenant = await tenantWithProduction(server.db, "acme");
    ({ tenantId, artifactsDir } = tenant);
    tenantKey = (await createApiKey(server.db, { role: "tenant", tenantId })).key;
    await ingestJudged(server.db, tenantId, traffic, setupRegistry);
    recipeDir = mkdtempSync(join(tmpdir(), "arc-ray-recipes-"));
  });
  after(async () => {
    await server?.close();
    await head?.stop();
    for (const dir of [home, recipeDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A recipe file of the operator's: `body` with the cluster's Jobs API. */
  function recipeFile(name: string, body: Record<string, unknown>): string {
    const path = join(recipeDir, `${name}.yaml`);
    writeFileSync(path, stringify({ name, ...body, cluster: { jobsUrl: head.dashboardUrl } }));
    return path;
  }

  const api = async (path: string, method = "GET") => {
    const response = await fetch(`${server.url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${tenantKey}`, "content-type": "application/json" },
      body: method === "POST" ? "{}" : undefined,
    });
    return (await response.json()) as Record<string, unknown>;
  };

  const queue = (recipePath: string, overrides: string[] = []) =>
    createRun(server.db, tenantId, {
      trigger: "api",
      recipePath,
      overrides,
      runsDir: tenantRunsDir(artifactsDir, tenantId),
      status: "running",
      owner: "server-a",
    });

  /** Runs a run to its end as the orchestrator does; `onProgress` sees each poll's new records. */
  const execute = (run: RunRecord, onProgress?: (run: RunRecord) => void) =>
    executeRun(server.db, run, {
      owner: "server-a",
      pollMs: 300,
      datasetSize: 16,
      setupRegistry,
      publicUrl: server.url,
      onAbort: "cancel",
      onProgress,
    });

  const jobStatus = (runId: string, attempt = 1): Promise<RayJobStatus> =>
    new RayJobsClient({ url: head.dashboardUrl }).job(`arc-${runId}-${attempt}`).then((job) => job.status);
  /** What the job's entrypoint asked the cluster for: its supervisor actor's resources, from Ray's state API. */
  const jobResources = async (runId: string, attempt = 1): Promise<Record<string, number>> => {
    const name = `_ray_internal_job_actor_arc-${runId}-${attempt}`;
    const query = `detail=true&filter_keys=name&filter_predicates=%3D&filter_values=${encodeURIComponent(name)}`;
    // the dashboard turns away requests that look like a browser's
    const response = await fetch(`${head.dashboardUrl}/api/v0/actors?${query}`, {
      headers: { "user-agent": "arc-test" },
    });
    const actors = (await response.json()).data.result.result as {
      required_resources: Record<string, number>;
    }[];
    assert.equal(actors.length, 1, `one supervisor actor named ${name}`);
    return actors[0].required_resources;
  };

  it("trains on the PyTorch engine as a job, streams progress into arc runs show, stops a cancelled one, and registers the checkpoint", async () => {
    const sft = {
      engine: { kind: "torch", device: "cpu" },
      data: { env: "toolcall", evalCount: 0 },
      trainer: { algorithm: "sft", promptsPerStep: 4, learningRate: 0.01, maxTokens: 16 },
    };
    const completed = await queue(
      recipeFile("ray-sft", { ...sft, trainer: { ...sft.trainer, steps: 6, checkpointEvery: 3 } }),
    );
    const cancelled = await queue(
      recipeFile("ray-sft-long", { ...sft, trainer: { ...sft.trainer, steps: 400, checkpointEvery: 2 } }),
    );
    /** What `GET /v1/runs/:id` (arc runs show) showed of the long run while its job ran. */
    let shownMidway: { status: string; step: number; records: number } | undefined;
    let cancelSent = false;
    const [done, stopped] = await Promise.all([
      execute(completed),
      execute(cancelled, (run) => {
        if (run.step >= 2 && !cancelSent) {
          cancelSent = true;
          void api(`/runs/${run.id}`)
            .then((shown) => {
              const row = shown.run as { status: string; step: number };
              shownMidway = { ...row, records: (shown.records as unknown[]).length };
            })
            .then(() => api(`/runs/${run.id}/cancel`, "POST"));
        }
      }),
    ]);

    assert.equal(done.run.status, "succeeded", done.run.error ?? "");
    assert.equal(shownMidway?.status, "running");
    assert.ok((shownMidway?.step ?? 0) >= 2 && (shownMidway?.records ?? 0) >= 3, JSON.stringify(shownMidway));
    assert.equal(await jobStatus(completed.id), "SUCCEEDED");
    // the engine's worker ran inside the job, so the job asked the cluster for its CPU (and no GPU: device cpu)
    assert.deepEqual(await jobResources(completed.id), { CPU: 1 });
    const shown = await api(`/runs/${completed.id}`);
    const records = shown.records as { step: number; loss: number }[];
    assert.deepEqual(
      records.map((r) => r.step),
      [0, 1, 2, 3, 4, 5, 6],
    );
    assert.ok(records[6].loss < records[1].loss, "the loss fell");
    // the CLI runs beside this process's server, so it must not block the event loop
    const cli = await promisify(execFile)(process.execPath, [
      ARC,
      "runs",
      "show",
      completed.id,
      "--url",
      server.url,
      "--key",
      tenantKey,
    ]);
    assert.match(cli.stdout, new RegExp(`run ${completed.id}\\s+status=succeeded\\s+step 6/6`));
    const logs = (await api(`/runs/${completed.id}/logs?tail=1000`)).logs as string;
    assert.match(logs, /Running entrypoint for job arc-/);
    assert.match(logs, /arc-step \{"step":6,/);
    const candidate = await getModelVersion(server.db, tenantId, done.candidate?.id as string);
    // registered as a candidate; the server's validator may already have decided it
    assert.ok(["candidate", "validated", "rejected"].includes(candidate.status), candidate.status);
    assert.equal(candidate.lineage?.runId, completed.id);
    assert.ok(existsSync(join(candidate.artifactDir as string, "model.safetensors")));
    assert.equal(
      JSON.parse(readFileSync(join(candidate.artifactDir as string, "trainer_state.json"), "utf8")).engine,
      "torch",
    );

    assert.ok(cancelSent, "the long run was cancelled mid-way");
    assert.equal(stopped.run.status, "cancelled", stopped.run.error ?? "");
    assert.equal(stopped.candidate, null);
    assert.equal(await jobStatus(cancelled.id), "STOPPED");
    assert.ok(stopped.run.step >= 2 && stopped.run.step < 400, `stopped at step ${stopped.run.step}`);
  });

  it("submits a VERL job with its data, reward module and overrides, and records the failure the cluster reports", async () => {
    // the head's python3 has no VERL: the job fails at once, as it would on a cluster without it
    const run = await queue(
      recipeFile("ray-verl", {
        data: { env: "toolcall", evalCount: 8 },
        trainer: { backend: "verl", algorithm: "grpo", steps: 2, promptsPerStep: 8, samplesPerPrompt: 2 },
        verl: { gpusPerNode: 1, python: "python3" },
      }),
    );
    const keysBefore = (await listApiKeys(server.db, tenantId)).filter((k) => !k.revokedAt).length;
    const ended = await execute(run);
    assert.equal(ended.run.status, "failed");
    assert.match(ended.run.error ?? "", /Ray job arc-.* failed: .*No module named 'verl'/s);
    assert.equal(await jobStatus(run.id), "FAILED");
    assert.deepEqual(await jobResources(run.id), {}, "VERL places its own workers");
    const dir = join(tenantRunsDir(artifactsDir, tenantId), run.id, "verl");
    for (const file of ["train.parquet", "val.parquet", "arc_reward.py", "overrides.json"])
      assert.ok(existsSync(join(dir, file)), file);
    const overrides = JSON.parse(readFileSync(join(dir, "overrides.json"), "utf8")) as string[];
    assert.ok(overrides.includes(`reward.custom_reward_function.path=${join(dir, "arc_reward.py")}`));
    assert.ok(overrides.includes("trainer.total_training_steps=2"));
    const keys = await listApiKeys(server.db, tenantId);
    assert.ok(
      keys.some((k) => k.name === `verl job of run ${run.id}` && k.revokedAt),
      "the job's key is revoked",
    );
    assert.equal(keys.filter((k) => !k.revokedAt).length, keysBefore);
    assert.equal((await getRun(server.db, tenantId, run.id)).candidateId, null);
  });
});
