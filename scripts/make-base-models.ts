/**
 * Makes the base models of the task families: runs recipes/base-model-sft.yaml (SFT from fresh weights on the
 * family's generated `train` split) through `arc train`'s loop, then writes its last checkpoint to models/<env>-base
 * in bf16, with base-model.json: how it was made and its failure rate on 512 `production` tasks (seed 1000), where
 * production differs from train and the RL loop finds the failures it has to fix.
 *
 *   node --import tsx scripts/make-base-models.ts [<env> ...] [--family module.ts ...] [--out DIR] [key=value ...]
 *
 * `key=value` overrides the recipe, e.g. `model.path=models/toolcall-base trainer.steps=600` continues a model with a
 * fresh optimizer, its data order and guided schedule going on from the steps its base-model.json records
 * (`data.skipSteps`); the continued model's base-model.json keeps the stages that made it. `--out` writes somewhere
 * other than models/<env>-base.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { generateTasks, getTaskFamily } from "@arc/core";
import { EmbeddedInferenceEngine } from "@arc/engine";
import { evaluate, loadRecipe, loadTaskFamilies, startRun } from "@arc/rl";
import { engineFactory } from "@arc/rl/embedded";
import { currentCommit, writeModelFolder } from "./shipped-model.ts";

const RECIPE = "recipes/base-model-sft.yaml";
/** Each family's overrides of the recipe (the toolcall plan is the recipe's own). */
const FAMILY_OVERRIDES: Record<string, string[]> = { arith: ["data.guidedFraction=0.08"] };
/** Production tasks the written model is measured on. */
const CONFIRMATION = { split: "production" as const, seed: 1000, count: 512 };

/** One training command of a model's history, with the commit whose code (and so whose data) it ran. */
interface Stage {
  command: string;
  /** `git rev-parse HEAD` when it ran, `-dirty` appended if packages/, scripts/ or recipes/ had changes; null if unknown. */
  commit: string | null;
}

/** The stages and steps of the model a continuation starts from (its base-model.json), or none for fresh weights. */
async function history(modelPath: string | undefined): Promise<{ stages: Stage[]; steps: number }> {
  const record = modelPath ? join(modelPath, "base-model.json") : undefined;
  if (!record || !existsSync(record)) return { stages: [], steps: 0 };
  const made = JSON.parse(await readFile(record, "utf8")) as { stages?: Stage[]; steps?: number };
  return { stages: made.stages ?? [], steps: made.steps ?? 0 };
}

async function makeBaseModel(env: string, overrides: string[], out: string): Promise<void> {
  const continued = overrides.find((o) => o.startsWith("model.path="))?.slice("model.path=".length);
  const before = await history(continued);
  const skip = overrides.some((o) => o.startsWith("data.skipSteps="))
    ? []
    : [`data.skipSteps=${before.steps}`];
  const recipe = await loadRecipe(RECIPE, [
    `data.env=${env}`,
    ...(FAMILY_OVERRIDES[env] ?? []),
    ...skip,
    ...overrides,
  ]);
  const command = [
    `node --import tsx scripts/make-base-models.ts ${env}`,
    ...overrides,
    ...(out === join("models", `${env}-base`) ? [] : [`--out ${out}`]),
  ].join(" ");
  const commit = currentCommit();
  const work = await mkdtemp(join(tmpdir(), "arc-base-model-"));
  try {
    await trainAndWrite(env, recipe, work, out, { before, command, commit });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Runs the recipe in `work` and writes its last checkpoint (bf16) and base-model.json to `out`. */
async function trainAndWrite(
  env: string,
  recipe: Awaited<ReturnType<typeof loadRecipe>>,
  work: string,
  out: string,
  made: { before: { stages: Stage[]; steps: number }; command: string; commit: string | null },
): Promise<void> {
  const { before, command, commit } = made;
  const log = (line: string) => console.error(`[${env}] ${line}`);
  const result = await startRun(recipe, {
    runsDir: work,
    factory: engineFactory,
    hooks: {
      onStep(r) {
        if (r.step % 100 === 0 || r.evalFailureRate !== undefined)
          log(
            `step ${r.step}/${recipe.trainer.steps}: loss ${r.loss?.toFixed(3)}${r.evalAccuracy === undefined ? "" : `, held-out accuracy ${r.evalAccuracy.toFixed(3)}`}`,
          );
      },
    },
  });
  if (result.status !== "completed" || !result.lastCheckpoint)
    throw new Error(`training ended ${result.status}`);
  await writeModelFolder(join(result.dir, result.lastCheckpoint), out, { dtype: "BF16" });
  const family = getTaskFamily(env);
  const engine = await EmbeddedInferenceEngine.load(out, { maxBatchSize: 64 });
  const confirmed = await evaluate(engine, generateTasks(family, CONFIRMATION), { maxTokens: 96 });
  const last = result.records.at(-1);
  const record = {
    env,
    recipe: RECIPE,
    stages: [...before.stages, { command, commit }],
    steps: before.steps + recipe.trainer.steps,
    productionFailureRate: confirmed.failureRate,
    productionEvalSet: CONFIRMATION,
    evalAccuracy: last?.evalAccuracy,
    evalSet: { split: recipe.data.evalSplit, seed: recipe.data.evalSeed, count: recipe.data.evalCount },
    trainSeconds: Math.round(last?.elapsedS ?? 0),
  };
  await writeFile(join(out, "base-model.json"), `${JSON.stringify(record, null, 2)}\n`);
  log(
    `production failure rate ${confirmed.failureRate.toFixed(3)} (${CONFIRMATION.count} tasks); wrote ${resolve(out)}`,
  );
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { out: { type: "string" }, family: { type: "string", multiple: true } },
});
await loadTaskFamilies(values.family ?? []);
const overrides = positionals.filter((p) => p.includes("="));
const envs = positionals.filter((p) => !p.includes("="));
if (values.out && envs.length > 1)
  throw new Error("--out: give one family with it; each family writes its own model");
for (const env of envs.length > 0 ? envs : ["toolcall"]) {
  getTaskFamily(env);
  await makeBaseModel(env, overrides, values.out ?? join("models", `${env}-base`));
}
