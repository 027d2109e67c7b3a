import type { InferenceEngine } from "@arc/core";
import { EmbeddedInferenceEngine } from "@arc/engine";
import type { ModelVersion } from "../store/model-registry.ts";
import { FaultInjectingEngine, FaultInjection } from "./fault-injecting-engine.ts";
import { embeddedBackend, type ModelBackend, upstreamBackend } from "./model-backend.ts";

/** Options of the model pool. */
export interface ModelPoolOptions {
  /**
   * FAULT INJECTION (tests and drills only): model version id or name → how it misbehaves. Read from the
   * environment variable ARC_GATEWAY_FAULT_INJECTION (JSON) by `fromEnv`.
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
      throw new Error(`ARC_GATEWAY_FAULT_INJECTION: expected JSON {"<model>": {"mode": ...}}, got ${raw}`);
    }
    const faults: Record<string, FaultInjection> = {};
    for (const [model, spec] of Object.entries(parsed as Record<string, unknown>)) {
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
    const fault = this.options.faultInjection?.[version.id] ?? this.options.faultInjection?.[version.name];
    return embeddedBackend(fault ? new FaultInjectingEngine(engine, fault) : engine, version.id);
  }
}
