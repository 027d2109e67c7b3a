import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TrainEngine, WeightSource } from "@arc/core";

/** Saved policies for a generator server that takes LoRA adapters. */
export interface AdapterSnapshots {
  /** Saves the policy now, as a checkpoint with its `adapter/` in PEFT's layout. */
  take(): Promise<WeightSource>;
  /** Deletes every snapshot. */
  remove(): Promise<void>;
}

/**
 * Saves the policy for a server that takes LoRA adapters: each call writes a checkpoint under a temporary folder,
 * keeping the two newest (the server may still sample from the previous one).
 */
export function adapterSnapshots(train: TrainEngine): AdapterSnapshots {
  const kept: string[] = [];
  let root: string | undefined;
  let count = 0;
  return {
    async take() {
      root ??= await mkdtemp(join(tmpdir(), "arc-adapters-"));
      const dir = join(root, `policy-${++count}`);
      await train.save(dir);
      kept.push(dir);
      while (kept.length > 2) await rm(kept.shift() as string, { recursive: true, force: true });
      return { kind: "checkpoint", dir };
    },
    remove: async () => {
      if (root) await rm(root, { recursive: true, force: true });
    },
  };
}
