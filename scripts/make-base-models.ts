/**
 * Trains the base models of the built-in environments by SFT from the generated `train` split: a fresh model,
 * a warm-up and a cosine-decayed learning rate over the whole plan. The checkpoint is written at every
 * evaluation, so the last one written is the end of the schedule; each is measured on 512 `production` tasks
 * (the failures the RL loop has to fix come from where production differs from train). A seeded share of the
 * SFT prompts carries a teacher's guidance (for adaptive teaching).
 *
 *   node --import tsx scripts/make-base-models.ts [<env> ...] [--family module.ts ...] [--max-steps N] [--learning-rate X] [--batch-size N] [--decay-to X] [--eval-every N] [--train-tasks N] [--guided-from N] [--guided-every N] [--out DIR] [--init DIR]
 *
 * `--max-steps` sets the SFT steps, `--learning-rate` the plan's peak rate, `--batch-size` its examples per step
 * (guided steps take half as many), `--decay-to` the rate the cosine decay ends at, `--eval-every` how often the
 * checkpoint is evaluated and written, `--train-tasks` how many `train` tasks
 * the SFT data is made of (more, fresher examples when a model starts to memorize them), `--guided-from` the step
 * guided examples start at (plain SFT before it), `--guided-every` how often a step is then a (half-size) batch
 * of guided examples, `--out` writes somewhere other than
 * models/<env>-base (to compare settings side by side), `--init` continues from a checkpoint this script wrote
 * (its weights and step count; the data order goes on where it stopped at an unchanged batch size, Adam starts
 * fresh).
 *
 * Writes models/<env>-base/ (HF layout, bf16) and models/<env>-base/base-model.json (how it was made).
 */
import { execFileSync } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { generateTasks, getTaskFamily } from "@arc/core";
import {
  configForSize,
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  initWeights,
  renderChatExample,
  writeHfCheckpoint,
} from "@arc/engine";
import { evaluate, formatDuration, loadTaskFamilies, sftBatch, sftExamples } from "@arc/rl";

interface Plan {
  size: "tiny" | "small";
  trainTasks: number;
  guidedFraction: number;
  batchSize: number;
  learningRate: number;
  /** The learning rate at the end of the run, reached by a cosine decay from the peak after warm-up. */
  decayTo: number;
  maxSteps: number;
  evalEvery: number;
  evalTasks: number;
  /** Steps before this one are plain SFT batches only: copying values forms faster without the long guided prompts. */
  guidedFrom: number;
  /** From `guidedFrom` on, every this many steps, one half-size batch of guided examples. */
  guidedEvery: number;
}

/** The toolcall plan; arith differs only in how many of its examples carry guidance. */
const TOOLCALL_PLAN: Plan = {
  size: "small",
  trainTasks: 100000,
  guidedFraction: 0.15,
  batchSize: 16,
  learningRate: 3e-3,
  decayTo: 1.5e-4,
  maxSteps: 3600,
  evalEvery: 400,
  evalTasks: 128,
  guidedFrom: 3000,
  guidedEvery: 2,
};

/** Plans tuned per family; any other family with a task generator gets the toolcall plan. */
const PLANS: Record<string, Plan> = {
  toolcall: TOOLCALL_PLAN,
  arith: { ...TOOLCALL_PLAN, guidedFraction: 0.08 },
};

/** The plan of an env id. */
function planOf(env: string): Plan {
  return PLANS[env] ?? TOOLCALL_PLAN;
}

/** The command-line flag of each plan setting; a recorded command names only those that differ from the plan. */
const PLAN_FLAGS: [string, keyof Plan][] = [
  ["max-steps", "maxSteps"],
  ["learning-rate", "learningRate"],
  ["batch-size", "batchSize"],
  ["decay-to", "decayTo"],
  ["eval-every", "evalEvery"],
  ["train-tasks", "trainTasks"],
  ["guided-from", "guidedFrom"],
  ["guided-every", "guidedEvery"],
];

const SEED = 1;
/** Production tasks every written checkpoint is measured on. */
const CONFIRMATION_TASKS = 512;
/** Linear learning-rate warm-up at the start of every stage (Adam's moments start fresh). */
const WARMUP_STEPS = 50;

/** One training command of a checkpoint's history, with the commit whose code (and so whose data) it ran. */
interface Stage {
  command: string;
  /** `git rev-parse HEAD` when it ran, `-dirty` appended if packages/ or scripts/ had uncommitted changes; null if unknown. */
  commit: string | null;
}

/** Where a run continues from: `--init`'s checkpoint and the SFT steps already in it (from its base-model.json). */
interface Start {
  dir: string;
  steps: number;
  /** The training commands that made the checkpoint, oldest first. */
  stages: Stage[];
}

