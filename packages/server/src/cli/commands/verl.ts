import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { DEFAULT_ENV, InvalidInputError } from "@arc/core";
import {
  checkVerlRecipe,
  loadRecipe,
  shellWord,
  verlEntrypoint,
  verlOverrides,
  writeVerlData,
} from "@arc/rl";
import { VERL_REWARD_MODULE } from "../../orchestrator/ray-job-run.ts";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";

const help = `arc verl — a GRPO recipe as a VERL job, for teams that launch VERL themselves

Usage:
  arc verl export <recipe.yaml> [key=value ...] --out <dir> [--arc-url <url>]

Writes into <dir>: train.parquet and val.parquet (the recipe's prompt pool, data.prompts, or its generated split;
the agent's system prompt, tools and earlier turns in each prompt), arc_reward.py (VERL's compute_score, scoring
through Arc's API with the family's verifier or the tenant's judge), overrides.json (verl.trainer.main_ppo's Hydra
overrides) and run.sh (the exact command). Prints the command and its Ray Jobs submission.

The recipe's verl block sets what VERL needs beyond it (rollout engine, nodes, GPUs, the cluster's Python). The job
needs ARC_URL (--arc-url, default ARC_URL or http://127.0.0.1:7300) and ARC_API_KEY, a tenant key, in its environment.
Paths are absolute: <dir> must be readable at the same path on every node (shared storage), or copied there.`;

/** `arc verl export`: VERL's data, reward module and command for a recipe. */
export const verlCommand: Command = {
  name: "verl",
  summary: "export a GRPO recipe as a VERL job: parquet data, reward module, Hydra overrides, command",
  help,
  flags: { out: "string", "arc-url": "string" },
  async run(args) {
    const [action, recipePath, ...overrides] = args.positionals;
    if (action !== "export")
      throw new InvalidInputError(`unknown action "${action ?? ""}": expected export (see arc verl --help)`);
    if (!recipePath)
      throw new InvalidInputError(
        `recipe: expected a recipe file, e.g. arc verl export recipes/${DEFAULT_ENV}-grpo.yaml`,
        {
          field: "recipe",
        },
      );
    const outFlag = stringFlag(args, "out");
    if (!outFlag)
      throw new InvalidInputError("--out: expected the folder to write the job's files to", { field: "out" });
    const recipe = await loadRecipe(recipePath, ["trainer.backend=verl", ...overrides]);
    checkVerlRecipe(recipe, recipePath);
    const out = resolve(outFlag);
    await mkdir(out, { recursive: true });
    const data = await writeVerlData(recipe, out);
    const rewardModule = join(out, "arc_reward.py");
    await copyFile(VERL_REWARD_MODULE, rewardModule);
    const verlArgs = verlOverrides(
      { ...recipe, model: { path: resolve(recipe.model.path) } },
      {
        trainFile: data.trainFile,
        valFile: data.valFile,
        rewardModule,
        checkpointDir: join(out, "checkpoints"),
        experimentName: recipe.name,
      },
    );
    const entrypoint = verlEntrypoint(recipe, verlArgs, out);
    const arcUrl = stringFlag(args, "arc-url") ?? process.env.ARC_URL ?? "http://127.0.0.1:7300";
    await writeFile(join(out, "overrides.json"), `${JSON.stringify(verlArgs, null, 2)}\n`);
    await writeFile(
      join(out, "run.sh"),
      [
        "#!/bin/sh",
        "# verl.trainer.main_ppo for Arc's recipe; the reward module scores through Arc's API.",
        "set -e",
        `export ARC_URL="\${ARC_URL:-${arcUrl}}"`,
        `export ARC_API_KEY="\${ARC_API_KEY:?set ARC_API_KEY to a tenant key of Arc}"`,
        entrypoint,
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
    const runtimeEnv = JSON.stringify({ env_vars: { ARC_URL: arcUrl, ARC_API_KEY: "<tenant key>" } });
    console.log(
      [
        `wrote ${out}: train.parquet (${data.trainRows} rows), val.parquet (${data.valRows} rows, ${data.validation}), arc_reward.py, overrides.json, run.sh`,
        "",
        "run it on a machine with VERL (pip install 'verl[vllm]==0.9.1'):",
        `  ARC_API_KEY=<tenant key> sh ${shellWord(join(out, "run.sh"))}`,
        "or submit it to a Ray cluster:",
        `  ray job submit --address http://<head>:8265 --runtime-env-json ${shellWord(runtimeEnv)} -- sh ${shellWord(join(out, "run.sh"))}`,
      ].join("\n"),
    );
    return 0;
  },
};
