/** What the scripts that make the shipped models share: the commit a model was made at, and writing its weights. */
import { execFileSync } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { readHfCheckpoint, type WriteCheckpointOptions, writeHfCheckpoint } from "@arc/engine";

/** `git rev-parse HEAD`, with `-dirty` appended if packages/, scripts/ or recipes/ have changes; null if unknown. */
export function currentCommit(): string | null {
  try {
    const head = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "packages", "scripts", "recipes"], {
      encoding: "utf8",
    });
    return dirty.trim() === "" ? head : `${head}-dirty`;
  } catch {
    return null;
  }
}

/** Replaces `out` with a run checkpoint's model alone (config, weights, tokenizer files), without its training state. */
export async function writeModelFolder(
  checkpoint: string,
  out: string,
  options: WriteCheckpointOptions = {},
): Promise<void> {
  const { config, tensors } = await readHfCheckpoint(checkpoint);
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  await writeHfCheckpoint(out, config, tensors, options);
}
