import type { InferenceEngine } from "@arc/core";
import { CheckpointError } from "../checkpoint/checkpoint-error.ts";
import { type LoraAdapter, mergeLoraAdapter, readLoraAdapter } from "../checkpoint/lora-merge.ts";
import type { NamedTensor } from "../checkpoint/safetensors.ts";
import { OpenAIError } from "./openai-error.ts";

/** An adapter read, or its fault as vLLM answers one: 400 InvalidUserInput. */
async function readAdapter(path: string): Promise<LoraAdapter | null> {
  try {
    return await readLoraAdapter(path);
  } catch (error) {
    throw asUserError(error);
  }
}

/** The base weights with the adapter merged, or the fault as vLLM answers one. */
function merged(base: Map<string, NamedTensor>, adapter: LoraAdapter): Map<string, NamedTensor> {
  try {
    return mergeLoraAdapter(base, adapter);
  } catch (error) {
    throw asUserError(error);
  }
}

function asUserError(error: unknown): unknown {
  return error instanceof CheckpointError
    ? new OpenAIError(400, error.message, { type: "InvalidUserInput" })
    : error;
}

/**
 * An adapter's engine, counting the generations on it, so that one dropped from the pool is closed once they end. A
 * generation that reaches it after that (its request was handed the engine just before the drop) makes it again, and
 * it is closed again after.
 */
class HeldEngine implements InferenceEngine {
  private inner: Promise<InferenceEngine> | null = null;
  private running = 0;
  private dropped = false;
  private version = 0;
  private syntax: InferenceEngine["toolCallSyntax"];

  constructor(private readonly make: () => Promise<InferenceEngine>) {}

  /** Makes the engine now, so that a fault in the adapter shows at once. */
  async open(): Promise<this> {
    const engine = await this.ensure();
    this.version = engine.getVersion();
    this.syntax = engine.toolCallSyntax;
    return this;
  }

  get toolCallSyntax() {
    return this.syntax;
  }

  async generate(...args: Parameters<InferenceEngine["generate"]>) {
    this.running++;
    try {
      return await (await this.ensure()).generate(...args);
    } finally {
      this.running--;
      if (this.dropped && this.running === 0) await this.closeEngine();
    }
  }

  getVersion() {
    return this.version;
  }

  async setWeights(): Promise<void> {
    throw new OpenAIError(400, "an adapter's weights are its own: load another adapter instead", {
      type: "InvalidUserInput",
    });
  }

  /** Out of the pool: closed now when idle, else when its last generation ends. */
  async drop(): Promise<void> {
    this.dropped = true;
    if (this.running === 0) await this.closeEngine();
  }

  private ensure(): Promise<InferenceEngine> {
    if (!this.inner) {
      const making = this.make();
      making.catch(() => {
        if (this.inner === making) this.inner = null;
      });
      this.inner = making;
    }
    return this.inner;
  }

  private async closeEngine(): Promise<void> {
    const inner = this.inner;
    this.inner = null;
    await (await inner?.catch(() => null))?.close?.();
  }
}

/**
 * Many LoRA adapters of one base model, as vLLM serves them: registered by name (`/v1/load_lora_adapter`), and
 * sampled from as `model: <name>`. At most `maxLoaded` of them are held as engines (the base with the adapter merged);
 * the least recently used is dropped first, and loaded again from its directory when asked for.
 */
export class AdapterPool {
  private readonly registered = new Map<string, string>();
  /** Loaded engines, least recently used first. */
  private readonly loaded = new Map<string, Promise<HeldEngine>>();
  private loads = 0;

  constructor(
    private readonly base: () => Promise<Map<string, NamedTensor>>,
    /** An engine over the base architecture with these weights. */
    private readonly engineWith: (tensors: Map<string, NamedTensor>) => Promise<InferenceEngine>,
    readonly maxLoaded: number,
  ) {}

  /** Names being registered: reserved while their adapter is read, so two loads of one name cannot both pass. */
  private readonly reserved = new Set<string>();

  /** vLLM's `/v1/load_lora_adapter`: checks the adapter reads, and registers it under `name`. */
  async register(name: string, path: string): Promise<void> {
    if (this.registered.has(name) || this.reserved.has(name))
      throw new OpenAIError(
        400,
        `The lora adapter '${name}' has already been loaded. If you want to load the adapter in place, set 'load_inplace' to True.`,
        { type: "InvalidUserInput" },
      );
    this.reserved.add(name);
    try {
      const adapter = await readAdapter(path);
      if (!adapter)
        throw new OpenAIError(404, `Loading lora ${name} failed: No adapter found for ${path}`, {
          type: "NotFoundError",
        });
      merged(await this.base(), adapter); // refuses an adapter of another architecture now, not at its first request
      this.registered.set(name, adapter.path);
    } finally {
      this.reserved.delete(name);
    }
  }

  /** vLLM's `/v1/unload_lora_adapter`. */
  unregister(name: string): void {
    if (!this.registered.delete(name))
      throw new OpenAIError(404, `The lora adapter '${name}' cannot be found.`, { type: "NotFoundError" });
    this.drop(name);
  }

  /** Takes `name`'s engine out of the pool, closing it once its generations end. */
  private drop(name: string): void {
    const engine = this.loaded.get(name);
    this.loaded.delete(name);
    engine?.then((e) => e.drop()).catch(() => {});
  }

  /** The registered adapters' names, in the order they were loaded. */
  names(): string[] {
    return [...this.registered.keys()];
  }

  /** Adapters loaded as engines now, and loads so far (for benchmarks and tests). */
  stats(): { loaded: number; loads: number } {
    return { loaded: this.loaded.size, loads: this.loads };
  }

  /** The engine of adapter `name`, or undefined when no adapter has that name. */
  engineFor(name: string): Promise<HeldEngine> | undefined {
    const path = this.registered.get(name);
    if (path === undefined) return undefined;
    let engine = this.loaded.get(name);
    if (engine) this.loaded.delete(name);
    else {
      const loading = new HeldEngine(async () => {
        this.loads++;
        const adapter = await readAdapter(path);
        if (!adapter) throw new OpenAIError(404, `Loading lora ${name} failed: No adapter found for ${path}`);
        return this.engineWith(merged(await this.base(), adapter));
      }).open();
      loading.catch(() => {
        if (this.loaded.get(name) === loading) this.loaded.delete(name);
      });
      engine = loading;
    }
    this.loaded.set(name, engine);
    while (this.loaded.size > this.maxLoaded) this.drop(this.loaded.keys().next().value as string);
    return engine;
  }
}
