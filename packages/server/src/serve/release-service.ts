import type { DetectorRegistry } from "@arc/core";
import { Deployer } from "../deploy/deployer.ts";
import { PeriodicWorker } from "../deploy/periodic-worker.ts";
import { InlineVerdicts, StoredVerdicts, type VerdictSource } from "../deploy/verdict-source.ts";
import { ChatGateway } from "../gateway/chat-gateway.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import type { TraceRecorderOptions } from "../gateway/trace-recorder.ts";
import type { JudgeUpstreams } from "../judges/tenant-judge.ts";
import type { ServerMetrics } from "../metrics/metrics-registry.ts";
import type { Database } from "../store/database.ts";
import { getModelVersion } from "../store/model-registry.ts";
import { TeachingRuntime } from "../teach/teaching-runtime.ts";
import { PipelineEvalSets, StoredEvalSets } from "../validate/eval-set-source.ts";
import type { JudgeOptions } from "../validate/judge-models.ts";
import type { ValidatorDeps } from "../validate/validate-candidate.ts";
import { Validator } from "../validate/validator-worker.ts";

/** Options of the release service; everything but the database has a default. */
export interface ReleaseServiceOptions {
  db: Database;
  /** Model backends (default: ModelPool.fromEnv, which reads ARC_GATEWAY_FAULT_INJECTION). */
  pool?: ModelPool;
  /** The default pool's bound on checkpoints loaded in this process. */
  modelPoolSize?: number;
  /** Live verdicts on gateway traces (default: the failure pipeline's stored verdicts, the detectors inline after 5 s). */
  verdicts?: VerdictSource;
  /** The tenant's detectors for that inline fallback (default: the built-in ones; give the failure pipeline's, with its solution resolver). */
  registryFor?: (tenantId: string) => DetectorRegistry;
  judge?: JudgeOptions;
  /** The upstreams a tenant's judge may run on (the server's `upstreams`): it validates rows no verifier can judge. */
  judgeUpstreams?: JudgeUpstreams;
  /** Where the gateway's trace outcomes, tokens and model pool are counted (`/metrics`). */
  metrics?: ServerMetrics;
  /** The gateway's trace queue and retries (defaults in TraceRecorderOptions). */
  traceRecorder?: Omit<TraceRecorderOptions, "counter">;
  /** Run the validator and deployer loops (default true). */
  workers?: boolean;
  validatorIntervalMs?: number;
  deployerIntervalMs?: number;
  /** Progress events of the workers (validations, canary transitions). */
  onEvent?: (line: string) => void;
}

/** The gateway, validator and deployer of one server process, with their worker loops (serve/ mounts their routes). */
export interface ReleaseService {
  gateway: ChatGateway;
  deployer: Deployer;
  validator: Validator;
  pool: ModelPool;
  /** Run-time teaching of the gateway's requests. */
  teaching: TeachingRuntime;
  /** EvalSets handed over directly (`POST /v1/eval-sets`); the validator also reads the failure pipeline's. */
  evalSets: StoredEvalSets;
  /** What validating a candidate reads: the database, the model backends, the EvalSets and the judge. */
  validatorDeps: ValidatorDeps;
  start(): void;
  /** Stops the loops and stores the traces still queued. */
  close(): Promise<void>;
}

/** Wires gateway, validator and deployer over one database (state lives there, so a restart resumes it). */
export function createReleaseService(options: ReleaseServiceOptions): ReleaseService {
  const { db } = options;
  const say = options.onEvent ?? (() => {});
  const poolMetrics = options.metrics?.modelPool;
  if (!options.pool) poolMetrics?.capacity.set(options.modelPoolSize ?? 8);
  const pool =
    options.pool ??
    ModelPool.fromEnv(process.env, {
      maxLoaded: options.modelPoolSize,
      metrics: poolMetrics,
      // an adapter left loaded on an upstream is worth an operator's eye even where progress events are off
      onError: (message) => (options.onEvent ?? console.error)(`model pool: ${message}`),
    });
  const evalSets = new StoredEvalSets(db);
  const teaching = new TeachingRuntime({ db, pool });
  const gateway = new ChatGateway({
    db,
    pool,
    teaching,
    tokens: options.metrics?.gatewayTokens,
    recorderOptions: { ...options.traceRecorder, counter: options.metrics?.gatewayTraces },
  });
  const deployer = new Deployer({
    db,
    verdicts: options.verdicts ?? new StoredVerdicts(db, new InlineVerdicts(options.registryFor)),
    routing: gateway.routing,
    // a canary's model is loaded (its adapter on its upstream) before traffic reaches it
    prepare: async (version) => {
      await pool.backend(version);
    },
    onTransition: (e) => {
      // a replaced model is closed (its adapter unloaded) once its last requests finish
      const left =
        e.action === "promote"
          ? e.controlId
          : e.action === "rollback" || e.action === "keep_production"
            ? e.candidateId
            : null;
      if (left)
        getModelVersion(db, e.tenantId, left).then(
          (version) => pool.retire(version),
          (error) => say(`model pool: ${left} not retired: ${(error as Error).message}`),
        );
      say(`deploy ${e.deploymentId}: ${e.action} — ${e.reason}`);
    },
  });
  const validatorDeps: ValidatorDeps = {
    db,
    pool,
    evalSets: new PipelineEvalSets(db, evalSets),
    judge: options.judge,
    judgeUpstreams: options.judgeUpstreams,
  };
  const validator = new Validator(validatorDeps, (e) =>
    say(`validate ${e.model}: ${e.decision} — ${e.reasons.join("; ")}`),
  );
  const workers = [
    new PeriodicWorker("validator", () => validator.tick(), options.validatorIntervalMs ?? 2_000),
    new PeriodicWorker("deployer", () => deployer.tick(), options.deployerIntervalMs ?? 1_000),
  ];
  return {
    gateway,
    deployer,
    validator,
    pool,
    evalSets,
    teaching,
    validatorDeps,
    start() {
      if (options.workers === false) return;
      for (const w of workers) w.start();
    },
    async close() {
      for (const w of workers) await w.stop();
      await gateway.flush();
    },
  };
}