async function readStart(dir: string): Promise<Start> {
  const record = JSON.parse(await readFile(join(dir, "base-model.json"), "utf8")) as {
    steps?: unknown;
    stages?: Stage[];
    commands?: unknown;
    command?: unknown;
  };
  if (!Number.isInteger(record.steps)) {
    throw new Error(`--init: ${dir}/base-model.json has no integer "steps" (made by this script?)`);
  }
  const legacy = Array.isArray(record.commands) ? record.commands.map(String) : [String(record.command)];
  const stages = record.stages ?? legacy.map((command) => ({ command, commit: null }));
  return { dir, steps: record.steps as number, stages };
}

/** The commit this script runs at (see Stage.commit). */
function currentCommit(): string | null {
  try {
    const head = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "packages", "scripts"], {
      encoding: "utf8",
    });
    return dirty.trim() === "" ? head : `${head}-dirty`;
  } catch {
    return null;
  }
}

/** Where a base model is written unless `--out` says otherwise. */
function defaultOutDir(env: string): string {
  return join("models", `${env}-base`);
}

async function makeBaseModel(env: string, plan: Plan, out: string, start?: Start): Promise<void> {
  const family = getTaskFamily(env);
  const examples = sftExamples(
    family,
    generateTasks(family, { split: "train", seed: SEED, count: plan.trainTasks }),
    { guidedFraction: plan.guidedFraction, seed: SEED },
  );
  const held = generateTasks(family, { split: "eval", seed: 999, count: plan.evalTasks });
  const confirmation = generateTasks(family, { split: "production", seed: 1000, count: CONFIRMATION_TASKS });
  const settings = {
    learningRate: plan.learningRate,
    warmupSteps: WARMUP_STEPS,
    decaySteps: Math.max(1, plan.maxSteps - WARMUP_STEPS),
    minLearningRate: plan.decayTo,
  };
  const fresh = configForSize(plan.size);
  const trainer = start
    ? await EmbeddedTrainEngine.fromCheckpoint(start.dir, settings)
    : await EmbeddedTrainEngine.create(fresh, initWeights(fresh, SEED), settings);
  const config = trainer.config;
  const inference = await EmbeddedInferenceEngine.create(config, trainer.exportTensors());
  const firstStep = (start?.steps ?? 0) + 1;
  const lastStep = (start?.steps ?? 0) + plan.maxSteps;
  const command = [
    `node --import tsx scripts/make-base-models.ts ${env}`,
    ...PLAN_FLAGS.filter(([, key]) => plan[key] !== planOf(env)[key]).map(
      ([flag, key]) => `--${flag} ${plan[key]}`,
    ),
    ...(start ? [`--init ${start.dir}`] : []),
    ...(out === defaultOutDir(env) ? [] : [`--out ${out}`]),
  ].join(" ");
  const commit = currentCommit();
  const started = performance.now();
  /** Writes the checkpoint (bf16) and how it was made; returns its production failure rate on the 512 tasks. */
  const save = async (steps: number, evalAccuracy: number, trainSeconds: number) => {
    const confirmed = await evaluate(inference, confirmation);
    await rm(out, { recursive: true, force: true });
    await mkdir(out, { recursive: true });
    await writeHfCheckpoint(out, config, trainer.exportTensors(), { dtype: "BF16" });
    const record = {
      env,
      stages: [...(start?.stages ?? []), { command, commit }],
      seed: SEED,
      steps,
      plan,
      productionFailureRate: confirmed.failureRate,
      productionEvalSet: { split: "production", seed: 1000, count: CONFIRMATION_TASKS },
      evalAccuracy,
      evalSet: { split: "eval", seed: 999, count: plan.evalTasks },
      trainSeconds,
    };
    await writeFile(join(out, "base-model.json"), `${JSON.stringify(record, null, 2)}\n`);
    return confirmed.failureRate;
  };
  // Guided prompts are ~2.5x longer than plain ones; a batch mixing both pads every row to the guided length
  // (4x slower steps), so from guidedFrom on every guidedEvery-th step is a half-size batch of guided examples only.
  const plain = examples.filter((e) => !e.guided);
  const guided = examples.filter((e) => e.guided);
  let lastPlainLine = 0;
  /** A live line (rewritten on a terminal, every 30 s otherwise): step, loss, seconds per step, ETA. */
  const showProgress = (step: number, loss: number) => {
    const seconds = (performance.now() - started) / 1000;
    const perStep = seconds / (step - firstStep + 1);
    const line = `${env} step ${step}/${lastStep} loss ${loss.toFixed(3)} ${perStep.toFixed(2)} s/step ETA ${formatDuration(perStep * (lastStep - step))}`;
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K${line}`);
    else if (seconds - lastPlainLine >= 30) {
      lastPlainLine = seconds;
      process.stderr.write(`${line}\n`);
    }
  };
  /** Guided batches taken up to and including `step`. */
  const guidedSteps = (step: number) =>
    guided.length === 0 || step < plan.guidedFrom
      ? 0
      : Math.floor((step - plan.guidedFrom) / plan.guidedEvery) + 1;
  // Step numbers (and so the data order) continue from --init's steps; Adam's moments start fresh.
  for (let step = firstStep; step <= lastStep; step++) {
    const isGuided = guidedSteps(step) > guidedSteps(step - 1);
    const batch = isGuided
      ? sftBatch(guided, renderChatExample, guidedSteps(step), plan.batchSize / 2, SEED)
      : sftBatch(plain, renderChatExample, step - guidedSteps(step), plan.batchSize, SEED);
    const m = await trainer.step(batch, { kind: "sft" });
    showProgress(step, m.loss);
    if ((step - firstStep + 1) % plan.evalEvery !== 0 && step !== lastStep) continue;
    await inference.setWeights(step, trainer.weights());
    const evalSplit = await evaluate(inference, held);
    const secs = Math.round((performance.now() - started) / 1000);
    const failure = await save(step, evalSplit.accuracy, secs);
    if (process.stderr.isTTY) process.stderr.write("\n");
    console.error(
      `${env} step ${step} loss ${m.loss.toFixed(3)} eval-split accuracy ${evalSplit.accuracy.toFixed(2)} production failure ${failure.toFixed(3)} (${CONFIRMATION_TASKS} tasks); wrote ${out} (${secs}s)`,
    );
  }
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    "max-steps": { type: "string" },
    "learning-rate": { type: "string" },
    "batch-size": { type: "string" },
    "decay-to": { type: "string" },
    "eval-every": { type: "string" },
    "train-tasks": { type: "string" },
    "guided-from": { type: "string" },
    "guided-every": { type: "string" },
    init: { type: "string" },
    out: { type: "string" },
    family: { type: "string", multiple: true },
  },
});
await loadTaskFamilies(values.family ?? []);
for (const env of positionals.length > 0 ? positionals : ["toolcall"]) {
  getTaskFamily(env);
  const plan = planOf(env);
  const maxSteps = values["max-steps"] === undefined ? plan.maxSteps : Number(values["max-steps"]);
  if (!Number.isInteger(maxSteps) || maxSteps < 1)
    throw new Error(`--max-steps: expected a positive integer, got ${JSON.stringify(values["max-steps"])}`);
  const learningRate =
    values["learning-rate"] === undefined ? plan.learningRate : Number(values["learning-rate"]);
  if (!(learningRate > 0))
    throw new Error(
      `--learning-rate: expected a positive number, got ${JSON.stringify(values["learning-rate"])}`,
    );
  const batchSize = values["batch-size"] === undefined ? plan.batchSize : Number(values["batch-size"]);
  if (!Number.isInteger(batchSize) || batchSize < 2 || batchSize % 2 !== 0)
    throw new Error(
      `--batch-size: expected an even integer of at least 2 (guided steps take half), got ${JSON.stringify(values["batch-size"])}`,
    );
  const decayTo = values["decay-to"] === undefined ? plan.decayTo : Number(values["decay-to"]);
  if (!(decayTo >= 0 && decayTo < learningRate))
    throw new Error(
      `--decay-to: expected a number from 0 to below the learning rate (${learningRate}), got ${JSON.stringify(values["decay-to"])}`,
    );
  const evalEvery = values["eval-every"] === undefined ? plan.evalEvery : Number(values["eval-every"]);
  if (!Number.isInteger(evalEvery) || evalEvery < 1)
    throw new Error(`--eval-every: expected a positive integer, got ${JSON.stringify(values["eval-every"])}`);
  const trainTasks = values["train-tasks"] === undefined ? plan.trainTasks : Number(values["train-tasks"]);
  if (!Number.isInteger(trainTasks) || trainTasks < batchSize)
    throw new Error(
      `--train-tasks: expected an integer of at least the batch size (${batchSize}), got ${JSON.stringify(values["train-tasks"])}`,
    );
  const guidedEvery =
    values["guided-every"] === undefined ? plan.guidedEvery : Number(values["guided-every"]);
  if (!Number.isInteger(guidedEvery) || guidedEvery < 2)
    throw new Error(
      `--guided-every: expected an integer of at least 2 (1 would leave no plain steps), got ${JSON.stringify(values["guided-every"])}`,
    );
  const guidedFrom = values["guided-from"] === undefined ? plan.guidedFrom : Number(values["guided-from"]);
  if (!Number.isInteger(guidedFrom) || guidedFrom < 1)
    throw new Error(
      `--guided-from: expected a positive integer step, got ${JSON.stringify(values["guided-from"])}`,
    );
  const start = values.init === undefined ? undefined : await readStart(values.init);
  await makeBaseModel(
    env,
    { ...plan, maxSteps, learningRate, decayTo, batchSize, evalEvery, trainTasks, guidedFrom, guidedEvery },
    values.out ?? defaultOutDir(env),
    start,
  );
}
