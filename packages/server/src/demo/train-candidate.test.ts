import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { configForSize, initWeights, writeHfCheckpoint } from "@arc/engine";
import { trainCandidate } from "./train-candidate.ts";

describe("trainCandidate (arc train in a child process)", () => {
  const dir = mkdtempSync(join(tmpdir(), "arc-train-candidate-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("stops a run whose deadline passed before it began after its first step, with that step's checkpoint", async () => {
    const model = join(dir, "tiny");
    const config = configForSize("tiny");
    await writeHfCheckpoint(model, config, initWeights(config, 0));
    const steps: number[] = [];
    const outcome = await trainCandidate({
      recipe: "recipes/toolcall-sft.yaml",
      runsDir: join(dir, "runs"),
      runId: "late",
      overrides: [
        `model.path=${model}`,
        "data.count=32",
        "data.evalCount=0",
        "trainer.steps=500",
        "trainer.promptsPerStep=2",
        "trainer.checkpointEvery=1000",
        "trainer.maxTokens=8",
      ],
      deadline: Date.now() - 1,
      onStep: (record) => steps.push(record.step),
    });
    assert.equal(outcome.state.status, "cancelled");
    assert.ok(outcome.stoppedAtDeadline);
    assert.ok(outcome.state.step >= 1 && outcome.state.step < 500, `stopped at step ${outcome.state.step}`);
    assert.ok(outcome.checkpoint !== null && existsSync(join(outcome.checkpoint, "model.safetensors")));
    assert.ok(steps.includes(1), `steps seen: ${steps}`);
  });

  it("stops a run early when `stopAfter` accepts a step, keeping that step's checkpoint", async () => {
    const outcome = await trainCandidate({
      recipe: "recipes/toolcall-sft.yaml",
      runsDir: join(dir, "runs"),
      runId: "early",
      overrides: [
        `model.path=${join(dir, "tiny")}`,
        "data.count=32",
        "data.evalCount=2",
        "trainer.steps=500",
        "trainer.promptsPerStep=2",
        "trainer.evalEvery=2",
        "trainer.checkpointEvery=2",
        "trainer.maxTokens=8",
      ],
      deadline: Date.now() + 600_000,
      onStep: () => undefined,
      stopAfter: (record) => record.step >= 2 && record.evalFailureRate !== undefined,
    });
    assert.equal(outcome.state.status, "cancelled");
    assert.ok(outcome.stoppedEarly && !outcome.stoppedAtDeadline);
    assert.ok(outcome.state.step >= 2 && outcome.state.step < 500, `stopped at step ${outcome.state.step}`);
    assert.ok(existsSync(join(outcome.dir, "checkpoints", "step-2", "model.safetensors")));
  });
});
