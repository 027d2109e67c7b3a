import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { parseRecipe } from "../recipe/index.ts";
import { engineFactory } from "../worker/index.ts";
import { writeTinyModel } from "./__fixtures__/tiny-model.ts";
import { RunDir } from "./run-dir.ts";
import { resumeRun, startRun } from "./run-training.ts";
import type { StepRecord } from "./run-types.ts";

const arcBin = fileURLToPath(new URL("../../../../bin/arc.mjs", import.meta.url));
const rewardModule = fileURLToPath(new URL("./__fixtures__/digit-reward.ts", import.meta.url));

/** Everything a step recorded except wall-clock figures. */
const deterministic = (r: StepRecord) => {
  const { elapsedS: _e, tokensPerSecond: _t, evalS: _s, ...rest } = r;
  return rest;
};

async function waitForCheckpoint(dir: RunDir, step: number, child: ReturnType<typeof spawn>): Promise<void> {
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the run exited (${child.exitCode}) before checkpoint ${step}`);
    try {
      const state = await dir.readState();
      if (state.lastCheckpoint && Number(state.lastCheckpoint.split("-").pop()) >= step) return;
    } catch {
      // state.json not written yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("crash and resume", () => {
  it("resumes a run killed with SIGKILL and ends bit-identical to an uninterrupted run", async () => {
    const root = await mkdtemp(join(tmpdir(), "arc-resume-"));
    const model = await writeTinyModel(join(root, "model"));
    const recipe = parseRecipe({
      name: "resume",
      model: { path: model },
      data: { env: "toolcall", split: "train", count: 24, evalCount: 8 },
      trainer: {
        algorithm: "dpo",
        steps: 12,
        promptsPerStep: 3,
        samplesPerPrompt: 3,
        learningRate: 1e-2,
        maxTokens: 6,
        syncInterval: 3,
        checkpointEvery: 4,
        evalEvery: 6,
      },
      reward: { module: rewardModule },
    });
    const recipePath = join(root, "recipe.yaml");
    await writeFile(recipePath, stringify(recipe));

    const straight = await startRun(recipe, {
      runsDir: join(root, "straight"),
      runId: "a",
      factory: engineFactory,
    });

    const runsDir = join(root, "crashed");
    const child = spawn(
      process.execPath,
      [arcBin, "train", recipePath, "--runs-dir", runsDir, "--run-id", "b"],
      {
        stdio: "ignore",
      },
    );
    const dir = new RunDir(join(runsDir, "b"));
    await waitForCheckpoint(dir, 4, child);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const killedAt = (await dir.readState()).step;
    assert.ok(killedAt < 12, `the run finished (step ${killedAt}) before it could be killed`);

    const resumed = await resumeRun("b", { runsDir, factory: engineFactory });
    assert.equal(resumed.status, "completed");
    assert.deepEqual(resumed.records.map(deterministic), straight.records.map(deterministic));
    const weights = (d: string) => readFile(join(d, "checkpoints", "step-12", "model.safetensors"));
    assert.ok((await weights(straight.dir)).equals(await weights(resumed.dir)), "final weights differ");
  });
});
