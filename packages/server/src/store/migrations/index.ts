import { initialSchema } from "./001-initial-schema.ts";
import { failurePipelineSchema } from "./002-failure-pipeline.ts";
import { modelRegistrySchema } from "./003-model-registry.ts";
import { deploymentsSchema } from "./004-deployments.ts";
import { runsSchema } from "./005-runs.ts";
import { stepOrderSchema } from "./006-step-order.ts";
import { detectionDeadLettersSchema } from "./007-detection-dead-letters.ts";
import { taskFamiliesSchema } from "./008-task-families.ts";
import { imagesSchema } from "./009-images.ts";
import { judgesSchema } from "./010-judges.ts";
import { analyticsSchema } from "./011-analytics.ts";
import { failuresByTimeSchema } from "./012-failures-by-time.ts";
import { enqueueOncePerTransactionSchema } from "./013-enqueue-once-per-transaction.ts";
import { traceListSchema } from "./014-trace-list.ts";
import { judgeGoldSetSchema } from "./015-judge-gold-set.ts";
import { rejudgeMergedTracesSchema } from "./016-rejudge-merged-traces.ts";
import { rejudgeMergedStepsSchema } from "./017-rejudge-merged-steps.ts";
import { judgeRecalibrationsSchema } from "./018-judge-recalibrations.ts";

/** A schema change, applied once, in order, in its own transaction. Never edit one that has shipped: add a new one. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Every migration, oldest first. Versions are reserved per area so parallel work does not collide:
 * 2 failure pipeline, 3 model registry and audit log, 4 deployments, 5 runs and orchestrator.
 */
export const migrations: Migration[] = [
  { version: 1, name: "initial schema", sql: initialSchema },
  { version: 2, name: "failure pipeline", sql: failurePipelineSchema },
  { version: 3, name: "model registry and audit log", sql: modelRegistrySchema },
  { version: 4, name: "validations and deployments", sql: deploymentsSchema },
  { version: 5, name: "training runs", sql: runsSchema },
  { version: 6, name: "step arrival order", sql: stepOrderSchema },
  { version: 7, name: "detection dead letters", sql: detectionDeadLettersSchema },
  { version: 8, name: "task families", sql: taskFamiliesSchema },
  { version: 9, name: "content-addressed images", sql: imagesSchema },
  { version: 10, name: "judges", sql: judgesSchema },
  { version: 11, name: "analytics settings and judge calibrations", sql: analyticsSchema },
  { version: 12, name: "failures by time", sql: failuresByTimeSchema },
  { version: 13, name: "detection queued once per transaction", sql: enqueueOncePerTransactionSchema },
  { version: 14, name: "trace list by user and session", sql: traceListSchema },
  { version: 15, name: "judge calibration tools, annotations and review queues", sql: judgeGoldSetSchema },
  { version: 16, name: "traces judged again when merged data arrives", sql: rejudgeMergedTracesSchema },
  {
    version: 17,
    name: "traces judged again when a step's later copy fills it in",
    sql: rejudgeMergedStepsSchema,
  },
  { version: 18, name: "judge re-calibrations scheduled on a change", sql: judgeRecalibrationsSchema },
];
