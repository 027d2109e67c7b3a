import { fileURLToPath } from "node:url";
import { pythonLacks, skipWithout } from "../../../../../scripts/required-parts.mjs";
import { torchPython } from "../../torch/torch-worker.ts";
import { importModel } from "../model-import.ts";

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
