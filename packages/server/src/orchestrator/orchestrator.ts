import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { RegistrySetup } from "../failures/index.ts";
import { tenantTaskFamilies } from "../families/task-family-store.ts";
import { judgeTrust } from "../judges/judge-trust.ts";
import { type JudgeUpstreams, usableJudge } from "../judges/tenant-judge.ts";
import type { Database, Queryable } from "../store/database.ts";
import { listModelVersions } from "../store/model-registry.ts";
import { listTenants } from "../store/tenants.ts";
import { executeRun } from "./execute-run.ts";
import { judgeRewardOverrides } from "./judge-reward-overrides.ts";
import type { OrchestratorConfig } from "./orchestrator-config.ts";
import {
  claimRun,
  createRun,
  finishRun,
  type RunRecord,
  shownRecipePath,
  tenantRunsDir,
} from "./run-store.ts";

/** Where a tenant stands with the orchestrator: what it would take to start the next run. */
export interface TenantOrchestratorStatus {
  enabled: boolean;
  minNewFailures: number;
  cooldownMs: number;
  maxParallelJobs: number;
  /** The recipe of the runs it starts, repository-relative (or by file name, when the operator's lies elsewhere). */
  recipe: string;
  /** Failures assigned to patterns since the tenant's last run was created. */
  newFailures: number;
  /**
   * The task family its next run trains (`data.env`): of the new failures' families with a verifier, the one with
   * the most; when none has one and the tenant has a judge, the family with the most; else null (the recipe's own
   * env is kept).
   */
  env: string | null;
  /** What rewards that run's samples: the family's verifier, or the tenant's judge; null with no env. */
  reward: "verifier" | "judge" | null;
  lastRunAt: string | null;
  /** When the cooldown since the last run ends; null when there is no last run. */
  cooldownEndsAt: string | null;
  /** The promoted model runs would start from; null when there is none. */
  productionModelId: string | null;
  /** The tenant's queued and running runs. */
  activeRuns: number;
  /**
   * The tenant's candidates in flight: its runs queued or training, and its models in validation (`candidate`),
   * awaiting a canary or approval (`validated`, `approved`) or in a canary; no run starts at `maxCandidatesInFlight`.
   */
  inFlight: { runs: number; models: { id: string; name: string; status: string }[] };
  maxCandidatesInFlight: number;
  /** True when the next look would start a run. */
  due: boolean;
  /** Why it is or is not due, in words. */
  reason: string;
}

/** What the orchestrator needs beyond its settings. */
export interface OrchestratorOptions {
  db: Database;
  config: OrchestratorConfig;
  /** The artifacts folder (`<ARC_HOME>/artifacts`): a tenant's runs go to `<artifactsDir>/<tenantId>/runs/`. */
  artifactsDir: string;
  /** The tenant's verifiers and solution resolver for dataset synthesis (as the failure service gets them). */
  setupRegistry?: RegistrySetup;
  /** The upstreams a tenant's judge may run on (`ARC_UPSTREAMS`): its runs for families with no verifier use it. */
  judgeUpstreams?: JudgeUpstreams;
  /** Where a training job on a cluster reaches this server's API (its reward module's ARC_URL). */
  publicUrl?: () => string | undefined;
  /** One line per thing it does (run triggered, started, ended). */
  onEvent?: (line: string) => void;
  /** A look that failed (the database went away...); the next look tries again. */
  onError?: (error: Error) => void;
}

/**
 * The family the next run trains and what rewards it: of the new failures' families (most failures first), the
 * first with a verifier; else, when the tenant has a judge, the first family it has at all, rewarded by the judge.
 */
async function nextRunFamily(
  db: Queryable,
  tenantId: string,
  envsByFailures: string[],
  judgeUpstreams: JudgeUpstreams,
): Promise<{ env: string | null; reward: TenantOrchestratorStatus["reward"]; judgeWait?: string }> {
  if (envsByFailures.length === 0) return { env: null, reward: null };
  const families = await tenantTaskFamilies(db, tenantId);
  const verified = envsByFailures.find((env) => families.find(env)?.verify);
  if (verified) return { env: verified, reward: "verifier" };
  const known = envsByFailures.find((env) => families.find(env));
  if (known && (await usableJudge(db, tenantId, judgeUpstreams))) {
    const trust = await judgeTrust(db, tenantId);
    return trust.trusted
      ? { env: known, reward: "judge" }
      : {
          env: null,
          reward: null,
          judgeWait: `the ${known} family has no verifier, and its judge is not trusted yet: ${trust.reason}`,
        };
  }
  return { env: null, reward: null };
}

