import type { Task } from "@arc/core";
import type { WireTensor } from "@arc/engine";
import type { GrpoTrainer, Recipe } from "../recipe/recipe-schema.ts";
import type { ScoredGroup } from "../rollout/scored-group.ts";

/** Trainer thread → rollout worker. */
export type ToWorker =
  | {
      type: "init";
      modelDir: string;
      version: number;
      trainer: GrpoTrainer;
      reward: Recipe["reward"];
      /** Task-family modules the trainer thread loaded, which the worker loads too. */
      familyModules: string[];
    }
  | { type: "weights"; version: number; tensors: WireTensor[] }
  | { type: "rollout"; index: number; task: Task; seed: number }
  | { type: "close" };

/** Rollout worker → trainer thread. */
export type FromWorker =
  | { type: "ready" }
  | { type: "weights-applied"; version: number }
  | { type: "group"; index: number; group: ScoredGroup | null; busyMs: number }
  | { type: "error"; message: string };
