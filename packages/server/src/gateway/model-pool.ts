import type { InferenceEngine } from "@arc/core";
import { EmbeddedInferenceEngine } from "@arc/engine";
import type { Counter, Gauge, Histogram } from "prom-client";
import type { ModelVersion } from "../store/model-registry.ts";
import { FaultInjectingEngine, FaultInjection } from "./fault-injecting-engine.ts";
import { embeddedBackend, type ModelBackend, type PromptBound, upstreamBackend } from "./model-backend.ts";
import { type LoadedBackend, PooledBackend } from "./pooled-backend.ts";
import { adapterBackend, isAdapterUpstream, loadAdapter, unloadAdapter } from "./upstream-adapter.ts";

/** A fault injection key: a model version id, or a tenant id and a model name. */
const faultKey = /^(mv_[0-9a-f]+|[^/]+\/.+)$/;

/** Options of the model pool. */
export interface ModelPoolOptions {
  /**
   * FAULT INJECTION (tests and drills only): which model misbehaves and how, keyed by model version id (`mv_...`) or
   * `<tenantId>/<model name>` (a bare name would hit every tenant's model of that name). Read from the environment
   * variable ARC_GATEWAY_FAULT_INJECTION (JSON) by `fromEnv`; read when a backend is made.
   */
  faultInjection?: Record<string, FaultInjection>;
  env?: NodeJS.ProcessEnv;
  /** How a checkpoint directory becomes an engine (default: EmbeddedInferenceEngine.load). */
  loadEngine?: (artifactDir: string) => Promise<InferenceEngine>;
  /** The most checkpoints held loaded in this process (default 8); the least recently used is let go first. */
  maxLoaded?: number;
  /**
   * How long a version that left service (rejected, rolled back, or replaced by a promotion) keeps its backend before it is
   * closed and its adapter unloaded from its upstream, in ms (default 10 s): other processes' routes still name it
   * for up to a second, and their calls in flight finish. Calls in this process are waited for in any case.
   */
  retireDrainMs?: number;
  /** Where the pool's size, evictions and adapter loads are counted (`/metrics`). */
  metrics?: ModelPoolMetrics;
  /** Reports a backend that could not be closed or an adapter that could not be unloaded. */
  onError?: (message: string) => void;
}

/** The gauges and counters the pool keeps up to date. */
export interface ModelPoolMetrics {
  /** Checkpoints loaded in this process now. */
  loaded: Gauge;
  /** Checkpoints let go of to stay within the bound. */
  evictions: Counter;
  /** Seconds each adapter load on an upstream took. */
  adapterLoads: Histogram;
}

/**
 * The backends of a process's model versions, made on first use. An embedded checkpoint is loaded once (it is the
 * slow part) and shared by the gateway, the teacher and the validator; at most `maxLoaded` stay loaded, the least
 * recently used let go first (closed once its calls in flight end, and loaded again when asked for). An upstream
 * model is a small HTTP client; an adapter version is loaded on its upstream before its first call.
 */
export class ModelPool {
  private readonly handles = new Map<string, PooledBackend>();
  /** Loaded in-process backends, least recently used first. */
  private readonly loadedOrder = new Set<PooledBackend>();
  private readonly maxLoaded: number;
  private evicted = 0;

  constructor(private readonly options: ModelPoolOptions = {}) {
    this.maxLoaded = options.maxLoaded ?? 8;
    if (!Number.isInteger(this.maxLoaded) || this.maxLoaded < 1)
      throw new Error(`maxLoaded: expected a whole number of at least 1, got ${options.maxLoaded}`);
  }

  /** A pool whose fault injection comes from ARC_GATEWAY_FAULT_INJECTION, when set. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, options: ModelPoolOptions = {}): ModelPool {
    const raw = env.ARC_GATEWAY_FAULT_INJECTION;
    if (!raw) return new ModelPool({ ...options, env });
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new Error(
        `ARC_GATEWAY_FAULT_INJECTION: expected JSON {"<model version id or tenantId/model name>": {"mode": ...}}, got ${raw}`,
      );
    }
    const faults: Record<string, FaultInjection> = {};
    for (const [model, spec] of Object.entries(parsed as Record<string, unknown>)) {
      if (!faultKey.test(model)) {
        throw new Error(
          `ARC_GATEWAY_FAULT_INJECTION: expected a key "mv_..." (a model version id) or "<tenantId>/<model name>", got "${model}"`,
        );
      }
      const result = FaultInjection.safeParse(spec);
      if (!result.success) {
        throw new Error(`ARC_GATEWAY_FAULT_INJECTION.${model}: ${result.error.issues[0]?.message}`);
      }
      faults[model] = result.data;
    }
    return new ModelPool({ ...options, env, faultInjection: faults });
  }

  /** The backend of a model version, made (its checkpoint or adapter loaded) before it is handed out. */
  async backend(version: ModelVersion): Promise<ModelBackend> {
    const handle = this.handle(version);
    await handle.warm();
    return handle;
  }