/** Reads a tenant's trigger state; `db` may be a transaction holding the tenant's row. */
export async function tenantOrchestratorStatus(
  db: Queryable,
  tenantId: string,
  config: OrchestratorConfig,
  judgeUpstreams: JudgeUpstreams = {},
): Promise<TenantOrchestratorStatus> {
  const [row] = await db.query<{ last: string | null; active: number }>(
    `select max(created_at) as last, count(*) filter (where status in ('queued', 'running'))::int as active
     from runs where tenant_id = $1`,
    [tenantId],
  );
  const lastRunAt = row.last ? new Date(row.last).toISOString() : null;
  const byEnv = await db.query<{ env: string | null; n: number }>(
    `select env, count(*)::int as n from failures
     where tenant_id = $1 and ($2::timestamptz is null or assigned_at > $2)
     group by env order by n desc, env`,
    [tenantId, lastRunAt],
  );
  const newFailures = byEnv.reduce((sum, r) => sum + Number(r.n), 0);
  const { env, reward, judgeWait } = await nextRunFamily(
    db,
    tenantId,
    byEnv.flatMap((r) => (r.env === null ? [] : [r.env])),
    judgeUpstreams,
  );
  const [production] = await listModelVersions(db, tenantId, ["promoted"]);
  const models = (await listModelVersions(db, tenantId, [...MODELS_IN_FLIGHT])).map((m) => ({
    id: m.id,
    name: m.name,
    status: m.status,
  }));
  const cooldownEnds = lastRunAt ? new Date(Date.parse(lastRunAt) + config.cooldownMs) : null;
  const activeRuns = Number(row.active);
  let reason: string;
  if (!config.enabled) reason = "the orchestrator is off (ARC_ORCHESTRATOR=1 turns it on)";
  else if (!production?.artifactDir) reason = "no production model with a checkpoint to train from";
  else if (activeRuns + models.length >= config.maxCandidatesInFlight)
    reason = `${describeInFlight(activeRuns, models)} in flight; at most ${config.maxCandidatesInFlight} (ARC_ORCHESTRATOR_MAX_IN_FLIGHT)`;
  else if (newFailures < config.minNewFailures)
    reason = `${newFailures} new failures since the last run, ${config.minNewFailures} needed`;
  else if (cooldownEnds && cooldownEnds.getTime() > Date.now())
    reason = `cooling down until ${cooldownEnds.toISOString()}`;
  else if (judgeWait) reason = `waits: ${judgeWait}`;
  else reason = `${newFailures} new failures since the last run (≥ ${config.minNewFailures})`;
  const due =
    config.enabled &&
    Boolean(production?.artifactDir) &&
    activeRuns + models.length < config.maxCandidatesInFlight &&
    newFailures >= config.minNewFailures &&
    !(cooldownEnds && cooldownEnds.getTime() > Date.now()) &&
    !judgeWait;
  return {
    enabled: config.enabled,
    minNewFailures: config.minNewFailures,
    cooldownMs: config.cooldownMs,
    maxParallelJobs: config.maxParallelJobs,
    recipe: shownRecipePath(config.recipe),
    newFailures,
    env,
    reward,
    lastRunAt,
    cooldownEndsAt: cooldownEnds?.toISOString() ?? null,
    productionModelId: production?.id ?? null,
    activeRuns,
    inFlight: { runs: activeRuns, models },
    maxCandidatesInFlight: config.maxCandidatesInFlight,
    due,
    reason,
  };
}

/** Model statuses of a candidate still on its way to production: validation, approval, canary. */
const MODELS_IN_FLIGHT = ["candidate", "validated", "approved", "canary"] as const;

/** What a tenant has in flight, in words: "1 run queued or training, model run-x/final in canary". */
function describeInFlight(runs: number, models: TenantOrchestratorStatus["inFlight"]["models"]): string {
  const where: Record<string, string> = {
    candidate: "in validation",
    validated: "awaiting its canary",
    approved: "awaiting its canary",
    canary: "in canary",
  };
  return [
    ...(runs > 0 ? [`${runs} run(s) queued or training`] : []),
    ...models.map((m) => `model ${m.name} ${where[m.status] ?? m.status}`),
  ].join(", ");
}

/**
 * The server's training worker. Each look (every `intervalMs`): for every tenant whose patterns gathered
 * `minNewFailures` new failures since its last run (cooldown passed, fewer than `maxCandidatesInFlight` candidates in
 * flight, a production model to start from) it queues a run of the configured recipe (when `enabled`); then it
 * claims queued runs, and runs
 * whose server stopped reporting for `staleMs`, up to `maxParallelJobs` at once in this process, and runs each to
 * its end (`executeRun`: datasets, `arc train` child process, candidate). Queuing holds the tenant's row
 * (`FOR UPDATE SKIP LOCKED`) and claiming the run's, so several servers on one PostgreSQL never start a run twice.
 */
export class Orchestrator {
  /** This process's name in `runs.owner`. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  private readonly active = new Map<string, Promise<void>>();
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private looking: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: OrchestratorOptions) {}

  /** Its settings (the run routes show them with each tenant's status). */
  get config(): OrchestratorConfig {
    return this.options.config;
  }

  /** The upstreams a tenant's judge may run on. */
  get judgeUpstreams(): JudgeUpstreams {
    return this.options.judgeUpstreams ?? {};
  }

  /** The artifacts folder its tenants' run folders go under. */
  get artifactsDir(): string {
    return this.options.artifactsDir;
  }

