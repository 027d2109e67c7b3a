import { InvalidInputError } from "@arc/core";
import type { Recipe } from "../recipe/recipe-schema.ts";

/** The files a VERL job reads and writes, as paths on the cluster. */
export interface VerlJobPaths {
  /** VERL's train and validation parquet (`writeVerlData`). */
  trainFile: string;
  valFile: string;
  /** Arc's reward module (`compute_score`), readable on every node of the cluster. */
  rewardModule: string;
  /** `trainer.default_local_dir`: where VERL writes `global_step_N/actor/`. */
  checkpointDir: string;
  /** `trainer.experiment_name`: the run's id. */
  experimentName: string;
}

/**
 * What a recipe asks that VERL's GRPO cannot do as Arc does it, each refused by its key. Asynchronous rollouts are
 * not refused: VERL's main_ppo samples each step with the policy it trains (staleness 0, within any maxStaleness),
 * and the decoupled objective at staleness 0 is PPO's.
 */
export function checkVerlRecipe(recipe: Recipe, source = "recipe"): void {
  const refuse = (field: string, message: string) => {
    throw new InvalidInputError(`${source}: ${field}: ${message}`, { field });
  };
  const t = recipe.trainer;
  if (t.algorithm !== "grpo") {
    refuse("trainer.algorithm", `trainer.backend verl runs GRPO recipes, got ${t.algorithm}`);
    return;
  }
  if (t.workflow !== "single-turn")
    refuse(
      "trainer.workflow",
      "VERL's single-turn rollouts are what Arc compiles to (multi-turn: backend arc)",
    );
  if (recipe.model.init) refuse("model.init", "a VERL job starts from a checkpoint (model.path)");
  if (recipe.teaching) refuse("teaching", "teacher runs train on Arc's own trainer (backend arc)");
  if (recipe.sftWarmUp) refuse("sftWarmUp", "the SFT warm-up runs on Arc's own trainer (backend arc)");
  if (recipe.generator.url) refuse("generator.url", "VERL samples on its own rollout engine (verl.rollout)");
  if (recipe.reward.module)
    refuse(
      "reward.module",
      "a JavaScript reward cannot run inside VERL; Arc's reward module scores through its API",
    );
  if (recipe.reward.truncatedPenalty > 0)
    refuse("reward.truncatedPenalty", "not passed to VERL's reward (its response is cut at maxTokens)");
  const rows = t.promptsPerStep * t.samplesPerPrompt;
  const gpus = recipe.verl.nodes * recipe.verl.gpusPerNode;
  if (rows % gpus !== 0)
    refuse(
      "trainer.promptsPerStep",
      `VERL splits each step's ${rows} samples (promptsPerStep × samplesPerPrompt) evenly over ${gpus} GPUs (verl.nodes × verl.gpusPerNode)`,
    );
}

