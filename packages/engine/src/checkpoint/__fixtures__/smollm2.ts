import { existsSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pythonLacks, skipWithout } from "../../../../../scripts/required-parts.mjs";
import { torchPython } from "../../torch/torch-worker.ts";
import { importModel } from "../model-import.ts";
import { readSafetensors, writeSafetensors } from "../safetensors.ts";

/**
 * Where the tests keep SmolLM2-135M-Instruct imported from its PyPI wheel: under the repository's git-ignored
 * `.arc/models/`, imported by the first test that needs it and reused by the others (and later runs).
 */
export const SMOLLM2_DIR = fileURLToPath(
  new URL("../../../../../.arc/models/smollm2-135m-instruct", import.meta.url),
);

/**
 * Why the real-model tests cannot run here (no Python with torch, transformers and gguf), for `describe`'s `skip`,
 * or false when they can; where ARC_REQUIRE names python (CI), a missing one throws instead.
 */
export function smollm2Unavailable(): string | false {
  return skipWithout("python", pythonLacks(torchPython(), ["torch", "transformers", "gguf", "tokenizers"]));
}

/** The imported SmolLM2 checkpoint folder, importing it first when no earlier run did. */
export async function smollm2Checkpoint(): Promise<string> {
  return (await importModel({ shortcut: "smollm2-135m-instruct", dest: SMOLLM2_DIR })).dest;
}

/**
 * SmolLM2-135M-Instruct cut to its first `layers` decoder layers: its own weights, tokenizer, chat template and
 * every architectural trait (GQA 9/3, tied embeddings, RoPE theta), at a fraction of the full model's compute. For
 * tests of mechanics (training steps, adapters, serving); agreement with transformers is checked on the whole model.
 * Written once next to the import and reused; a folder is only ever seen whole (written aside, then renamed).
 */
export async function smollm2Slice(layers = 4): Promise<string> {
  const source = await smollm2Checkpoint();
  const dest = `${source}-first-${layers}-layers`;
  if (existsSync(dest)) return dest;
  const aside = `${dest}.${process.pid}.partial`;
  await rm(aside, { recursive: true, force: true });
  await mkdir(aside, { recursive: true });
  for (const file of await readdir(source)) {
    // provenance.json stays behind: it describes the whole import, not this cut
    if (!["model.safetensors", "config.json", "provenance.json"].includes(file))
      await copyFile(join(source, file), join(aside, file));
  }
  const config = JSON.parse(await readFile(join(source, "config.json"), "utf8"));
  if (layers < 1 || layers > config.num_hidden_layers)
    throw new RangeError(`smollm2Slice: layers must be 1..${config.num_hidden_layers}, got ${layers}`);
  await writeFile(
    join(aside, "config.json"),
    JSON.stringify({ ...config, num_hidden_layers: layers }, null, 2),
  );
  const kept = new Map(
    [...(await readSafetensors(join(source, "model.safetensors")))].filter(([name]) => {
      const layer = name.match(/^model\.layers\.(\d+)\./)?.[1];
      return layer === undefined || Number(layer) < layers;
    }),
  );
  await writeSafetensors(join(aside, "model.safetensors"), kept);
  try {
    await rename(aside, dest);
  } catch (error) {
    // another test process wrote the same slice first
    await rm(aside, { recursive: true, force: true });
    if (!existsSync(dest)) throw error;
  }
  return dest;
}
