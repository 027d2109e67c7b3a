// The same recipes on both engines, judged alike: SFT then semi-online DPO, and the shipped GRPO recipe (60 steps,
// asynchronous rollouts, decoupled PPO) with three sampling seeds, from models/toolcall-base on the embedded engine and
// on the torch engine, each final checkpoint judged greedily by the embedded engine on 512 held-out production tasks
// (seed 1000). Part of `npm run bench:torch -- --outcome`.
import { join } from "node:path";
import { generateToolcallTasks } from "@arc/core/families";
import { EmbeddedInferenceEngine } from "@arc/engine";
import { evaluate, loadRecipe, type RunResult, startRun } from "@arc/rl";
import { asyncRolloutSource, engineFactory } from "@arc/rl/embedded";

/** Held-out production tasks no recipe trains or selects on. */
const HELD_OUT = generateToolcallTasks({ split: "production", seed: 1000, count: 512 });

/** The recipes' sizes: SFT and DPO shorter than the shipped ones; GRPO as shipped, without its periodic evaluation. */
export const SFT = [
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
export const DPO = [
  "data.evalCount=0",
  "trainer.steps=30",
  "trainer.learningRate=0.00003",
  "trainer.checkpointEvery=30",
];
export const GRPO = ["data.evalCount=0", "trainer.checkpointEvery=60"];

/** Runs a recipe with overrides in `runsDir`; the path of its last checkpoint. */
export async function run(recipePath: string, overrides: string[], runsDir: string): Promise<string> {
  const recipe = await loadRecipe(recipePath, overrides);
  const result: RunResult = await startRun(recipe, {
    runsDir,
    factory: engineFactory,
    asyncSource: asyncRolloutSource,
  });
  if (result.status !== "completed" || !result.lastCheckpoint)
    throw new Error(`${recipePath} (${overrides.join(" ")}): ${result.status}`);
  return join(result.dir, result.lastCheckpoint);
}

/** Failure rate of a checkpoint on the held-out tasks, judged by the embedded engine. */
export async function failureRate(dir: string): Promise<number> {
  const engine = await EmbeddedInferenceEngine.load(dir, { maxBatchSize: 64 });
  return (await evaluate(engine, HELD_OUT, { maxTokens: 96 })).failureRate;
}

/** GRPO's sampling seeds: one run's outcome is mostly which tokens its sampler happened to draw. */
export const GRPO_SEEDS = [1, 2, 3];

/** Held-out failure rates of SFT → DPO and of GRPO (the mean over its seeds, and each seed's) on `engine`. */
export async function outcomeOn(engine: "embedded" | "torch", runsDir: string) {
  const kind = [`engine.kind=${engine}`, ...(engine === "torch" ? ["engine.device=cpu"] : [])];
  const t0 = performance.now();
  const sft = await run("recipes/toolcall-sft.yaml", [...SFT, ...kind], runsDir);
  const dpo = await run("recipes/toolcall-dpo.yaml", [`model.path=${sft}`, ...DPO, ...kind], runsDir);
  const grpo: string[] = [];
  for (const seed of GRPO_SEEDS)
    grpo.push(await run("recipes/toolcall-grpo.yaml", [...GRPO, `trainer.seed=${seed}`, ...kind], runsDir));
  const minutes = (performance.now() - t0) / 60_000;
  const grpoRates: number[] = [];
  for (const dir of grpo) grpoRates.push(await failureRate(dir));
  return {
    sft_failure_rate: await failureRate(sft),
    sft_dpo_failure_rate: await failureRate(dpo),
    grpo_failure_rate: grpoRates.reduce((a, r) => a + r, 0) / grpoRates.length,
    grpo_failure_rates_by_seed: grpoRates,
    training_minutes: Math.round(minutes * 10) / 10,
  };
}

/** One standard error of a failure rate measured on the held-out tasks. */
export function standardError(rate: number): number {
  return Math.sqrt((rate * (1 - rate)) / HELD_OUT.length);
}
