// The same recipes on both engines, judged alike: SFT then semi-online DPO, and GRPO, from models/toolcall-base on
// the embedded engine and on the torch engine, each final checkpoint judged greedily by the embedded engine on 512
// held-out production tasks (seed 1000). Part of `npm run bench:torch -- --outcome`.
import { join } from "node:path";
import { generateToolcallTasks } from "@arc/core";
import { EmbeddedInferenceEngine } from "@arc/engine";
import { evaluate, loadRecipe, type RunResult, startRun } from "@arc/rl";
import { engineFactory } from "@arc/rl/embedded";

/** Held-out production tasks no recipe trains or selects on. */
const HELD_OUT = generateToolcallTasks({ split: "production", seed: 1000, count: 512 });

/** The recipes' sizes: short versions of the shipped ones, on one thread each, rollouts in the trainer's thread. */
const SFT = [
  "data.split=production",
  "data.count=4096",
  "data.guidedFraction=0",
  "data.evalCount=0",
  "trainer.steps=200",
  "trainer.learningRate=0.001",
  "trainer.warmupSteps=10",
  "trainer.decaySteps=190",
  "trainer.minLearningRate=0.00001",
  "trainer.checkpointEvery=200",
];
const DPO = [
  "data.evalCount=0",
  "trainer.steps=30",
  "trainer.learningRate=0.00003",
  "trainer.checkpointEvery=30",
];
const GRPO = [
  "data.evalCount=0",
  "trainer.steps=30",
  "trainer.asyncRollouts=false",
  "trainer.decoupled=false",
  "trainer.checkpointEvery=30",
];

async function run(recipePath: string, overrides: string[], runsDir: string): Promise<string> {
  const recipe = await loadRecipe(recipePath, overrides);
  const result: RunResult = await startRun(recipe, { runsDir, factory: engineFactory });
  if (result.status !== "completed" || !result.lastCheckpoint)
    throw new Error(`${recipePath} (${overrides.join(" ")}): ${result.status}`);
  return join(result.dir, result.lastCheckpoint);
}

/** Failure rate of a checkpoint on the held-out tasks, judged by the embedded engine. */
async function failureRate(dir: string): Promise<number> {
  const engine = await EmbeddedInferenceEngine.load(dir, { maxBatchSize: 64 });
  return (await evaluate(engine, HELD_OUT, { maxTokens: 96 })).failureRate;
}

/** Held-out failure rates of SFT → DPO and of GRPO on `engine`. */
export async function outcomeOn(engine: "embedded" | "torch", runsDir: string) {
  const kind = [`engine.kind=${engine}`, ...(engine === "torch" ? ["engine.device=cpu"] : [])];
  const t0 = performance.now();
  const sft = await run("recipes/toolcall-sft.yaml", [...SFT, ...kind], runsDir);
  const dpo = await run("recipes/toolcall-dpo.yaml", [`model.path=${sft}`, ...DPO, ...kind], runsDir);
  const grpo = await run("recipes/toolcall-grpo.yaml", [...GRPO, ...kind], runsDir);
  const minutes = (performance.now() - t0) / 60_000;
  return {
    sft_failure_rate: await failureRate(sft),
    sft_dpo_failure_rate: await failureRate(dpo),
    grpo_failure_rate: await failureRate(grpo),
    training_minutes: Math.round(minutes * 10) / 10,
  };
}

/** One standard error of a failure rate measured on the held-out tasks. */
export function standardError(rate: number): number {
  return Math.sqrt((rate * (1 - rate)) / HELD_OUT.length);
}
