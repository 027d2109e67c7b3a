/**
 * Trains the base models of the built-in environments by SFT from the generated `train` split, and keeps
 * the first checkpoint that fails on 30-60% of the `production` split (so the RL loop has something real
 * to fix). A seeded share of the SFT prompts carries a teacher's guidance (issue 7).
 *
 *   node --import tsx scripts/make-base-models.ts [toolcall|arith ...] [--max-steps N]
 *
 * `--max-steps` caps the SFT steps (the committed toolcall model: `--max-steps 250`, see models/README.md).
 *
 * Writes models/<env>-base/ (HF layout, bf16) and models/<env>-base/base-model.json (how it was made).
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
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
import { evaluate, sftBatch, sftExamples } from "@arc/rl";

interface Plan {
  size: "tiny" | "small";
  trainTasks: number;
  guidedFraction: number;
  batchSize: number;
  learningRate: number;
  maxSteps: number;
  evalEvery: number;
  evalTasks: number;
  /** Keep the first evaluated checkpoint whose production failure rate is at or below this. */
  targetFailure: number;
}

const PLANS: Record<string, Plan> = {
  toolcall: {
    size: "small",
    trainTasks: 3000,
    guidedFraction: 0.08,
    batchSize: 16,
    learningRate: 2e-3,
    maxSteps: 800,
    evalEvery: 50,
    evalTasks: 64,
    targetFailure: 0.6,
  },
  arith: {
    size: "small",
    trainTasks: 3000,
    guidedFraction: 0.08,
    batchSize: 16,
    learningRate: 2e-3,
    maxSteps: 800,
    evalEvery: 50,
    evalTasks: 64,
    targetFailure: 0.6,
  },
};

const SEED = 1;

async function makeBaseModel(env: string, plan: Plan): Promise<void> {
  const family = getTaskFamily(env);
  const examples = sftExamples(
    family,
    family.generate({ split: "train", seed: SEED, count: plan.trainTasks }),
    {
      guidedFraction: plan.guidedFraction,
      seed: SEED,
    },
  );
  const production = family.generate({ split: "production", seed: 999, count: plan.evalTasks });
  const held = family.generate({ split: "eval", seed: 999, count: plan.evalTasks });
  const config = configForSize(plan.size);
  const trainer = await EmbeddedTrainEngine.create(config, initWeights(config, SEED), {
    learningRate: plan.learningRate,
    warmupSteps: 20,
  });
  const inference = await EmbeddedInferenceEngine.create(config, initWeights(config, SEED));
  const started = performance.now();
  const out = join("models", `${env}-base`);
  let best = Number.POSITIVE_INFINITY;
  /** Writes the checkpoint (bf16) and how it was made; the best one so far stays on disk. */
  const save = async (steps: number, failureRate: number, evalAccuracy: number, trainSeconds: number) => {
    await rm(out, { recursive: true, force: true });
    await mkdir(out, { recursive: true });
    await writeHfCheckpoint(out, config, trainer.exportTensors(), { dtype: "BF16" });
    const record = {
      env,
      command: `node --import tsx scripts/make-base-models.ts ${env} --max-steps ${plan.maxSteps}`,
      seed: SEED,
      steps,
      plan,
      productionFailureRate: failureRate,
      evalAccuracy,
      productionEvalSet: { split: "production", seed: 999, count: plan.evalTasks },
      trainSeconds,
    };
    await writeFile(join(out, "base-model.json"), `${JSON.stringify(record, null, 2)}\n`);
    console.error(
      `${env}: wrote ${out} at step ${steps} (production failure rate ${failureRate.toFixed(2)})`,
    );
  };
  for (let step = 1; step <= plan.maxSteps; step++) {
    const m = await trainer.step(sftBatch(examples, renderChatExample, step, plan.batchSize, SEED), {
      kind: "sft",
    });
    if (step % plan.evalEvery !== 0) continue;
    await inference.setWeights(step, trainer.weights());
    const prod = await evaluate(inference, production);
    const evalSplit = await evaluate(inference, held);
    const secs = ((performance.now() - started) / 1000).toFixed(0);
    const [sample] = await inference.generate([
      { messages: family.prompt(production[0]), maxTokens: 80, temperature: 0 },
    ]);
    console.error(`  sample: ${JSON.stringify(sample.text)} expected ${family.reference(production[0])[0]}`);
    console.error(
      `${env} step ${step} loss ${m.loss.toFixed(3)} eval acc ${evalSplit.accuracy.toFixed(2)} production failure ${prod.failureRate.toFixed(2)} (${secs}s)`,
    );
    if (prod.failureRate <= best) {
      best = prod.failureRate;
      await save(step, prod.failureRate, evalSplit.accuracy, Number(secs));
    }
    if (prod.failureRate <= plan.targetFailure) return;
  }
  console.error(
    `${env}: production failure rate never reached ${plan.targetFailure} in ${plan.maxSteps} steps; kept the best (${best.toFixed(2)})`,
  );
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { "max-steps": { type: "string" } },
});
for (const env of positionals.length > 0 ? positionals : ["toolcall"]) {
  const plan = PLANS[env];
  if (!plan)
    throw new Error(`env: expected one of ${Object.keys(PLANS).join(", ")}, got ${JSON.stringify(env)}`);
  const maxSteps = values["max-steps"] === undefined ? plan.maxSteps : Number(values["max-steps"]);
  if (!Number.isInteger(maxSteps) || maxSteps < 1)
    throw new Error(`--max-steps: expected a positive integer, got ${JSON.stringify(values["max-steps"])}`);
  await makeBaseModel(env, { ...plan, maxSteps });
}
