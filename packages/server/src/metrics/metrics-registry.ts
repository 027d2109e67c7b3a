import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { type LiveSources, registerLiveGauges } from "./live-gauges.ts";

/** Bucket bounds in seconds, from a millisecond up: most requests and adapter loads end well under a second. */
const secondsBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * What a scrape shows: `process`, the process's series (`collectDefaultMetrics` and Arc's series without a tenant
 * label); `tenants`, those and the per-tenant series, whose labels name every tenant.
 */
export type MetricsScope = "process" | "tenants";

/**
 * The server's metrics, rendered for `GET /metrics` in the Prometheus text format. Each instance has registries of
 * its own (several servers may run in one process): one for the process's series (the process metrics of
 * `collectDefaultMetrics` and the counters below without a tenant label) and one for the per-tenant series, each
 * holding — once `watch` is called — its gauges read from the database at scrape time.
 */
export class ServerMetrics {
  private readonly register = new Registry();
  private readonly tenantRegister = new Registry();
  readonly ingestedTraces = new Counter({
    name: "arc_ingested_traces_total",
    help: "Traces written anew by the ingest API, by source.",
    labelNames: ["source"],
    registers: [this.register],
  });
  readonly ingestedSteps = new Counter({
    name: "arc_ingested_steps_total",
    help: "Steps (spans) written anew by the ingest API, by source.",
    labelNames: ["source"],
    registers: [this.register],
  });
  readonly rejectedRequests = new Counter({
    name: "arc_ingest_rejected_total",
    help: "Ingest requests or spans rejected, by reason (malformed_json, invalid, too_large, missing_api_key, invalid_api_key...).",
    labelNames: ["reason"],
    registers: [this.register],
  });
  readonly gatewayTraces = new Counter({
    name: "arc_gateway_traces_total",
    help: "Gateway traces by outcome: stored; dropped (the queue was full); retried (a failed write tried again); lost (every try failed); rejected (the database refused that trace, cause names why, e.g. invalid_text_representation).",
    labelNames: ["outcome", "cause"],
    registers: [this.register],
  });
  readonly gatewayTokens = new Counter({
    name: "arc_gateway_tokens_total",
    help: "Tokens of the gateway's model calls (a teacher's calls during run-time teaching included), by tenant, model that answered and kind (prompt or completion).",
    labelNames: ["tenant", "model", "kind"],
    registers: [this.tenantRegister],
  });
  readonly requestDuration = new Histogram({
    name: "arc_http_request_duration_seconds",
    help: "Time from request to response, by route, method and status.",
    labelNames: ["route", "method", "status"],
    buckets: secondsBuckets,
    registers: [this.register],
  });
  /** The gateway's model pool: its size, what it let go of, and adapter loads on upstreams. */
  readonly modelPool = {
    loaded: new Gauge({
      name: "arc_gateway_models_loaded",
      help: "Checkpoints the gateway holds loaded in this process now.",
      registers: [this.register],
    }),
    capacity: new Gauge({
      name: "arc_gateway_models_loaded_max",
      help: "The most checkpoints the gateway holds loaded (ARC_GATEWAY_MODEL_POOL_SIZE).",
      registers: [this.register],
    }),
    evictions: new Counter({
      name: "arc_gateway_model_evictions_total",
      help: "Checkpoints let go of, least recently used first, to stay within the bound.",
      registers: [this.register],
    }),
    adapterLoads: new Histogram({
      name: "arc_gateway_adapter_load_seconds",
      help: "Time an upstream took to load a model version's LoRA adapter.",
      buckets: secondsBuckets,
      registers: [this.register],
    }),
  };

  constructor() {
    collectDefaultMetrics({ register: this.register });
  }

  /** Adds the gauges read at scrape time (queue depths, failure rates, canaries, training); call once. */
  watch(sources: LiveSources): void {
    registerLiveGauges({ process: this.register, tenants: this.tenantRegister }, sources);
  }

  /** The `content-type` of `render`'s text. */
  get contentType(): string {
    return this.register.contentType;
  }

  /** The body of `GET /metrics`: the process's series, and with `tenants` the per-tenant series after them. */
  async render(scope: MetricsScope = "process"): Promise<string> {
    const processSeries = await this.register.metrics();
    return scope === "process" ? processSeries : `${processSeries}${await this.tenantRegister.metrics()}`;
  }
}
