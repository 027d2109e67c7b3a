import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { EmbeddedInferenceEngine, startEngineServer } from "@arc/engine";
import { loadTaskFamilies } from "../families/index.ts";
import { loadRecipe, parseRecipe } from "../recipe/index.ts";
import { type AsyncRolloutSource, asyncRolloutSource, engineFactory } from "../worker/index.ts";
import { assertStalenessUpToOne } from "./__fixtures__/bounded-staleness.ts";
import { writeTinyModel } from "./__fixtures__/tiny-model.ts";
import { resumeRun, startRun } from "./run-training.ts";
import type { StepRecord } from "./run-types.ts";

const rewardModule = fileURLToPath(new URL("./__fixtures__/digit-reward.ts", import.meta.url));

async function tinyRecipe(overrides: Record<string, unknown>) {
  const root = await mkdtemp(join(tmpdir(), "arc-run-"));
  const model = await writeTinyModel(join(root, "model"));
  const recipe = parseRecipe({
    name: "tiny",
    model: { path: model },
    data: { env: "toolcall", split: "train", count: 32, evalCount: 0 },
    trainer: {
      algorithm: "dpo",
      steps: 12,
      promptsPerStep: 4,
      // SFT samples nothing, so its trainer block takes no samplesPerPrompt
      ...(overrides.algorithm === "sft" ? {} : { samplesPerPrompt: 4 }),
      learningRate: 1e-2,
      maxTokens: 8,
      checkpointEvery: 4,
      evalEvery: 100,
      ...overrides,
    },
    reward: { module: rewardModule },
  });
  return { root, recipe };
}

/** Two GRPO steps of two prompts with two samples each. */
const TWO_GRPO_STEPS = { algorithm: "grpo", steps: 2, promptsPerStep: 2, samplesPerPrompt: 2 };

/** A family given as data, like a support agent's: one `refund` tool. */
const SUPPORT_LIKE_SPEC = {
  env: "judged",
  tools: [
    {
      name: "refund",
      parameters: {
        type: "object",
        properties: { order_id: { type: "string" }, amount: { type: "number" } },
        required: ["order_id"],
      },
    },
  ],
};

/**
 * Runs `use` with a real OpenAI-compatible judge endpoint: `arc engine serve` on the shipped toolcall judge with its
 * rubric. `use` gets the recipe's reward block for a run in a folder (the rubric file copied there).
 */
async function withJudge(use: (reward: (root: string) => Promise<Record<string, unknown>>) => Promise<void>) {
  const judge = await startEngineServer(await EmbeddedInferenceEngine.load("models/toolcall-judge"), {
    modelId: "judge",
  });
  const reward = async (root: string) => {
    const rubric = join(root, "rubric.json");
    await writeFile(rubric, await readFile("models/toolcall-judge/rubric.json", "utf8"));
    return { kind: "judge", judge: { baseUrl: judge.baseURL, model: "judge", rubric } };
  };
  try {
    await use(reward);
  } finally {
    await judge.close();
  }
}

const mean = (records: StepRecord[]) => records.reduce((a, r) => a + (r.reward ?? 0), 0) / records.length;

