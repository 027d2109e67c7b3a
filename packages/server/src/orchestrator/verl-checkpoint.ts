import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { mergeLoraCheckpoint } from "@arc/engine";
import type { Recipe } from "@arc/rl";

/**
 * The final model of a VERL job, in Hugging Face's layout Arc registers: VERL's last checkpoint
 * (`<checkpointDir>/latest_checkpointed_iteration.txt` names `global_step_N`) holds the actor's weights in
 * `actor/huggingface/` (Arc's overrides save `hf_model`). A LoRA run's weights there still carry the adapter's
 * names, so VERL's model merger (`mergeAdapter`, a job on the cluster) writes the base and its `lora_adapter/`, and
 * Arc merges the adapter into `out` (with it in `out/adapter/`). Throws naming what is missing.
 */
export async function importVerlCheckpoint(options: {
  checkpointDir: string;
  recipe: Recipe;
  out: string;
  mergeAdapter: (actorDir: string, target: string) => Promise<void>;
}): Promise<string> {
  const latest = join(options.checkpointDir, "latest_checkpointed_iteration.txt");
  if (!existsSync(latest))
    throw new Error(
      `VERL wrote no checkpoint: ${latest} is missing (trainer.save_freq, and the cluster must write the run's folder)`,
    );
  const step = (await readFile(latest, "utf8")).trim();
  const actor = join(options.checkpointDir, `global_step_${step}`, "actor");
  if (options.recipe.engine.lora) {
    const merged = `${options.out}-verl-merged`;
    await options.mergeAdapter(actor, merged);
    await mergeLoraCheckpoint(merged, join(merged, "lora_adapter"), options.out);
    return options.out;
  }
  const model = join(actor, "huggingface");
  const weights = existsSync(model) ? (await readdir(model)).filter((f) => f.endsWith(".safetensors")) : [];
  if (!existsSync(join(model, "config.json")) || weights.length === 0)
    throw new Error(
      `${model}: expected the model in Hugging Face's layout (config.json and safetensors weights; checkpoint.save_contents with hf_model)`,
    );
  return model;
}
