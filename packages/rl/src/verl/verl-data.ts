import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type EvalRow,
  generateTasks,
  InvalidInputError,
  type PromptRow,
  type Task,
  type TaskFamilyRegistry,
  taskFamilies,
  toVerlParquet,
} from "@arc/core";
import type { Recipe } from "../recipe/recipe-schema.ts";

/** Validation rows a VERL job gets from its prompt pool when the family generates no held-out tasks. */
const VALIDATION_FROM_POOL = 64;

/** What `writeVerlData` wrote. */
export interface VerlData {
  trainFile: string;
  valFile: string;
  trainRows: number;
  valRows: number;
  /** Where the validation rows came from. */
  validation: "held-out tasks" | "prompt pool";
}

/** A generated task as a dataset row. */
function taskRow(task: Task): PromptRow {
  return {
    id: task.id,
    question: task.question,
    solution: task.solution,
    env: task.env,
    meta: { source: "replay", sourceTraceIds: [] },
  };
}

/** Reads a PromptPool JSONL (`arc datasets export --format jsonl`): rows with their recorded prompt and lineage. */
async function readPoolRows(path: string, env: string): Promise<PromptRow[]> {
  const lines = (await readFile(path, "utf8")).split("\n").filter((line) => line.trim() !== "");
  return lines.map((line, i) => {
    const row = JSON.parse(line) as Omit<Partial<PromptRow>, "meta"> & { meta?: Record<string, unknown> };
    if (typeof row.question !== "string")
      throw new InvalidInputError(`${path}:${i + 1}: expected a row with a string question`, {
        field: "data.prompts",
      });
    if (row.env !== undefined && row.env !== env)
      throw new InvalidInputError(`${path}:${i + 1}.env: expected "${env}" (data.env), got "${row.env}"`, {
        field: "data.prompts",
      });
    const meta = row.meta ?? {};
    return {
      id: typeof meta.id === "string" ? meta.id : `pool-${i}`,
      question: row.question,
      ...(row.solution === undefined ? {} : { solution: row.solution }),
      env,
      ...(row.context ? { context: row.context } : {}),
      meta: {
        source: meta.source === "failure" ? "failure" : "replay",
        sourceTraceIds: Array.isArray(meta.sourceTraceIds) ? (meta.sourceTraceIds as string[]) : [],
        ...(typeof meta.patternId === "string" ? { patternId: meta.patternId } : {}),
      },
    };
  });
}

/**
 * Writes a VERL job's `train.parquet` and `val.parquet` into `dir`: the recipe's prompt pool (`data.prompts`, with
 * each row's recorded prompt) or its generated split, and its held-out tasks, or the pool's first rows when the
 * family generates none. A pool smaller than one step's prompts is refused: VERL would take no step.
 */
export async function writeVerlData(
  recipe: Recipe,
  dir: string,
  families: TaskFamilyRegistry = taskFamilies,
): Promise<VerlData> {
  const { data, trainer } = recipe;
  const family = families.get(data.env, "data.env");
  const train: (PromptRow | EvalRow)[] = data.prompts
    ? await readPoolRows(data.prompts, data.env)
    : generateTasks(family, { split: data.split, seed: data.seed, count: data.count }).map(taskRow);
  if (train.length < trainer.promptsPerStep)
    throw new InvalidInputError(
      `data: ${train.length} prompts, fewer than one step's ${trainer.promptsPerStep} (trainer.promptsPerStep): VERL drops an incomplete batch and would take no step`,
      { field: data.prompts ? "data.prompts" : "data.count" },
    );
  const heldOut = family.generate !== undefined && data.evalCount > 0;
  const val = heldOut
    ? generateTasks(family, { split: data.evalSplit, seed: data.evalSeed, count: data.evalCount }).map(
        taskRow,
      )
    : train.slice(0, VALIDATION_FROM_POOL);
  await mkdir(dir, { recursive: true });
  const trainFile = join(dir, "train.parquet");
  const valFile = join(dir, "val.parquet");
  await writeFile(trainFile, toVerlParquet(train, { split: "train", families }));
  await writeFile(valFile, toVerlParquet(val, { split: "test", families }));
  return {
    trainFile,
    valFile,
    trainRows: train.length,
    valRows: val.length,
    validation: heldOut ? "held-out tasks" : "prompt pool",
  };
}
