import type { InferenceEngine } from "@arc/core";
import { EmbeddedInferenceEngine } from "@arc/engine";
import type { ModelVersion } from "../store/model-registry.ts";
import { FaultInjectingEngine, FaultInjection } from "./fault-injecting-engine.ts";
import { embeddedBackend, type ModelBackend, upstreamBackend } from "./model-backend.ts";

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
}

/**
 * The backends of a process's model versions, made on first use and kept: an embedded checkpoint is loaded once
 * (it is the slow part) and shared by the gateway and the validator; an upstream model is a small HTTP client.
 */
export class ModelPool {
  private readonly backends = new Map<string, Promise<ModelBackend>>();

  constructor(private readonly options: ModelPoolOptions = {}) {}

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

  /** The backend of a model version (loading its checkpoint the first time). */
  backend(version: ModelVersion): Promise<ModelBackend> {
    let made = this.backends.get(version.id);
    if (!made) {
      made = this.make(version);
      made.catch(() => this.backends.delete(version.id));
      this.backends.set(version.id, made);
    }
    return made;
  }

  /** Forgets a model version's backend (after it is retired), so its weights can be collected. */
  evict(versionId: string): void {
    this.backends.delete(versionId);
  }

  private async make(version: ModelVersion): Promise<ModelBackend> {
    if (version.upstream) return upstreamBackend(version.upstream, this.options.env);
    if (!version.artifactDir) throw new Error(`model ${version.name} has neither artifactDir nor upstream`);
    const engine = this.options.loadEngine
      ? await this.options.loadEngine(version.artifactDir)
      : await EmbeddedInferenceEngine.load(version.artifactDir);
    const faults = this.options.faultInjection ?? {};
    const key = Object.hasOwn(faults, version.id) ? version.id : `${version.tenantId}/${version.name}`;
    const fault = Object.hasOwn(faults, key) ? faults[key] : undefined;
    // the engine takes chat messages only through its byte-level template, so its context bounds their bytes
    const contextTokens =
      engine instanceof EmbeddedInferenceEngine ? engine.config.max_position_embeddings : undefined;
    return embeddedBackend(
      fault ? new FaultInjectingEngine(engine, fault) : engine,
      version.id,
      contextTokens,
    );
  }
}
