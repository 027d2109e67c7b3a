import { runDueSchedules } from "../failures/dataset-schedules.ts";
import { DetectionWorker } from "../failures/detection-worker.ts";
import {
  type FailurePipelineConfigInput,
  failurePipelineConfigFromEnv,
  parseFailurePipelineConfig,
  type RegistrySetup,
  registrySetupFromEnv,
} from "../failures/failure-pipeline-config.ts";
import { runDueRecalibrations } from "../failures/judge-recalibrations.ts";
import type { JudgeUpstreams } from "../judges/tenant-judge.ts";
import type { Database } from "../store/database.ts";

/** What the failure pipeline of one server process needs. */
export interface FailureServiceOptions {
  db: Database;
  /** Scheduling settings (default: from ARC_DETECT_* / ARC_SYNTH_* environment variables). */
  config?: FailurePipelineConfigInput;
  /** The tenants' own detectors and verifiers (default: `setupRegistry` of the module ARC_DETECTORS_MODULE names). */
  setupRegistry?: RegistrySetup;
  /** Environment read for the defaults (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** The upstreams tenants' judges may run on (the server's allowlist, `ARC_UPSTREAMS`). */
  judgeUpstreams?: JudgeUpstreams;
  /** Whether the server is answering requests now; detection then yields to them (see `busyShare`). */
  busy?: () => boolean;
}

/**
 * The failure pipeline of one server process: its detection worker, synthesis schedules and judges' scheduled
 * re-calibrations (serve/ mounts its routes).
 */
export interface FailureService {
  worker: DetectionWorker;
  /** The tenants' detectors and verifiers (undefined: the built-in ones), which the pattern and dataset routes also use. */
  setupRegistry: RegistrySetup | undefined;
  /** Starts detection on ingest, scheduled synthesis and re-calibration (unless the config turns the worker off). */
  start(): void;
  /** Stops both, waiting for the work under way. */
  close(): Promise<void>;
}

/**
 * Wires detection, clustering and synthesis over one database. Every process sharing a database may start one:
 * detection claims and schedule runs never overlap between processes.
 */
export async function createFailureService(options: FailureServiceOptions): Promise<FailureService> {
  const env = options.env ?? process.env;
  const config = options.config
    ? parseFailurePipelineConfig(options.config)
    : failurePipelineConfigFromEnv(env);
  const setupRegistry = options.setupRegistry ?? (await registrySetupFromEnv(env));
  const { db } = options;
  const worker = new DetectionWorker(db, {
    config,
    setupRegistry,
    judgeUpstreams: options.judgeUpstreams,
    busy: options.busy,
  });
  let timer: NodeJS.Timeout | undefined;
  let scheduling: Promise<unknown> = Promise.resolve();
  let ticking = false;
  return {
    worker,
    setupRegistry,
    start() {
      if (!config.enabled || timer) return;
      worker.start();
      timer = setInterval(() => {
        // a tick still under way (a long re-calibration) lets the next ones pass rather than queue behind it
        if (ticking) return;
        ticking = true;
        scheduling = runDueSchedules(db, setupRegistry)
          .catch((error) => console.error("dataset schedules:", error))
          .then(() =>
            options.judgeUpstreams
              ? runDueRecalibrations(db, { upstreams: options.judgeUpstreams, setupRegistry })
              : [],
          )
          .catch((error) => console.error("judge re-calibrations:", error))
          .finally(() => {
            ticking = false;
          });
      }, config.scheduleCheckMs);
    },
    async close() {
      clearInterval(timer);
      await Promise.all([worker.stop(), scheduling]);
    },
  };
}
