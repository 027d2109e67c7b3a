/**
 * Importing a VERL job's final model. VERL's checkpoint layout (`latest_checkpointed_iteration.txt`,
 * `global_step_N/actor/huggingface/`) is written here by hand from VERL 0.9's checkpoint manager, and its model merger
 * is a test double that writes what `python -m verl.model_merger merge` writes for a LoRA run (the base model and
 * `lora_adapter/`): VERL itself needs GPUs.
 */
import assert from "node:assert/strict";
import { cp, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  configForSize,
  EmbeddedTrainEngine,
  initWeights,
  readHfCheckpoint,
  writeHfCheckpoint,
} from "@arc/engine";
import { parseRecipe } from "@arc/rl";
import { importVerlCheckpoint } from "./verl-checkpoint.ts";

const recipe = (lora: boolean) =>
  parseRecipe({
    model: { path: "/models/base" },
    ...(lora ? { engine: { lora: { rank: 4, alpha: 8 } } } : {}),
    trainer: { backend: "verl", algorithm: "grpo" },
  });

async function verlCheckpoints(): Promise<{ dir: string; actor: string; base: string }> {
  const dir = await mkdtemp(join(tmpdir(), "arc-verl-ckpt-"));
  const base = join(dir, "base");
  const config = configForSize("tiny");
  await writeHfCheckpoint(base, config, initWeights(config, 4));
  const actor = join(dir, "checkpoints", "global_step_6", "actor");
  await mkdir(actor, { recursive: true });
  await writeFile(join(dir, "checkpoints", "latest_checkpointed_iteration.txt"), "6");
  return { dir, actor, base };
}

describe("importing a VERL job's final model", () => {
  it("takes the last global step's actor/huggingface model", async () => {
    const { dir, actor, base } = await verlCheckpoints();
    await cp(base, join(actor, "huggingface"), { recursive: true });
    const imported = await importVerlCheckpoint({
      checkpointDir: join(dir, "checkpoints"),
      recipe: recipe(false),
      out: join(dir, "final"),
      mergeAdapter: () => Promise.reject(new Error("no merge without LoRA")),
    });
    assert.equal(imported, join(actor, "huggingface"));
  });

  it("merges a LoRA run's adapter, written by VERL's model merger, into its base", async () => {
    const { dir, base } = await verlCheckpoints();
    const engine = await EmbeddedTrainEngine.fromCheckpoint(base, {
      learningRate: 0.05,
      lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj"] },
    });
    await engine.step({ promptTokens: [[1, 2, 3]], outputTokens: [[4, 5, 6]] }, { kind: "sft" });
    const trained = join(dir, "trained");
    await engine.save(trained);
    await engine.close();
    const merges: string[] = [];
    const imported = await importVerlCheckpoint({
      checkpointDir: join(dir, "checkpoints"),
      recipe: recipe(true),
      out: join(dir, "final"),
      // the merger's output: the un-merged base model, its adapter in lora_adapter/
      async mergeAdapter(actorDir, target) {
        merges.push(actorDir);
        await cp(base, target, { recursive: true });
        await cp(join(trained, "adapter"), join(target, "lora_adapter"), { recursive: true });
      },
    });
    assert.deepEqual(merges, [join(dir, "checkpoints", "global_step_6", "actor")]);
    const [got, expected] = await Promise.all([imported, trained].map(readHfCheckpoint));
    for (const [name, tensor] of expected.tensors)
      assert.ok(
        tensor.data.every((x, i) => Math.abs(x - (got.tensors.get(name)?.data[i] ?? Number.NaN)) < 1e-6),
        name,
      );
  });

  it("names what is missing when VERL wrote no model Arc can read", async () => {
    const { dir, actor } = await verlCheckpoints();
    const options = {
      checkpointDir: join(dir, "checkpoints"),
      recipe: recipe(false),
      out: join(dir, "final"),
      mergeAdapter: async () => {},
    };
    await assert.rejects(
      importVerlCheckpoint(options),
      new RegExp(`${actor}/huggingface: expected the model`),
    );
    await assert.rejects(
      importVerlCheckpoint({ ...options, checkpointDir: join(dir, "nowhere") }),
      /VERL wrote no checkpoint: .*latest_checkpointed_iteration\.txt is missing/,
    );
  });
});
