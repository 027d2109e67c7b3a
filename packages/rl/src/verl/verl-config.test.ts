/**
 * The overrides Arc compiles for `python -m verl.trainer.main_ppo`, loaded by VERL's own code (the verl package of the
 * project's venv, installed for this check): composed with VERL's `ppo_trainer` configuration and validated as
 * main_ppo validates it before training, then checked by Arc's own code for what VERL reads only on its GPUs
 * (python -m arc_verl.check_config, which names who refused each). VERL trains on GPUs with vLLM or SGLang, neither
 * of which runs here; the configuration is what can be checked on a CPU.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { TORCH_WORKER_DIR, torchPython } from "@arc/engine";
import { pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { loadRecipe, parseRecipe } from "../recipe/index.ts";
import { shellWord, verlEntrypoint, verlOverrides } from "./verl-overrides.ts";

const recipes = fileURLToPath(new URL("../../../../recipes/", import.meta.url));
const python = torchPython();
const skip = skipWithout("python", pythonLacks(python, ["verl", "hydra"]));

const paths = {
  trainFile: "/data/run 1/train.parquet",
  valFile: "/data/run 1/val.parquet",
  rewardModule: "/data/run 1/arc_reward.py",
  checkpointDir: "/data/run 1/checkpoints",
  experimentName: "run-1",
};
const lora = ["engine.lora.rank=16", "engine.lora.alpha=32"];

/** Runs VERL's loading of named override lists, then Arc's checks; returns each one's report. */
async function checkInVerl(configs: Record<string, string[]>) {
  const file = join(mkdtempSync(join(tmpdir(), "arc-verl-config-")), "overrides.json");
  writeFileSync(file, JSON.stringify(configs));
  const run = await promisify(execFile)(python, ["-m", "arc_verl.check_config", file], {
    cwd: TORCH_WORKER_DIR,
  }).catch((error: { stdout: string }) => error);
  return Object.fromEntries(
    run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .map((report: Record<string, unknown>) => [report.name, report]),
  ) as Record<
    string,
    {
      ok: boolean;
      refused_by?: "verl" | "arc";
      error: string;
      lora_rank: number;
      reference_policy: boolean;
      vllm_stand_in: boolean;
    }
  >;
}

/** A shipped recipe's VERL overrides, with `extra` Hydra overrides of its own (the recipe's verl.overrides). */
async function compiled(file: string, overrides: string[] = [], extra: string[] = []) {
  const recipe = await loadRecipe(join(recipes, file), ["trainer.backend=verl", ...overrides]);
  return verlOverrides({ ...recipe, verl: { ...recipe.verl, overrides: extra } }, paths);
}

describe("VERL overrides", () => {
  it("maps a GRPO recipe's algorithm, optimizer, KL, clip, rollout, batch, LoRA and cluster onto VERL's keys", async () => {
    const recipe = parseRecipe({
      model: { path: "/models/qwen" },
      engine: { lora: { rank: 8, alpha: 16, targets: ["q_proj", "v_proj"] } },
      trainer: {
        backend: "verl",
        algorithm: "grpo",
        steps: 30,
        promptsPerStep: 16,
        samplesPerPrompt: 8,
        learningRate: 1e-6,
        warmupSteps: 5,
        decaySteps: 25,
        minLearningRate: 1e-7,
        klCoef: 0.01,
        clipEpsilon: 0.28,
        entropyCoef: 0.001,
        normalization: "dr-grpo",
        ppoEpochs: 2,
        maxTokens: 256,
        checkpointEvery: 10,
        evalEvery: 5,
      },
      verl: { rollout: "sglang", nodes: 2, gpusPerNode: 8, tensorParallel: 2 },
    });
    const set = new Map(
      verlOverrides(recipe, paths).map((o) => [o.slice(0, o.indexOf("=")), o.slice(o.indexOf("=") + 1)]),
    );
    const expected: Record<string, string> = {
      "algorithm.adv_estimator": "grpo",
      "algorithm.norm_adv_by_std_in_grpo": "false",
      "actor_rollout_ref.actor.loss_agg_mode": "seq-mean-token-sum-norm",
      "actor_rollout_ref.actor.optim.lr": "0.000001",
      "actor_rollout_ref.actor.optim.lr_warmup_steps": "5",
      "actor_rollout_ref.actor.optim.lr_scheduler_type": "cosine",
      "actor_rollout_ref.actor.optim.min_lr_ratio": "0.1",
      "actor_rollout_ref.actor.use_kl_loss": "true",
      "actor_rollout_ref.actor.kl_loss_coef": "0.01",
      "actor_rollout_ref.actor.kl_loss_type": "low_var_kl",
      "actor_rollout_ref.actor.clip_ratio_low": "0.28",
      "actor_rollout_ref.actor.clip_ratio_high": "0.28",
      "actor_rollout_ref.actor.entropy_coeff": "0.001",
      "actor_rollout_ref.actor.ppo_epochs": "2",
      "actor_rollout_ref.actor.ppo_mini_batch_size": "16",
      "data.train_batch_size": "16",
      "data.max_response_length": "256",
      "actor_rollout_ref.rollout.n": "8",
      "actor_rollout_ref.rollout.name": "sglang",
      "actor_rollout_ref.rollout.tensor_model_parallel_size": "2",
      "actor_rollout_ref.model.path": "/models/qwen",
      "actor_rollout_ref.model.lora_rank": "8",
      "actor_rollout_ref.model.lora_alpha": "16",
      "actor_rollout_ref.model.target_modules": "[q_proj,v_proj]",
      "trainer.total_training_steps": "30",
      "trainer.save_freq": "10",
      "trainer.test_freq": "5",
      "trainer.nnodes": "2",
      "trainer.n_gpus_per_node": "8",
      "data.train_files": "'/data/run 1/train.parquet'",
      "reward.custom_reward_function.path": "'/data/run 1/arc_reward.py'",
      "+reward.custom_reward_function.reward_kwargs.kind": "partial",
    };
    for (const [key, value] of Object.entries(expected)) assert.equal(set.get(key), value, key);
  });

  it("refuses what VERL's GRPO cannot do as the recipe asks, naming the key", () => {
    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { trainer: { backend: "verl", algorithm: "dpo" } },
        /trainer\.algorithm: trainer\.backend verl runs GRPO/,
      ],
      [
        {
          trainer: { backend: "verl", algorithm: "grpo", workflow: "multi-turn" },
          data: { env: "orderdesk" },
        },
        /trainer\.workflow/,
      ],
      [{ trainer: { backend: "verl", algorithm: "grpo" }, reward: { module: "r.ts" } }, /reward\.module/],
      [
        { trainer: { backend: "verl", algorithm: "grpo", promptsPerStep: 3, samplesPerPrompt: 3 } },
        /trainer\.promptsPerStep: VERL splits each step's 9 samples/,
      ],
      [{ trainer: { backend: "verl", algorithm: "grpo" }, model: { init: { size: "tiny" } } }, /model\.init/],
    ];
    for (const [raw, message] of refusals) assert.throws(() => parseRecipe(raw), message);
  });

  it("quotes the entrypoint so the shell hands every override to Hydra as written", () => {
    const recipe = parseRecipe({ trainer: { backend: "verl", algorithm: "grpo" } });
    const line = verlEntrypoint(recipe, ["data.train_files='/a b/t.parquet'", "x=[a,b]"], "/a b");
    assert.equal(
      line,
      `cd '/a b' && exec python3 -m verl.trainer.main_ppo 'data.train_files='"'"'/a b/t.parquet'"'"'' 'x=[a,b]'`,
    );
    assert.equal(shellWord("it's"), `'it'"'"'s'`);
  });
});

