import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DetectorRegistry, solutionsByQuestion, Trace } from "@arc/core";
import { type SimulatedTrace, simulateProductionTraffic, waitUntil } from "@arc/core/testing";
import { configForSize, initWeights, writeHfCheckpoint } from "@arc/engine";
import { DetectionWorker } from "../../failures/detection-worker.ts";
import type { Database } from "../../store/database.ts";
import { registerModelVersion } from "../../store/model-registry.ts";
import { createTenant } from "../../store/tenants.ts";
import { insertTraces } from "../../store/trace-store.ts";

/** Recipe overrides that make a toolcall DPO run take seconds: the tiny model, two steps, short answers. */
export const QUICK_RUN = [
  "trainer.steps=2",
  "trainer.promptsPerStep=2",
  "trainer.samplesPerPrompt=2",
  "trainer.maxTokens=8",
  "trainer.checkpointEvery=2",
  "trainer.evalEvery=2",
  "data.evalCount=4",
];

/** A tenant with a promoted `tiny` model (freshly initialised, HF layout) and a temp artifacts folder for its runs. */
export async function tenantWithProduction(db: Database, name: string) {
  const root = await mkdtemp(join(tmpdir(), "arc-orchestrator-"));
  const config = configForSize("tiny");
  const modelDir = join(root, "base");
  await writeHfCheckpoint(modelDir, config, initWeights(config, 3));
  const tenant = await createTenant(db, name);
  const base = await registerModelVersion(db, tenant.id, {
    name: "tiny-base",
    status: "promoted",
    artifactDir: modelDir,
    actor: "test",
  });
  return { tenantId: tenant.id, base, artifactsDir: join(root, "artifacts") };
}

/** Simulated production traffic (toolcall only unless `envMix` says otherwise) and the registry setup that resolves its solutions (gateway traffic has none). */
export function toolcallTraffic(
  seed: number,
  count: number,
  envMix: Record<string, number> = { toolcall: 1 },
) {
  const traffic = simulateProductionTraffic({ seed, count, envMix });
  const setupRegistry = (registry: DetectorRegistry) => {
    registry.resolveSolutionsWith(solutionsByQuestion(traffic.map((s) => s.task)));
  };
  return { traffic, setupRegistry };
}

/**
 * Ingests traces and judges them through the detection worker, so their failures join patterns. A running server's
 * own worker may claim some of them first (under load, before this one's first pass): it waits until that worker has
 * judged them too, so none is still on its way to a pattern when it returns.
 */
export async function ingestJudged(
  db: Database,
  tenantId: string,
  traffic: SimulatedTrace[],
  setupRegistry: (registry: DetectorRegistry) => void,
): Promise<void> {
  await insertTraces(
    db,
    tenantId,
    traffic.map((s) => Trace.parse(s.trace)),
  );
  const worker = new DetectionWorker(db, { config: { quietMs: 0, batchSize: 500 }, setupRegistry });
  while ((await worker.runOnce()).judged > 0);
  await waitUntil(
    async () => {
      const [{ waiting }] = await db.query<{ waiting: number }>(
        "select count(*)::int as waiting from detection_queue where tenant_id = $1 and dead_lettered_at is null",
        [tenantId],
      );
      return waiting === 0;
    },
    "every ingested trace judged",
    { timeoutMs: 120_000, intervalMs: 100 },
  );
}
