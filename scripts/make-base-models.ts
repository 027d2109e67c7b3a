/**
 * Trains the base models of the built-in environments by SFT from the generated `train` split, and keeps
 * the first checkpoint that fails on 30-60% of the `production` split (so the RL loop has something real
 * to fix). A seeded share of the SFT prompts carries a teacher's guidance (issue 7).
 *
 *   node --import tsx scripts/make-base-models.ts [toolcall|arith ...] [--max-steps N] [--learning-rate X] [--batch-size N] [--decay-to X] [--eval-every N] [--train-tasks N] [--guided-every N] [--out DIR] [--init DIR]
 *
 * `--max-steps` caps the SFT steps, `--learning-rate` replaces the plan's peak rate, `--batch-size` its examples
 * per step (guided steps take half as many), `--decay-to` cosine-decays the rate from its peak to X over the run,
 * `--eval-every` says how often a checkpoint is evaluated (and may be kept), `--train-tasks` how many `train` tasks
 * the SFT data is made of (more, fresher examples when a model starts to memorize them), `--guided-every` how
 * often a step is a (half-size) batch of guided examples (default 4), `--out` writes somewhere other than
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
import { getTaskFamily } from "@arc/core";
import {
  configForSize,
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  initWeights,
  renderChatExample,
  writeHfCheckpoint,
} from "@arc/engine";
import { evaluate, formatDuration, sftBatch, sftExamples } from "@arc/rl";

interface Plan {
  size: "tiny" | "small";
  trainTasks: number;
  guidedFraction: number;
  batchSize: number;
  learningRate: number;
  /** Cosine-decay the learning rate to this over the run; null keeps it constant after warm-up. */
  decayTo: number | null;
  maxSteps: number;
  evalEvery: number;
  evalTasks: number;
  /** Every this many steps, one half-size batch of guided examples (4 is about their share of the data at `guidedFraction` 0.15). */
  guidedEvery: number;
  /** Stop at the first written checkpoint whose production failure rate, on the 512 confirmation tasks, is at or below this. */
  targetFailure: number;
}

const PLANS: Record<string, Plan> = {
  toolcall: {
    size: "small",
    trainTasks: 40000,
    guidedFraction: 0.15,
    batchSize: 16,
    learningRate: 2e-3,
    decayTo: null,
    maxSteps: 2000,
    evalEvery: 50,
    evalTasks: 64,
    guidedEvery: 4,
    targetFailure: 0.6,
  },
  arith: {
    size: "small",
    trainTasks: 40000,
    guidedFraction: 0.08,
    batchSize: 16,
    learningRate: 2e-3,
    decayTo: null,
    maxSteps: 800,
    evalEvery: 50,
    evalTasks: 64,
    guidedEvery: 4,
    targetFailure: 0.6,
  },
};

