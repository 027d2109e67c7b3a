import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseRecipe } from "../../recipe/index.ts";
import { engineFactory } from "../../worker/index.ts";
import { writeTinyModel } from "../__fixtures__/tiny-model.ts";
import { resumeRun, startRun } from "../run-training.ts";
import type { StepRecord } from "../run-types.ts";
import type { PlannedWarmUpRecord } from "./planned-sft-warm-up.ts";

const rewardModule = fileURLToPath(new URL("../__fixtures__/digit-reward.ts", import.meta.url));

/** A two-step DPO run of a tiny model whose SFT warm-up is `sftWarmUp`, and its engine factory's starting models. */
async function dpoWithWarmUp(sftWarmUp: Record<string, unknown>) {
  const root = await mkdtemp(join(tmpdir(), "arc-planned-warm-up-"));
  const recipe = parseRecipe({
    name: "planned",
    model: { path: await writeTinyModel(join(root, "model")) },
    data: { env: "toolcall", split: "train", count: 32, evalCount: 0 },
    trainer: {
      algorithm: "dpo",
      steps: 2,
      promptsPerStep: 4,
      samplesPerPrompt: 4,
      maxTokens: 8,
      checkpointEvery: 2,
      evalEvery: 100,
    },
    reward: { module: rewardModule },
    sftWarmUp: { promptsPerStep: 4, learningRate: 5e-3, ...sftWarmUp },
  });
  const started: string[] = [];
  const factory = {
    ...engineFactory,
    trainEngine: (...args: Parameters<typeof engineFactory.trainEngine>) => {
      started.push(args[0]);
      return engineFactory.trainEngine(...args);
    },
  };
  return { recipe, runsDir: join(root, "runs"), factory, started };
}

async function records(runDir: string): Promise<StepRecord[]> {
  return (await readFile(join(runDir, "metrics.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

async function warmUpRecord(runDir: string): Promise<PlannedWarmUpRecord> {
  return JSON.parse(await readFile(join(runDir, "sft-warm-up.json"), "utf8"));
}

describe("a recipe's planned SFT warm-up", () => {
  it("is judged on its schedule, stops at the first judgement that meets its target, and hands on that checkpoint", async () => {
    // every failure rate's upper bound is at most 1: the first judged step (4) meets the target
    const { recipe, runsDir, factory, started } = await dpoWithWarmUp({
      steps: 8,
      stopAt: { failureRate: 1, evalCount: 4, evalEvery: 2, evalFrom: 4 },
    });
    const result = await startRun(recipe, { runsDir, factory });
    assert.equal(result.status, "completed");
    const warmUp = await records(join(result.dir, "sft-warm-up"));
    assert.deepEqual(
      warmUp.filter((r) => r.evalFailureRate !== undefined).map((r) => r.step),
      [0, 4],
      "judged at its start and at step 4, where it stopped",
    );
    const { checkpoint, report } = await warmUpRecord(result.dir);
    assert.equal(checkpoint, join("sft-warm-up", "checkpoints", "step-4"));
    assert.deepEqual([report.targetReachedAtStep, report.steps, report.heldOutTarget], [4, 4, 1]);
    assert.equal(started[1], join(result.dir, checkpoint), "DPO starts from the checkpoint handed on");
  });

  it("runs to its last step when no judgement meets the target, its rate ramped then decayed towards its floor", async () => {
    const { recipe, runsDir, factory } = await dpoWithWarmUp({
      steps: 8,
      warmupSteps: 2,
      minLearningRate: 1e-4,
      stopAt: { failureRate: 0, evalCount: 4, evalEvery: 2, evalFrom: 4 },
    });
    const result = await startRun(recipe, { runsDir, factory });
    const warmUp = await records(join(result.dir, "sft-warm-up"));
    assert.deepEqual(
      warmUp.filter((r) => r.evalFailureRate !== undefined).map((r) => r.step),
      [0, 4, 6, 8],
    );
    const rates = warmUp.filter((r) => r.step > 0).map((r) => r.learningRate as number);
    assert.deepEqual(rates.slice(0, 2), [2.5e-3, 5e-3], "a ramp of 2 steps to the peak");
    const decay = rates.slice(2);
    assert.ok(
      decay.every((rate, i) => i === 0 || rate < decay[i - 1]) && (decay.at(-1) as number) < 5e-4,
      `a cosine from the peak towards 1e-4, reached as the last step ends: ${rates}`,
    );
    const { checkpoint, report } = await warmUpRecord(result.dir);
    assert.equal(checkpoint, join("sft-warm-up", "checkpoints", "step-8"));
    assert.equal(report.targetReachedAtStep, null);
  });

  it("plans its steps from a probe that it then removes, and stops at its budget with a step to hand on", async () => {
    const roomy = await dpoWithWarmUp({ steps: 6, budgetS: 600 });
    const planned = await startRun(roomy.recipe, { runsDir: roomy.runsDir, factory: roomy.factory });
    const { report } = await warmUpRecord(planned.dir);
    assert.deepEqual([report.plannedSteps, report.steps, report.stoppedAtDeadline], [6, 6, false]);
    assert.ok((report.secondsPerStep ?? 0) > 0, "the probe timed a step");
    assert.equal(existsSync(join(planned.dir, "sft-warm-up-probe")), false, "the probe is removed");

    // a budget spent before the warm-up's first step: the probe cannot time one, the part stops after its first
    const tight = await dpoWithWarmUp({ steps: 50, budgetS: 0.001 });
    const stopped = await startRun(tight.recipe, { runsDir: tight.runsDir, factory: tight.factory });
    assert.equal(stopped.status, "completed");
    const { checkpoint, report: late } = await warmUpRecord(stopped.dir);
    assert.deepEqual([late.steps, late.stoppedAtDeadline], [1, true]);
    assert.equal(checkpoint, join("sft-warm-up", "checkpoints", "step-1"));
    assert.equal(tight.started[2], join(stopped.dir, checkpoint), "DPO starts from that step");
  });

  it("starts again when the run resumes after a cancel during it, and trains from what it then hands on", async () => {
    const { recipe, runsDir, factory, started } = await dpoWithWarmUp({
      steps: 6,
      stopAt: { failureRate: 0, evalCount: 2, evalEvery: 3, evalFrom: 3 },
    });
    const controller = new AbortController();
    const cancelled = await startRun(recipe, {
      runsDir,
      factory,
      signal: controller.signal,
      hooks: { onStep: (r) => (r.step === 2 ? controller.abort() : undefined) },
    });
    assert.deepEqual([cancelled.status, cancelled.lastCheckpoint], ["cancelled", null]);
    assert.equal(existsSync(join(cancelled.dir, "sft-warm-up.json")), false);
    const resumed = await resumeRun(cancelled.runId, { runsDir, factory });
    assert.equal(resumed.status, "completed");
    const warmUp = await records(join(resumed.dir, "sft-warm-up"));
    assert.deepEqual(
      warmUp.map((r) => r.step),
      [0, 1, 2, 3, 4, 5, 6],
      "the warm-up ran again from its start",
    );
    const { checkpoint } = await warmUpRecord(resumed.dir);
    assert.equal(started.at(-1), join(resumed.dir, checkpoint));
    const again = await resumeRun(cancelled.runId, { runsDir, factory });
    assert.equal(again.status, "completed");
  });
});
