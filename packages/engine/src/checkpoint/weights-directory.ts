import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { WeightSource } from "@arc/core";
import { parseConfigJson, writeHfCheckpoint } from "./hf-checkpoint.ts";

/**
 * Runs `use` with a checkpoint directory holding `weights`, for a reader in another process: the directory given, or
 * in-memory tensors written to a temporary one (with `configDir`'s architecture) and removed afterwards.
 */
export async function withWeightsDirectory<T>(
  weights: WeightSource,
  configDir: string,
  use: (dir: string) => Promise<T>,
): Promise<T> {
  if (weights.kind === "checkpoint") return use(resolve(weights.dir));
  const dir = await mkdtemp(join(tmpdir(), "arc-weights-"));
  try {
    const file = join(configDir, "config.json");
    await writeHfCheckpoint(
      dir,
      parseConfigJson(JSON.parse(await readFile(file, "utf8")), file),
      weights.tensors,
      { tokenizerFrom: configDir },
    );
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
