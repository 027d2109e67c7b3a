import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { InferenceEngine } from "@arc/core";
import type { NamedTensor } from "../checkpoint/safetensors.ts";
import { readSafetensors } from "../checkpoint/safetensors.ts";
import { OpenAIError } from "./openai-error.ts";

/** A PEFT LoRA adapter as read from its directory: scale and per-weight (A, B) in HF's layout. */
interface Adapter {
  path: string;
  scale: number;
  /** By the base weight's HF name: A [r, in] and B [out, r]. */
  pairs: Map<string, { a: NamedTensor; b: NamedTensor }>;
}

/** Reads a PEFT adapter directory (`adapter_config.json`, `adapter_model.safetensors`); null when there is none. */
async function readAdapter(path: string): Promise<Adapter | null> {
  const dir = resolve(path);
  if (!existsSync(join(dir, "adapter_config.json")) || !existsSync(join(dir, "adapter_model.safetensors")))
    return null;
  const config = JSON.parse(await readFile(join(dir, "adapter_config.json"), "utf8"));
  if (config.peft_type !== "LORA" || !(config.r > 0) || !(config.lora_alpha > 0))
    throw new OpenAIError(400, `${path}/adapter_config.json: expected a LoRA adapter with r and lora_alpha`, {
      type: "InvalidUserInput",
    });
  const unsupported = [
    config.use_rslora === true && "use_rslora",
    config.use_dora === true && "use_dora",
    config.fan_in_fan_out === true && "fan_in_fan_out",
    Object.keys(config.rank_pattern ?? {}).length > 0 && "rank_pattern",
    Object.keys(config.alpha_pattern ?? {}).length > 0 && "alpha_pattern",
    (config.modules_to_save ?? []).length > 0 && "modules_to_save",
  ].filter(Boolean);
  if (unsupported.length > 0)
    throw new OpenAIError(
      400,
      `${path}/adapter_config.json: ${unsupported.join(", ")} is not supported here`,
      {
        type: "InvalidUserInput",
      },
    );
  const pairs = new Map<string, { a: NamedTensor; b: NamedTensor }>();
  for (const [name, tensor] of await readSafetensors(join(dir, "adapter_model.safetensors"))) {
    const match = /^base_model\.model\.(.+)\.lora_([AB])\.weight$/.exec(name);
    if (!match)
      throw new OpenAIError(400, `${path}/adapter_model.safetensors: ${name} is not a LoRA A or B weight`, {
        type: "InvalidUserInput",
      });
    const weight = `${match[1]}.weight`;
    const pair = pairs.get(weight) ?? ({} as { a: NamedTensor; b: NamedTensor });
    pair[match[2] === "A" ? "a" : "b"] = tensor;
    pairs.set(weight, pair);
  }
  return { path: dir, scale: config.lora_alpha / config.r, pairs };
}

/** The base weights with the adapter merged: W [out, in] + scale · B [out, r] · A [r, in]. */
function merged(base: Map<string, NamedTensor>, adapter: Adapter): Map<string, NamedTensor> {
  const out = new Map(base);
  for (const [name, { a, b }] of adapter.pairs) {
    const w = base.get(name);
    if (!w || !a || !b || w.shape[0] !== b.shape[0] || w.shape[1] !== a.shape[1] || a.shape[0] !== b.shape[1])
      throw new OpenAIError(
        400,
        `${adapter.path}: its ${name} adapter does not fit the base model's weight`,
        {
          type: "InvalidUserInput",
        },
      );
    const [rows, cols] = w.shape;
    const rank = a.shape[0];
    const data = Float32Array.from(w.data);
    for (let i = 0; i < rows; i++)
      for (let k = 0; k < rank; k++) {
        const bik = adapter.scale * b.data[i * rank + k];
        if (bik === 0) continue;
        for (let j = 0; j < cols; j++) data[i * cols + j] += bik * a.data[k * cols + j];
      }
    out.set(name, { shape: w.shape, data });
  }
  return out;
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