/** A value as a Hydra override writes it: quoted (and escaped) unless it is a plain word, number or path. */
function hydraValue(value: string | number | boolean): string {
  const text = String(value);
  return /^[\w./@+-]+$/.test(text) ? text : `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** A Hydra list value, `[a,b]`. */
const hydraList = (items: readonly string[]) => `[${items.map(hydraValue).join(",")}]`;

/**
 * The Hydra overrides of `python3 -m verl.trainer.main_ppo` for a GRPO recipe (VERL 0.9's keys): the algorithm
 * (GRPO; Dr.GRPO as unnormalised advantages with the constant-length loss), the optimizer and its schedule, the KL
 * term (k3, VERL's `low_var_kl`, in the loss), the clip range, entropy, the rollout (n, temperature, engine,
 * tensor parallelism), batch sizes in prompts (one update of the whole batch, `ppoEpochs` times), LoRA, the data
 * files, Arc's reward module, the cluster's shape, and checkpoints that hold the model in Hugging Face's layout so
 * Arc can import the last one. The recipe's `verl.overrides` come last and win.
 */
export function verlOverrides(recipe: Recipe, paths: VerlJobPaths): string[] {
  const t = recipe.trainer;
  if (t.algorithm !== "grpo") throw new Error(`VERL compiles GRPO recipes, got ${t.algorithm}`);
  const { verl } = recipe;
  const set = (key: string, value: string | number | boolean) => `${key}=${hydraValue(value)}`;
  const actor = "actor_rollout_ref.actor";
  const rollout = "actor_rollout_ref.rollout";
  const lora = recipe.engine.lora;
  const cosine = t.decaySteps > 0;
  return [
    set("algorithm.adv_estimator", "grpo"),
    set("algorithm.norm_adv_by_std_in_grpo", t.normalization === "grpo"),
    set("algorithm.use_kl_in_reward", false),
    set("data.train_files", paths.trainFile),
    set("data.val_files", paths.valFile),
    set("data.train_batch_size", t.promptsPerStep),
    set("data.max_prompt_length", verl.maxPromptLength),
    set("data.max_response_length", t.maxTokens),
    set("data.filter_overlong_prompts", true),
    set("actor_rollout_ref.model.path", recipe.model.path),
    ...(lora
      ? [
          set("actor_rollout_ref.model.lora_rank", lora.rank),
          set("actor_rollout_ref.model.lora_alpha", lora.alpha),
          `actor_rollout_ref.model.target_modules=${hydraList(lora.targets)}`,
        ]
      : []),
    set(`${actor}.optim.lr`, t.learningRate),
    set(`${actor}.optim.lr_warmup_steps`, t.warmupSteps),
    set(`${actor}.optim.lr_scheduler_type`, cosine ? "cosine" : "constant"),
    ...(cosine ? [set(`${actor}.optim.min_lr_ratio`, t.minLearningRate / t.learningRate)] : []),
    set(`${actor}.optim.weight_decay`, t.weightDecay),
    set(`${actor}.optim.clip_grad`, t.maxGradNorm),
    set(`${actor}.ppo_mini_batch_size`, t.promptsPerStep),
    set(`${actor}.ppo_micro_batch_size_per_gpu`, verl.microBatchPerGpu),
    set(`${actor}.ppo_epochs`, t.ppoEpochs),
    set(`${actor}.clip_ratio_low`, t.clipEpsilon),
    set(`${actor}.clip_ratio_high`, t.clipEpsilon),
    set(`${actor}.entropy_coeff`, t.entropyCoef),
    set(`${actor}.use_kl_loss`, t.klCoef > 0),
    ...(t.klCoef > 0
      ? [
          set(`${actor}.kl_loss_coef`, t.klCoef),
          set(`${actor}.kl_loss_type`, "low_var_kl"),
          set("actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu", verl.microBatchPerGpu),
        ]
      : []),
    set(`${actor}.loss_agg_mode`, t.normalization === "dr-grpo" ? "seq-mean-token-sum-norm" : "token-mean"),
    `${actor}.checkpoint.save_contents=${hydraList(["model", "optimizer", "extra", "hf_model"])}`,
    set(`${rollout}.name`, verl.rollout),
    set(`${rollout}.n`, t.samplesPerPrompt),
    set(`${rollout}.temperature`, t.temperature),
    set(`${rollout}.tensor_model_parallel_size`, verl.tensorParallel),
    set(`${rollout}.gpu_memory_utilization`, verl.gpuMemoryUtilization),
    set(`${rollout}.log_prob_micro_batch_size_per_gpu`, verl.microBatchPerGpu),
    set("reward.custom_reward_function.path", paths.rewardModule),
    set("reward.custom_reward_function.name", "compute_score"),
    set("+reward.custom_reward_function.reward_kwargs.kind", recipe.reward.kind),
    set("trainer.total_training_steps", t.steps),
    set("trainer.save_freq", t.checkpointEvery),
    set("trainer.test_freq", t.evalEvery),
    set("trainer.val_before_train", recipe.data.evalCount > 0),
    set("trainer.nnodes", verl.nodes),
    set("trainer.n_gpus_per_node", verl.gpusPerNode),
    `trainer.logger=${hydraList(["console"])}`,
    set("trainer.project_name", "arc"),
    set("trainer.experiment_name", paths.experimentName),
    set("trainer.default_local_dir", paths.checkpointDir),
    ...verl.overrides,
  ];
}

/** A word as POSIX `sh` reads it back unchanged: single-quoted unless it is plainly safe. */
export function shellWord(word: string): string {
  return /^[\w./@%+=:,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'"'"'`)}'`;
}

/** The entrypoint of a VERL job: `python3 -m verl.trainer.main_ppo` with the overrides, run from `cwd`. */
export function verlEntrypoint(recipe: Recipe, overrides: readonly string[], cwd: string): string {
  return [
    `cd ${shellWord(cwd)} &&`,
    "exec",
    shellWord(recipe.verl.python),
    "-m verl.trainer.main_ppo",
    ...overrides.map(shellWord),
  ].join(" ");
}