  /** Looks for work every `intervalMs` until `close`. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.looking = this.looking
        .then(() => this.tick())
        .catch((error) => this.options.onError?.(error as Error));
    }, this.options.config.intervalMs);
  }

  /** Runs of this process that are training now. */
  get runningHere(): number {
    return this.active.size;
  }

  /** One look: queues due runs, then claims and starts runs while this process has room. */
  async tick(): Promise<{ queued: RunRecord[]; started: RunRecord[] }> {
    const queued: RunRecord[] = [];
    if (this.options.config.enabled) {
      for (const tenant of await listTenants(this.options.db)) {
        // a stopping server queues nothing: the runs it would start are another server's (or the next start's)
        if (this.controller.signal.aborted) break;
        const run = await this.queueIfDue(tenant.id);
        if (run) queued.push(run);
      }
    }
    const started: RunRecord[] = [];
    while (!this.controller.signal.aborted && this.active.size < this.options.config.maxParallelJobs) {
      const run = await claimRun(this.options.db, this.owner, { staleMs: this.options.config.staleMs });
      if (!run) break;
      if (run.attempts > this.options.config.maxAttempts) {
        await finishRun(this.options.db, run.tenantId, run.id, this.owner, {
          status: "failed",
          error: `gave up after ${run.attempts - 1} attempts (its server died each time)`,
        });
        continue;
      }
      started.push(run);
      this.launch(run);
    }
    return { queued, started };
  }

  /**
   * Queues a run for the tenant when it is due; null when it is not, when another server is deciding right now, or
   * when this one is stopping.
   */
  async queueIfDue(tenantId: string): Promise<RunRecord | null> {
    const { db, config } = this.options;
    if (this.controller.signal.aborted) return null;
    const run = await db.transaction(async (tx) => {
      const locked = await tx.query("select id from tenants where id = $1 for update skip locked", [
        tenantId,
      ]);
      if (locked.length === 0) return null;
      const upstreams = this.judgeUpstreams;
      const status = await tenantOrchestratorStatus(tx, tenantId, config, upstreams);
      if (!status.due) return null;
      const families = await tenantTaskFamilies(tx, tenantId);
      const runsDir = tenantRunsDir(this.options.artifactsDir, tenantId);
      const judge = status.reward === "judge" ? await usableJudge(tx, tenantId, upstreams) : undefined;
      return createRun(tx, tenantId, {
        trigger: "orchestrator",
        recipePath: config.recipe,
        overrides: [
          ...runOverrides(config.overrides, status.env, (env) => families.find(env)),
          ...(judge && !config.overrides.some((o) => o.startsWith("reward.") || o.startsWith("data.env="))
            ? judgeRewardOverrides(judge, runsDir)
            : []),
        ],
        runsDir,
        baseModelId: status.productionModelId,
      });
    });
    if (run)
      this.options.onEvent?.(
        `run ${run.id} queued for tenant ${tenantId}: new failures crossed ${config.minNewFailures}`,
      );
    return run;
  }

  private launch(run: RunRecord): void {
    const key = `${run.tenantId}/${run.id}`;
    this.options.onEvent?.(
      `run ${run.id} (tenant ${run.tenantId}) ${run.attempts > 1 ? "resumed" : "started"}`,
    );
    const done = executeRun(this.options.db, run, {
      owner: this.owner,
      pollMs: this.options.config.pollMs,
      datasetSize: this.options.config.datasetSize,
      setupRegistry: this.options.setupRegistry,
      publicUrl: this.options.publicUrl?.(),
      signal: this.controller.signal,
      stopWithinMs: this.options.config.stopWithinMs,
      onAbort: "requeue",
    })
      .then((result) => {
        this.options.onEvent?.(
          `run ${run.id} ${result.run.status}${result.candidate ? `: candidate ${result.candidate.id}` : ""}${result.run.error ? `: ${result.run.error}` : ""}`,
        );
      })
      .catch((error) => this.options.onError?.(error as Error))
      .finally(() => this.active.delete(key));
    this.active.set(key, done);
  }

  /** Resolves when this process's runs have ended (tests; `close` uses it after asking them to stop). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active.values()]);
  }

  /**
   * Stops looking and queues nothing more; running runs stop after their current step with a checkpoint, or are
   * killed after `stopWithinMs`, and go back to the queue to resume from their last checkpoint.
   */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.controller.abort();
    await this.looking.catch(() => undefined);
    await this.idle();
  }
}

/**
 * The overrides of a run the orchestrator starts: the operator's, then `data.env` set to the family the new failures
 * belong to (unless the operator pinned one), with no generated held-out tasks when that family has no generator or
 * no verifier to judge them (the run is judged on the tenant's EvalSet by the validator).
 */
function runOverrides(
  operator: readonly string[],
  env: string | null,
  familyOf: (env: string) => { generate?: unknown; verify?: unknown } | undefined,
): string[] {
  if (!env || operator.some((o) => o.startsWith("data.env="))) return [...operator];
  const family = familyOf(env);
  const heldOut = family?.generate && family.verify ? [] : ["data.evalCount=0"];
  return [...operator, `data.env=${env}`, ...heldOut];
}
