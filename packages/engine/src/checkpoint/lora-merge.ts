import { existsSync } from "node:fs";
import { cp, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { CheckpointError } from "./checkpoint-error.ts";
import { readHfCheckpoint } from "./hf-checkpoint.ts";
import { type NamedTensor, readSafetensors, writeSafetensors } from "./safetensors.ts";

/** A PEFT LoRA adapter as read from its directory: scale and per-weight (A, B) in HF's layout. */
export interface LoraAdapter {
  path: string;
  scale: number;
  /** By the base weight's HF name: A [r, in] and B [out, r]. */
  pairs: Map<string, { a: NamedTensor; b: NamedTensor }>;
}

/** Reads a PEFT adapter directory (`adapter_config.json`, `adapter_model.safetensors`); null when there is none. */
export async function readLoraAdapter(path: string): Promise<LoraAdapter | null> {
  const dir = resolve(path);
  if (!existsSync(join(dir, "adapter_config.json")) || !existsSync(join(dir, "adapter_model.safetensors")))
    return null;
  const config = JSON.parse(await readFile(join(dir, "adapter_config.json"), "utf8"));
  if (config.peft_type !== "LORA" || !(config.r > 0) || !(config.lora_alpha > 0))
    throw new CheckpointError(`${path}/adapter_config.json: expected a LoRA adapter with r and lora_alpha`, {
      file: path,
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
    throw new CheckpointError(
      `${path}/adapter_config.json: ${unsupported.join(", ")} is not supported here`,
      { file: path },
    );
  const pairs = new Map<string, { a: NamedTensor; b: NamedTensor }>();
  for (const [name, tensor] of await readSafetensors(join(dir, "adapter_model.safetensors"))) {
    const match = /^base_model\.model\.(.+)\.lora_([AB])\.weight$/.exec(name);
    if (!match)
      throw new CheckpointError(`${path}/adapter_model.safetensors: ${name} is not a LoRA A or B weight`, {
        file: path,
      });
    const weight = `${match[1]}.weight`;
    const pair = pairs.get(weight) ?? ({} as { a: NamedTensor; b: NamedTensor });
    pair[match[2] === "A" ? "a" : "b"] = tensor;
    pairs.set(weight, pair);
  }
  return { path: dir, scale: config.lora_alpha / config.r, pairs };
}

/** The base weights with the adapter merged: W [out, in] + scale · B [out, r] · A [r, in]. */
export function mergeLoraAdapter(
  base: Map<string, NamedTensor>,
  adapter: LoraAdapter,
): Map<string, NamedTensor> {
  const out = new Map(base);
  for (const [name, { a, b }] of adapter.pairs) {
    const w = base.get(name);
    if (!w || !a || !b || w.shape[0] !== b.shape[0] || w.shape[1] !== a.shape[1] || a.shape[0] !== b.shape[1])
      throw new CheckpointError(`${adapter.path}: its ${name} adapter does not fit the base model's weight`, {
        file: adapter.path,
      });
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
 * Writes `out`: the checkpoint at `baseDir` (its config, tokenizer and generation files as they are) with the PEFT
 * LoRA adapter at `adapterDir` merged into its weights (W + alpha/r · B A, as `arc engine serve` merges one), and the
 * adapter itself in `out/adapter/` (PEFT's layout, where Arc's checkpoints keep theirs).
 */
export async function mergeLoraCheckpoint(baseDir: string, adapterDir: string, out: string): Promise<void> {
  const adapter = await readLoraAdapter(adapterDir);
  if (!adapter)
    throw new CheckpointError(`${adapterDir}: no adapter_config.json and adapter_model.safetensors`, {
      file: adapterDir,
    });
  const { tensors } = await readHfCheckpoint(baseDir);
  const weights = mergeLoraAdapter(tensors, adapter);
  await cp(baseDir, out, {
    recursive: true,
    filter: (source) =>
      !/\.safetensors(\.index\.json)?$/.test(source) && resolve(source) !== resolve(adapterDir),
  });
  await writeSafetensors(join(out, "model.safetensors"), weights);
  await cp(adapterDir, join(out, "adapter"), { recursive: true });
}
