import type { Queryable } from "../store/database.ts";
import { type ModelVersion, registerModelVersion } from "../store/model-registry.ts";
import type { DemoDatasets } from "./demo-datasets.ts";
import type { RecordedRun } from "./demo-runs.ts";
import type { TrainOutcome } from "./train-candidate.ts";

/**
 * Ends a demo run by registering its last checkpoint as a candidate of the base `baseId`, named `name`, with the
 * lineage of the datasets it trained on and was judged on (and `warmupRunId`, the run it continued, when there was one).
 */
export function registerDemoCandidate(
  run: RecordedRun,
  training: TrainOutcome,
  context: {
    db: Queryable;
    tenantId: string;
    baseId: string;
    datasets: DemoDatasets;
    name: string;
    warmupRunId?: string | null;
    metrics: Record<string, unknown>;
  },
): Promise<ModelVersion> {
  const { evalSet, trainedOn, patterns } = context.datasets;
  return run.endWithCandidate(training, (checkpoint) =>
    registerModelVersion(context.db, context.tenantId, {
      name: context.name,
      parentId: context.baseId,
      artifactDir: checkpoint,
      actor: "demo",
      lineage: {
        runId: run.id,
        recipeHash: training.recipeHash,
        ...(context.warmupRunId ? { warmupRunId: context.warmupRunId } : {}),
        datasets: [...trainedOn, evalSet].map((d) => ({ id: d.id, version: d.version, kind: d.kind })),
        patterns: patterns.map((p) => p.id),
        sourceTraceCount: new Set(trainedOn.flatMap((d) => d.sourceTraceIds)).size,
      },
      metrics: context.metrics,
    }),
  );
}