describe("runs", () => {
  it("improves the reward of a tiny environment with a short online DPO run", async () => {
    const { root, recipe } = await tinyRecipe({ steps: 16 });
    const result = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
    assert.equal(result.status, "completed");
    const steps = result.records.filter((r) => r.step > 0);
    assert.equal(steps.length, 16);
    const first = mean(steps.slice(0, 4));
    const last = mean(steps.slice(-4));
    assert.ok(last > first + 0.1, `reward went from ${first.toFixed(3)} to ${last.toFixed(3)}`);
    const lines = (await readFile(join(result.dir, "metrics.jsonl"), "utf8")).trim().split("\n");
    assert.equal(lines.length, 17);
    assert.match(await readFile(join(result.dir, "metrics.svg"), "utf8"), /<svg/);
    const state = JSON.parse(await readFile(join(result.dir, "state.json"), "utf8"));
    assert.deepEqual(
      [state.status, state.step, state.lastCheckpoint],
      ["completed", 16, "checkpoints/step-16"],
    );
  });

  it("trains decoupled GRPO on rollouts from a worker thread, none staler than maxStaleness, each tagged with its versions", async () => {
    const { root, recipe } = await tinyRecipe({
      algorithm: "grpo",
      steps: 10,
      learningRate: 2e-2,
      asyncRollouts: true,
      maxStaleness: 1,
      decoupled: true,
    });
    let source: AsyncRolloutSource | undefined;
    const result = await startRun(recipe, {
      runsDir: join(root, "runs"),
      factory: engineFactory,
      asyncSource: async (args) => {
        source = (await asyncRolloutSource(args)) as AsyncRolloutSource;
        return source;
      },
    });
    assert.equal(result.status, "completed");
    const steps = result.records.filter((r) => r.step > 0);
    assert.equal(steps.length, 10);
    // read after the run closed its worker: the figures cover the worker's whole life, not a terminated thread's zero
    const usage = source?.usage();
    assert.ok(
      usage && usage.workerBusyS > 0 && usage.workerUtilization > 0,
      `usage ${JSON.stringify(usage)}`,
    );
    assert.ok(usage.workerUtilization <= 1 && usage.trainerWaitS >= 0, `usage ${JSON.stringify(usage)}`);
    assertStalenessUpToOne(steps);
    assert.ok(mean(steps.slice(-3)) > mean(steps.slice(0, 3)), "reward did not improve");
  });

  it("trains a model from freshly initialised weights of a zoo size, written once in <run>/init", async () => {
    const { root, recipe } = await tinyRecipe({ algorithm: "sft", steps: 3, checkpointEvery: 3 });
    recipe.model.init = { size: "tiny", seed: 5 };
    const result = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
    assert.equal(result.status, "completed");
    const init = JSON.parse(await readFile(join(result.dir, "init/config.json"), "utf8"));
    assert.equal(init.hidden_size, 64);
    const again = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
    const [first, second] = [result, again].map((r) => r.records.map((m) => m.loss));
    assert.deepEqual(second, first, "the same seed makes the same model and the same run");
    // a starting checkpoint given by override replaces the recipe's initialisation
    const file = join(root, "from-scratch.yaml");
    await writeFile(file, "model:\n  init:\n    size: tiny\n");
    assert.equal((await loadRecipe(file)).model.init?.size, "tiny");
    assert.equal((await loadRecipe(file, ["model.path=models/toolcall-base"])).model.init, undefined);
  });

  it("takes ppoEpochs optimizer updates a step, with warm-up and decay still counted in steps", async () => {
    const { root, recipe } = await tinyRecipe({
      algorithm: "grpo",
      steps: 4,
      ppoEpochs: 3,
      decaySteps: 4,
      minLearningRate: 0,
      checkpointEvery: 4,
    });
    const result = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
    const trainerState = JSON.parse(
      await readFile(join(result.dir, "checkpoints/step-4/trainer_state.json"), "utf8"),
    );
    const rates = result.records.filter((r) => r.step > 0).map((r) => r.learningRate as number);
    assert.equal(trainerState.step, 3 * 4, "every step takes 3 updates");
    // decay counted in updates would reach 0 by the second step's last update; counted in steps it is midway there
    assert.ok(rates[1] > 0.4 * 1e-2 && rates[1] < 0.8 * 1e-2, `learning rates ${rates}`);
    assert.ok(rates[3] < 0.05 * 1e-2, `learning rates ${rates}`);
  });

  it("judges the held-out tasks at the start, from evalFrom on every evalEvery steps, and at the last step", async () => {
    const { root, recipe } = await tinyRecipe({ algorithm: "sft", steps: 7, evalEvery: 2, evalFrom: 4 });
    recipe.data.evalCount = 2;
    const result = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
    const judged = result.records.filter((r) => r.evalFailureRate !== undefined);
    assert.deepEqual(
      judged.map((r) => r.step),
      [0, 4, 6, 7],
    );
    for (const r of judged)
      assert.ok(r.evalS !== undefined && r.evalS > 0, `step ${r.step} times its judgement`);
  });

  it("stops a cancelled run after the current step with a checkpoint and status cancelled", async () => {
    const { root, recipe } = await tinyRecipe({ steps: 50, checkpointEvery: 100 });
    const controller = new AbortController();
    const result = await startRun(recipe, {
      runsDir: join(root, "runs"),
      factory: engineFactory,
      signal: controller.signal,
      hooks: { onStep: (r) => (r.step === 3 ? controller.abort() : undefined) },
    });
    assert.equal(result.status, "cancelled");
    assert.equal(result.step, 3);
    assert.equal(result.lastCheckpoint, "checkpoints/step-3");
    const state = JSON.parse(await readFile(join(result.dir, "state.json"), "utf8"));
    assert.equal(state.status, "cancelled");
  });

  it("starts a new run from another run's checkpoint with its own recipe's learning rate and a fresh optimizer", async () => {
    const { root, recipe } = await tinyRecipe({ algorithm: "sft", steps: 3, checkpointEvery: 3 });
    const runsDir = join(root, "runs");
    const first = await startRun(recipe, { runsDir, factory: engineFactory });
    const next = parseRecipe({
      ...recipe,
      model: { path: join(first.dir, first.lastCheckpoint as string) },
      trainer: { ...recipe.trainer, steps: 2, learningRate: 2e-4, warmupSteps: 0 },
    });
    const second = await startRun(next, { runsDir, factory: engineFactory });
    const steps = second.records.filter((r) => r.step > 0);
    assert.deepEqual(
      steps.map((r) => r.learningRate),
      [2e-4, 2e-4],
    );
  });

  it("rewards GRPO with a judge model and counts its calls in every step record", async () => {
    await withJudge(async (reward) => {
      const { root, recipe } = await tinyRecipe(TWO_GRPO_STEPS);
      const judged = parseRecipe({ ...recipe, reward: await reward(root) });
      const result = await startRun(judged, { runsDir: join(root, "runs"), factory: engineFactory });
      assert.equal(result.status, "completed");
      const [first, second] = result.records.filter((r) => r.step > 0);
      // one call per distinct sample: 2 prompts × 2 samples, fewer when a sample repeats (its score is cached)
      assert.ok(
        first.extra.judgeCalls >= 1 && first.extra.judgeCalls <= 4,
        `${first.extra.judgeCalls} calls`,
      );
      assert.equal(first.extra.judgeScored + first.extra.judgeUnjudged, 4);
      assert.ok(second.extra.judgeCalls >= first.extra.judgeCalls, "counted from the run's start");
    });
  });

  it("fails a run whose judge scored none of its samples, with the reason, and saves no final checkpoint", async () => {
    const { root, recipe } = await tinyRecipe({ ...TWO_GRPO_STEPS, checkpointEvery: 1 });
    const rubric = join(root, "rubric.json");
    await writeFile(rubric, await readFile("models/toolcall-judge/rubric.json", "utf8"));
    // nothing listens on the discard port: every judge call is refused, so every sample goes unjudged
    const judged = parseRecipe({
      ...recipe,
      reward: { kind: "judge", judge: { baseUrl: "http://127.0.0.1:9/v1", model: "judge", rubric } },
    });
    const runsDir = join(root, "runs");
    await assert.rejects(
      startRun(judged, { runsDir, factory: engineFactory, runId: "starved" }),
      /the judge scored none of the run's 8 samples: the run learned from nothing and registers no candidate/,
    );
    const state = JSON.parse(await readFile(join(runsDir, "starved", "state.json"), "utf8"));
    assert.equal(state.status, "failed");
    assert.match(state.error, /the judge scored none of the run's 8 samples/);
    // step 1's checkpoint is kept for a look, the last step's (a run's result) is never written
    assert.equal(state.lastCheckpoint, "checkpoints/step-1");
  });

  it("trains a family with no verifier on reference-free prompts, its judge rewarding every sample", async () => {
    await withJudge(async (reward) => {
      const { root, recipe } = await tinyRecipe(TWO_GRPO_STEPS);
      const spec = join(root, "judged.json");
      await writeFile(spec, JSON.stringify({ ...SUPPORT_LIKE_SPEC, verifier: "judge" }));
      const pool = join(root, "pool.jsonl");
      await writeFile(
        pool,
        ["Please refund order A17.", "Refund 12 dollars on B20."]
          .map((question) => JSON.stringify({ question, env: "judged", meta: { source: "failure" } }))
          .join("\n"),
      );
      const judgedFamily = {
        ...recipe,
        families: [spec],
        data: { ...recipe.data, env: "judged", prompts: pool, evalCount: 0 },
      };
      const refused = (overrides: Record<string, unknown>, message: RegExp) =>
        assert.throws(() => parseRecipe({ ...judgedFamily, ...overrides }), message);
      await loadTaskFamilies([spec]);
      refused(
        {},
        /reward\.kind: the "judged" family has no verifier, so only a judge can reward its samples/,
      );
      refused(
        { reward: await reward(root), data: { ...judgedFamily.data, evalCount: 4 } },
        /data\.evalCount: held-out tasks are judged by a verifier, which the "judged" family has not/,
      );
      // the shipped judge never saw this family's tool: it reads some of its answers, so the run asks for a quarter
      const judgeReward = (await reward(root)) as { kind: string; judge: Record<string, unknown> };
      const lenient = { ...judgeReward, judge: { ...judgeReward.judge, minScoredShare: 0.25 } };
      const result = await startRun(parseRecipe({ ...judgedFamily, reward: lenient }), {
        runsDir: join(root, "runs"),
        factory: engineFactory,
      });
      assert.equal(result.status, "completed");
      // every sample of both reference-free prompts went to the judge, each step
      for (const record of result.records.filter((r) => r.step > 0))
        assert.equal(record.extra.judgeScored + record.extra.judgeUnjudged, 4 * record.step);
    });
  });

  it("takes its SFT warm-up first, resumes it after a cancel, and starts DPO from the warm-up's checkpoint", async () => {
    const { root, recipe: dpo } = await tinyRecipe({ steps: 2, checkpointEvery: 2 });
    const recipe = parseRecipe({ ...dpo, sftWarmUp: { steps: 4, learningRate: 5e-3 } });
    const runsDir = join(root, "runs");
    const started: string[] = [];
    // the real engines, recording which model each training engine starts from
    const factory = {
      ...engineFactory,
      trainEngine: (...args: Parameters<typeof engineFactory.trainEngine>) => {
        started.push(args[0]);
        return engineFactory.trainEngine(...args);
      },
    };
    const controller = new AbortController();
    const cancelled = await startRun(recipe, {
      runsDir,
      factory,
      signal: controller.signal,
      hooks: { onStep: (r) => (r.step === 2 ? controller.abort() : undefined) },
    });
    assert.deepEqual([cancelled.status, cancelled.lastCheckpoint], ["cancelled", null]);
    const result = await resumeRun(cancelled.runId, { runsDir, factory });
    assert.equal(result.status, "completed");
    const warmUp = join(result.dir, "sft-warm-up");
    const warmState = JSON.parse(await readFile(join(warmUp, "state.json"), "utf8"));
    assert.deepEqual([warmState.status, warmState.step], ["completed", 4]);
    const warmSteps = (await readFile(join(warmUp, "metrics.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      warmSteps.filter((r) => r.step > 0).map((r) => [r.step, r.algorithm, r.learningRate]),
      [1, 2, 3, 4].map((step) => [step, "sft", 5e-3]),
    );
    assert.deepEqual(started, [
      dpo.model.path,
      join(warmUp, "checkpoints/step-2"),
      join(warmUp, "checkpoints/step-4"),
    ]);
    assert.deepEqual(
      result.records.filter((r) => r.step > 0).map((r) => r.algorithm),
      ["dpo", "dpo"],
    );
    assert.throws(
      () => parseRecipe({ ...dpo, trainer: { ...dpo.trainer, algorithm: "sft" }, sftWarmUp: { steps: 2 } }),
      /sftWarmUp: an SFT run has no SFT warm-up/,
    );
  });

  it("refuses to resume a run whose process is still alive", async () => {
    const { root, recipe } = await tinyRecipe({ steps: 1 });
    const runsDir = join(root, "runs");
    const result = await startRun(recipe, { runsDir, factory: engineFactory });
    const statePath = join(result.dir, "state.json");
    const state = JSON.parse(await readFile(statePath, "utf8"));
    await writeFile(statePath, JSON.stringify({ ...state, status: "running", pid: process.ppid }));
    await assert.rejects(
      resumeRun(result.runId, { runsDir, factory: engineFactory }),
      /is still running \(pid \d+\)/,
    );
  });
});
