/** Label values of one series, e.g. `{ route: "/v1/traces", status: "200" }`. */
export type Labels = Record<string, string>;

const defaultBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function seriesKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k].replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
    .join(",");
}

/** A monotonically increasing count. */
export class Counter {
  private readonly series = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  /** Adds `by` to the series of `labels` (created at 0). */
  inc(labels: Labels = {}, by = 1): void {
    const key = seriesKey(labels);
    this.series.set(key, (this.series.get(key) ?? 0) + by);
  }
  /** The current value of one series (0 when never incremented). */
  value(labels: Labels = {}): number {
    return this.series.get(seriesKey(labels)) ?? 0;
  }
  /** Every series in the Prometheus text format. */
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [key, value] of this.series) lines.push(`${this.name}${key ? `{${key}}` : ""} ${value}`);
    return lines.join("\n");
  }
}

/** A value that goes up and down, set as it changes. */
export class Gauge {
  private readonly series = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  /** Sets the series of `labels` to `value`. */
  set(labels: Labels, value: number): void {
    this.series.set(seriesKey(labels), value);
  }
  /** The current value of one series (0 when never set). */
  value(labels: Labels = {}): number {
    return this.series.get(seriesKey(labels)) ?? 0;
  }
  /** Every series in the Prometheus text format. */
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [key, value] of this.series) lines.push(`${this.name}${key ? `{${key}}` : ""} ${value}`);
    return lines.join("\n");
  }
}

/** Observations in cumulative buckets (seconds), as Prometheus histograms are. */
export class Histogram {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[] = defaultBuckets,
  ) {}
  /** Counts `value` (seconds) in every bucket it fits under, and in the sum and count, for `labels`. */
  observe(labels: Labels, value: number): void {
    const key = seriesKey(labels);
    let s = this.series.get(key);
    if (!s) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) s.counts[i]++;
    s.sum += value;
    s.count++;
  }
  /** How many values one series observed, and their sum (zeros when none). */
  totals(labels: Labels = {}): { count: number; sum: number } {
    const s = this.series.get(seriesKey(labels));
    return { count: s?.count ?? 0, sum: s?.sum ?? 0 };
  }
  /** Every series in the Prometheus text format (`_bucket`, `_sum`, `_count`). */
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [key, s] of this.series) {
      const sep = key ? `${key},` : "";
      this.buckets.forEach((b, i) => {
        lines.push(`${this.name}_bucket{${sep}le="${b}"} ${s.counts[i]}`);
      });
      lines.push(`${this.name}_bucket{${sep}le="+Inf"} ${s.count}`);
      lines.push(`${this.name}_sum${key ? `{${key}}` : ""} ${s.sum}`);
      lines.push(`${this.name}_count${key ? `{${key}}` : ""} ${s.count}`);
    }
    return lines.join("\n");
  }
}

/** The server's metrics, rendered for `GET /metrics` in the Prometheus text format. */
export class ServerMetrics {
  readonly ingestedTraces = new Counter(
    "arc_ingested_traces_total",
    "Traces written anew by the ingest API.",
  );
  readonly ingestedSteps = new Counter(
    "arc_ingested_steps_total",
    "Steps (spans) written anew by the ingest API, by source.",
  );
  readonly rejectedRequests = new Counter(
    "arc_ingest_rejected_total",
    "Ingest requests or spans rejected, by reason (malformed_json, invalid, too_large, missing_api_key, invalid_api_key...).",
  );
  readonly gatewayTraces = new Counter(
    "arc_gateway_traces_total",
    "Gateway traces by outcome: stored; dropped (the queue was full); retried (a failed write tried again); lost (every try failed); rejected (the database refused that trace, cause names why, e.g. invalid_text_representation).",
  );
  readonly requestDuration = new Histogram(
    "arc_http_request_duration_seconds",
    "Time from request to response, by route and status.",
  );
  /** The gateway's model pool: its size, what it let go of, and adapter loads on upstreams. */
  readonly modelPool = {
    loaded: new Gauge(
      "arc_gateway_models_loaded",
      "Checkpoints the gateway holds loaded in this process now.",
    ),
    capacity: new Gauge(
      "arc_gateway_models_loaded_max",
      "The most checkpoints the gateway holds loaded (ARC_GATEWAY_MODEL_POOL_SIZE).",
    ),
    evictions: new Counter(
      "arc_gateway_model_evictions_total",
      "Checkpoints let go of, least recently used first, to stay within the bound.",
    ),
    adapterLoads: new Histogram(
      "arc_gateway_adapter_load_seconds",
      "Time an upstream took to load a model version's LoRA adapter.",
    ),
  };

  /** The body of `GET /metrics`. */
  render(): string {
    return `${[
      this.ingestedTraces,
      this.ingestedSteps,
      this.rejectedRequests,
      this.gatewayTraces,
      this.requestDuration,
      this.modelPool.loaded,
      this.modelPool.capacity,
      this.modelPool.evictions,
      this.modelPool.adapterLoads,
    ]
      .map((m) => m.render())
      .join("\n")}\n`;
  }
}