const SEED = 1;
/** Production tasks the written checkpoint is measured on, apart from the ones it was picked on. */
const CONFIRMATION_TASKS = 512;
/** Linear learning-rate warm-up at the start of every stage (Adam's moments start fresh). */
const WARMUP_STEPS = 20;

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
    family.generate({ split: "train", seed: SEED, count: plan.trainTasks }),
    { guidedFraction: plan.guidedFraction, seed: SEED },
  );
  const production = family.generate({ split: "production", seed: 999, count: plan.evalTasks });
  const held = family.generate({ split: "eval", seed: 999, count: plan.evalTasks });
  // The kept checkpoint is the best of many noisy 64-task evaluations, which flatters it (64 tasks said 0.84
  // where 512 said 0.92); its recorded failure rate comes from a larger, independent production set.
  const confirmation = family.generate({ split: "production", seed: 1000, count: CONFIRMATION_TASKS });
  const settings = {
    learningRate: plan.learningRate,
    warmupSteps: WARMUP_STEPS,
    ...(plan.decayTo === null
      ? {}
      : { decaySteps: Math.max(1, plan.maxSteps - WARMUP_STEPS), minLearningRate: plan.decayTo }),
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
    `--max-steps ${plan.maxSteps} --learning-rate ${plan.learningRate}`,
    ...(plan.batchSize === PLANS[env].batchSize ? [] : [`--batch-size ${plan.batchSize}`]),
    ...(plan.decayTo === null ? [] : [`--decay-to ${plan.decayTo}`]),
    ...(plan.evalEvery === PLANS[env].evalEvery ? [] : [`--eval-every ${plan.evalEvery}`]),
    ...(plan.trainTasks === PLANS[env].trainTasks ? [] : [`--train-tasks ${plan.trainTasks}`]),
    ...(plan.guidedEvery === PLANS[env].guidedEvery ? [] : [`--guided-every ${plan.guidedEvery}`]),
    ...(start ? [`--init ${start.dir}`] : []),
    ...(out === defaultOutDir(env) ? [] : [`--out ${out}`]),
  ].join(" ");
  const commit = currentCommit();
  const started = performance.now();
  let best = Number.POSITIVE_INFINITY;
  /** The written checkpoint: its step and its failure rate on the 512 confirmation tasks. */
  let kept: { step: number; confirmed: number } | null = null;
  /** Writes the checkpoint (bf16) and how it was made, and returns its confirmed production failure rate. */
  const save = async (
    steps: number,
    selectionFailureRate: number,
    evalAccuracy: number,
    trainSeconds: number,
  ) => {
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
      selectionFailureRate,
      selectionEvalSet: { split: "production", seed: 999, count: plan.evalTasks },
      evalAccuracy,
      trainSeconds,
    };
    await writeFile(join(out, "base-model.json"), `${JSON.stringify(record, null, 2)}\n`);
    console.error(
      `${env}: wrote ${out} at step ${steps} (production failure rate ${confirmed.failureRate.toFixed(2)} on ${CONFIRMATION_TASKS} tasks, ${selectionFailureRate.toFixed(2)} on the ${plan.evalTasks} it was picked on)`,
    );
    return confirmed.failureRate;
  };
  // Guided prompts are ~2.5x longer than plain ones; a batch mixing both pads every row to the guided length
  // (4x slower steps), so every guidedEvery-th step is a half-size batch of guided examples only.
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
  // Step numbers (and so the data order) continue from --init's steps; Adam's moments start fresh.
  for (let step = firstStep; step <= lastStep; step++) {
    const batch =
      step % plan.guidedEvery === 0 && guided.length > 0
        ? sftBatch(guided, renderChatExample, step / plan.guidedEvery, plan.batchSize / 2, SEED)
        : sftBatch(
            plain,
            renderChatExample,
            step - Math.floor(step / plan.guidedEvery),
            plan.batchSize,
            SEED,
          );
    const m = await trainer.step(batch, { kind: "sft" });
    showProgress(step, m.loss);
    if ((step - firstStep + 1) % plan.evalEvery !== 0 && step !== lastStep) continue;
    await inference.setWeights(step, trainer.weights());
    const prod = await evaluate(inference, production);
    const evalSplit = await evaluate(inference, held);
    const secs = ((performance.now() - started) / 1000).toFixed(0);
    if (process.stderr.isTTY) process.stderr.write("\n");
    const [sample] = await inference.generate([
      { messages: family.prompt(production[0]), maxTokens: 80, temperature: 0 },
    ]);
    console.error(`  sample: ${JSON.stringify(sample.text)} expected ${family.reference(production[0])[0]}`);
    console.error(
      `${env} step ${step} loss ${m.loss.toFixed(3)} eval acc ${evalSplit.accuracy.toFixed(2)} production failure ${prod.failureRate.toFixed(2)} (${secs}s)`,
    );
    if (prod.failureRate > best) continue;
    best = prod.failureRate;
    // the 64 selection tasks flatter the best of many evaluations; only the confirmation figure may end the run
    const confirmed = await save(step, prod.failureRate, evalSplit.accuracy, Number(secs));
    kept = { step, confirmed };
    if (confirmed <= plan.targetFailure) return;
  }
  console.error(
    `${env}: production failure rate never reached ${plan.targetFailure} on ${CONFIRMATION_TASKS} tasks by step ${lastStep}; ${kept ? `kept step ${kept.step} (${kept.confirmed.toFixed(2)} on ${CONFIRMATION_TASKS} tasks, ${best.toFixed(2)} on the ${plan.evalTasks} it was picked on)` : "nothing evaluated, nothing written"}`,
  );
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
    "guided-every": { type: "string" },
    init: { type: "string" },
    out: { type: "string" },
  },
});
for (const env of positionals.length > 0 ? positionals : ["toolcall"]) {
  const plan = PLANS[env];
  if (!plan)
    throw new Error(`env: expected one of ${Object.keys(PLANS).join(", ")}, got ${JSON.stringify(env)}`);
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
  const decayTo = values["decay-to"] === undefined ? null : Number(values["decay-to"]);
  if (decayTo !== null && !(decayTo >= 0 && decayTo < learningRate))
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
  const start = values.init === undefined ? undefined : await readStart(values.init);
  await makeBaseModel(
    env,
    { ...plan, maxSteps, learningRate, decayTo, batchSize, evalEvery, trainTasks, guidedEvery },
    values.out ?? defaultOutDir(env),
    start,
  );
}