describe("the overrides in VERL's configuration loading, and Arc's checks of what VERL reads only on GPUs", {
  skip,
}, () => {
  it("VERL loads every shipped single-turn GRPO recipe with and without LoRA, and refuses an unknown key and a mini-batch over the batch; Arc refuses a mistyped value and an unknown estimator", async () => {
    const configs: Record<string, string[]> = {
      "toolcall-grpo": await compiled("toolcall-grpo.yaml"),
      "toolcall-grpo lora": await compiled("toolcall-grpo.yaml", lora),
      "arith-grpo": await compiled("arith-grpo.yaml"),
      "arith-grpo lora, KL, Dr.GRPO": await compiled("arith-grpo.yaml", [
        ...lora,
        "trainer.klCoef=0.01",
        "trainer.normalization=dr-grpo",
      ]),
      "unknown key": await compiled("toolcall-grpo.yaml", [], ["actor_rollout_ref.actor.lr=1"]),
      "bad value": await compiled("toolcall-grpo.yaml", [], ["actor_rollout_ref.actor.optim.lr=fast"]),
      "bad estimator": await compiled("toolcall-grpo.yaml", [], ["algorithm.adv_estimator=foo"]),
      "mini-batch over the batch": await compiled(
        "toolcall-grpo.yaml",
        [],
        ["actor_rollout_ref.actor.ppo_mini_batch_size=64"],
      ),
    };
    const reports = await checkInVerl(configs);
    for (const name of ["toolcall-grpo", "toolcall-grpo lora", "arith-grpo", "arith-grpo lora, KL, Dr.GRPO"])
      assert.equal(reports[name].ok, true, `${name}: ${reports[name].error}`);
    assert.equal(reports["toolcall-grpo lora"].lora_rank, 16);
    // vLLM is absent here: validate_config's LoRA-rank helper from vLLM is Arc's stand-in, not vLLM's own
    assert.equal(reports["toolcall-grpo lora"].vllm_stand_in, true);
    assert.equal(reports["arith-grpo lora, KL, Dr.GRPO"].reference_policy, true);
    const refusals = Object.fromEntries(
      ["unknown key", "mini-batch over the batch", "bad value", "bad estimator"].map((name) => [
        name,
        [reports[name].ok, reports[name].refused_by],
      ]),
    );
    assert.deepEqual(refusals, {
      "unknown key": [false, "verl"],
      "mini-batch over the batch": [false, "verl"],
      "bad value": [false, "arc"],
      "bad estimator": [false, "arc"],
    });
    assert.match(reports["unknown key"].error, /Could not override 'actor_rollout_ref\.actor\.lr'/);
    assert.match(
      reports["mini-batch over the batch"].error,
      /train_batch_size \(8\) must be >= .*ppo_mini_batch_size \(64\)/,
    );
    assert.match(
      reports["bad value"].error,
      /actor_rollout_ref\.actor\.optim\.lr: expected float, got 'fast'/,
    );
    assert.match(
      reports["bad estimator"].error,
      /algorithm\.adv_estimator: expected one of .*grpo.*, got 'foo'/,
    );
  });
});
