import { Gauge, type Registry } from "prom-client";
import { activeDeployments } from "../deploy/deployment-store.ts";
import { pendingDetectionsByTenant } from "../failures/detection-queue.ts";
import { failureRatesBetween } from "../failures/live-failure-rates.ts";
import { activeRuns } from "../orchestrator/run-store.ts";
import type { Queryable } from "../store/database.ts";
import { listTenants } from "../store/tenants.ts";

/** What the gauges read when `/metrics` is scraped. */
export interface LiveSources {
  db: Queryable;
  /** Gateway traces waiting in this process's memory to be written. */
  gatewayTraceQueue: () => number;
  /** HTTP requests this process is answering now. */
  requestsInFlight: () => number;
}

/** Label values and the value of each series of a gauge. */
type Series = [labels: Record<string, string>, value: number][];

/** How far back `arc_failure_rate` looks. */
const FAILURE_RATE_WINDOW_MS = 60 * 60_000;

/**
 * A gauge whose series `read` returns at each scrape. When `read` fails (the database is down) the gauge shows no
 * series and the error is logged, once until a read succeeds again; the rest of `/metrics` renders as usual.
 */
function liveGauge(
  register: Registry,
  name: string,
  help: string,
  labelNames: string[],
  read: () => Promise<Series>,
): void {
  let failing = false;
  new Gauge({
    name,
    help,
    labelNames,
    registers: [register],
    async collect() {
      let series: Series = [];
      try {
        series = await read();
        failing = false;
      } catch (error) {
        if (!failing) console.error(`/metrics: ${name} could not be read:`, error);
        failing = true;
      }
      this.reset();
      for (const [labels, value] of series) this.set(labels, value);
    },
  });
}

/**
 * Registers the gauges of queue depths, live failure rates, canaries and training runs, read at scrape time: those
 * of this process in `process`, those labelled by tenant in `tenants`.
 */
export function registerLiveGauges(
  { process, tenants }: { process: Registry; tenants: Registry },
  { db, gatewayTraceQueue, requestsInFlight }: LiveSources,
): void {
  liveGauge(
    process,
    "arc_http_requests_in_flight",
    "HTTP requests this process is answering now (this scrape included); detection yields to them.",
    [],
    async () => [[{}, requestsInFlight()]],
  );
  liveGauge(
    process,
    "arc_gateway_trace_queue_depth",
    "Gateway traces waiting in this process's memory to be written to the database.",
    [],
    async () => [[{}, gatewayTraceQueue()]],
  );
  liveGauge(
    tenants,
    "arc_detection_queue_depth",
    "Traces waiting to be judged by the failure pipeline, by tenant (dead letters not counted).",
    ["tenant"],
    async () => (await pendingDetectionsByTenant(db)).map((q) => [{ tenant: q.tenantId }, q.pending]),
  );
  liveGauge(
    tenants,
    "arc_runs_queued",
    "Training runs waiting to start, by tenant.",
    ["tenant"],
    async () => {
      const queued = new Map<string, number>();
      for (const run of await activeRuns(db)) {
        if (run.status === "queued") queued.set(run.tenantId, (queued.get(run.tenantId) ?? 0) + 1);
      }
      return [...queued].map(([tenant, n]) => [{ tenant }, n]);
    },
  );
  liveGauge(
    tenants,
    "arc_failure_rate",
    "Share of judged gateway calls that failed among calls started in the last hour, by tenant and the model version that answered.",
    ["tenant", "model_version"],
    async () => {
      const since = new Date(Date.now() - FAILURE_RATE_WINDOW_MS);
      const series: Series = [];
      for (const tenant of await listTenants(db)) {
        for (const rate of await failureRatesBetween(db, tenant.id, since)) {
          series.push([{ tenant: tenant.id, model_version: rate.modelVersion }, rate.failureRate]);
        }
      }
      return series;
    },
  );
  const canaries = (value: "share" | "stage") => async (): Promise<Series> =>
    (await activeDeployments(db)).map((d) => [
      { tenant: d.tenantId, deployment: d.id, candidate: d.candidateId },
      d[value],
    ]);
  liveGauge(
    tenants,
    "arc_canary_share",
    "Share of a tenant's traffic (0..1) its running canary gets, by deployment and candidate model version.",
    ["tenant", "deployment", "candidate"],
    canaries("share"),
  );
  liveGauge(
    tenants,
    "arc_canary_stage",
    "Ramp stage of a tenant's running canary (0 is the ramp's first share), by deployment and candidate model version.",
    ["tenant", "deployment", "candidate"],
    canaries("stage"),
  );
  const runningRuns = async () => (await activeRuns(db)).filter((run) => run.status === "running");
  liveGauge(
    tenants,
    "arc_training_step",
    "Last step a running training run reported, by tenant and run.",
    ["tenant", "run"],
    async () => (await runningRuns()).map((run) => [{ tenant: run.tenantId, run: run.id }, run.step]),
  );
  liveGauge(
    tenants,
    "arc_training_reward",
    "Last reward a running training run reported (absent before its first trained step), by tenant and run.",
    ["tenant", "run"],
    async () =>
      (await runningRuns()).flatMap(
        ({ tenantId, id, metrics }): Series =>
          typeof metrics.reward === "number" ? [[{ tenant: tenantId, run: id }, metrics.reward]] : [],
      ),
  );
}