  /**
   * A version left service: after the drain, its backend is closed once idle (an adapter unloaded from its upstream,
   * also when another process loaded it). Its handle stays, retired: a call that still reaches it makes it again and
   * closes it after, and it no longer counts against the bound.
   */
  retire(version: ModelVersion): void {
    const drainMs = this.options.retireDrainMs ?? 10_000;
    const known = this.handles.get(version.id);
    // kept, retired, so that a call which chose this version before it left service closes it again afterwards
    const handle = known ?? this.handle(version);
    const unloadHere = !handle.isLoaded && isAdapterUpstream(version.upstream);
    this.loadedOrder.delete(handle);
    this.updateGauge();
    setTimeout(() => {
      handle.retire();
      this.loadedOrder.delete(handle);
      this.updateGauge();
      // an adapter another process loaded: unloaded from its upstream all the same
      const { upstream } = version;
      if (unloadHere && !handle.isLoaded && isAdapterUpstream(upstream))
        unloadAdapter(upstream, this.options.env ?? process.env).catch((error) =>
          this.options.onError?.(`model ${version.name} (${version.id}): ${(error as Error).message}`),
        );
    }, drainMs).unref();
  }

  /** Checkpoints loaded in this process, the bound, and how many were let go of to keep it. */
  stats(): { loaded: number; maxLoaded: number; evictions: number } {
    return { loaded: this.loadedOrder.size, maxLoaded: this.maxLoaded, evictions: this.evicted };
  }

  private handle(version: ModelVersion): PooledBackend {
    let handle = this.handles.get(version.id);
    if (!handle) {
      const inProcess = !version.upstream;
      handle = new PooledBackend(
        version.id,
        inProcess,
        inProcess || isAdapterUpstream(version.upstream),
        () => this.make(version),
        {
          used: (h) => this.used(h),
          closeFailed: (_h, error) =>
            this.options.onError?.(
              `model ${version.name} (${version.id}): closing it failed: ${(error as Error).message}`,
            ),
        },
      );
      this.handles.set(version.id, handle);
    }
    return handle;
  }

  /** Marks `handle` most recently used, and lets go of the least recently used beyond the bound. */
  private used(handle: PooledBackend): void {
    if (handle.isRetired) return; // closed after each call, not kept
    this.loadedOrder.delete(handle);
    this.loadedOrder.add(handle);
    while (this.loadedOrder.size > this.maxLoaded) {
      const oldest = this.loadedOrder.values().next().value as PooledBackend;
      this.loadedOrder.delete(oldest);
      oldest.release();
      this.evicted++;
      this.options.metrics?.evictions.inc();
    }
    this.updateGauge();
  }

  private updateGauge(): void {
    this.options.metrics?.loaded.set(this.loadedOrder.size);
  }

  private async make(version: ModelVersion): Promise<LoadedBackend> {
    const env = this.options.env ?? process.env;
    const { upstream } = version;
    if (isAdapterUpstream(upstream)) {
      const loaded = (ms: number) => this.options.metrics?.adapterLoads.observe(ms / 1000);
      loaded(await loadAdapter(upstream, env));
      return { backend: adapterBackend(upstream, env, loaded), close: () => unloadAdapter(upstream, env) };
    }
    if (upstream) return { backend: upstreamBackend(upstream, env), close: async () => {} };
    if (!version.artifactDir) throw new Error(`model ${version.name} has neither artifactDir nor upstream`);
    const engine = this.options.loadEngine
      ? await this.options.loadEngine(version.artifactDir)
      : await EmbeddedInferenceEngine.load(version.artifactDir);
    const faults = this.options.faultInjection ?? {};
    const key = Object.hasOwn(faults, version.id) ? version.id : `${version.tenantId}/${version.name}`;
    const fault = Object.hasOwn(faults, key) ? faults[key] : undefined;
    let bound: PromptBound | undefined;
    if (engine instanceof EmbeddedInferenceEngine && engine.longestTokenBytes !== undefined) {
      const { longestTokenBytes } = engine;
      bound = { contextTokens: engine.config.max_position_embeddings, longestTokenBytes };
    }
    return {
      backend: embeddedBackend(fault ? new FaultInjectingEngine(engine, fault) : engine, version.id, bound),
      close: async () => engine.close?.(),
    };
  }
}
