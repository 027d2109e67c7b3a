import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { toolcallFamily } from "@arc/core/families";
import { listAudit } from "../store/audit-log.ts";
import type { Database } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import {
  ingestJudged,
  QUICK_RUN,
  tenantWithProduction,
  toolcallTraffic,
} from "./__fixtures__/orchestrator-tenant.ts";
import { runImprovementCycle } from "./run-improvement-cycle.ts";
import { listRuns } from "./run-store.ts";

/** Mixed traffic: the recipe trains toolcall, so only the pool's toolcall rows may reach the trainer. */
const { traffic, setupRegistry } = toolcallTraffic(66, 200, { toolcall: 0.6, arith: 0.2, orderdesk: 0.2 });

describe("runImprovementCycle", () => {
  let db: Database;
  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
  });
  after(() => db?.close());

  it("turns failures into datasets with preference pairs, trains from production and registers a candidate, visible as a run", async () => {
    const { tenantId, base, artifactsDir } = await tenantWithProduction(db, "acme");
    await ingestJudged(db, tenantId, traffic, setupRegistry);
    const teacher = Object.fromEntries(
      traffic
        .filter((s) => s.task.env === "toolcall")
        .map((s) => [
          s.trace.id,
          [{ text: toolcallFamily.reference(s.task)[0], source: "teacher" as const }],
        ]),
    );
    const steps: number[] = [];
    const result = await runImprovementCycle(db, tenantId, {
      artifactsDir,
      overrides: QUICK_RUN,
      trigger: "demo",
      datasetSize: 24,
      setupRegistry,
      preferenceCandidates: teacher,
      pollMs: 50,
      onProgress: (_run, fresh) => steps.push(...fresh.map((r) => r.step)),
    });
    assert.equal(result.run.status, "succeeded", result.run.error ?? "");
    assert.deepEqual(steps, [0, 1, 2]);
    assert.deepEqual(result.run.datasets.map((d) => d.kind).sort(), ["eval", "preferences", "prompts"]);
    const [listed] = await listRuns(db, tenantId);
    assert.equal(listed.id, result.run.id);
    assert.equal(listed.trigger, "demo");
    const candidate = result.candidate;
    assert.ok(candidate);
    assert.equal(candidate.parentId, base.id);
    assert.equal((candidate.lineage.datasets as unknown[]).length, 3);
    const recipe = await readFile(join(artifactsDir, tenantId, "runs", result.run.id, "recipe.yaml"), "utf8");
    assert.match(recipe, /preferences: .*\.jsonl/);
    const pool = await readFile(recipe.match(/prompts: (.*\.jsonl)/)?.[1] as string, "utf8");
    const envs = new Set(
      pool
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { env: string }).env),
    );
    assert.deepEqual([...envs], ["toolcall"]);
    const audit = await listAudit(db, tenantId, { kind: "model_version", id: candidate.id });
    assert.equal(audit[0].actor, "system:run:demo");
  });

  it("stops a time-boxed run at its deadline and still registers the checkpoint it wrote then", async () => {
    const { tenantId, artifactsDir } = await tenantWithProduction(db, "globex");
    await ingestJudged(db, tenantId, traffic, setupRegistry);
    const result = await runImprovementCycle(db, tenantId, {
      artifactsDir,
      overrides: [...QUICK_RUN, "trainer.steps=5000"],
      datasetSize: 16,
      setupRegistry,
      pollMs: 50,
      deadline: Date.now() + 8000,
    });
    assert.equal(result.run.status, "succeeded", result.run.error ?? "");
    assert.ok(result.run.step >= 1 && result.run.step < 5000, `step ${result.run.step}`);
    assert.equal(result.run.metrics.stoppedAtDeadline, true);
    assert.equal(result.candidate?.metrics.stoppedAtDeadline, true);
    assert.match(result.candidate?.artifactDir ?? "", new RegExp(`checkpoints/step-${result.run.step}$`));
  });
});
