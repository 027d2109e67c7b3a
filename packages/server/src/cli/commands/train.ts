import { resolve } from "node:path";
import { InvalidInputError } from "@arc/core";
import {
  ARC_STEP_PREFIX,
  type CheckpointInfo,
  loadRecipe,
  progressLine,
  type RunHooks,
  type RunOptions,
  type RunResult,
  type RunState,
  resumeRun,
  type StepRecord,
  startRun,
} from "@arc/rl";
import { asyncRolloutSource, engineFactory } from "@arc/rl/embedded";
import { DEFAULT_RECIPE_FILE } from "../../orchestrator/default-recipe.ts";
import { registerRunCheckpoint } from "../../orchestrator/register-run-checkpoint.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { type ParsedArgs, stringFlag } from "../parse-args.ts";

const HELP = `arc train — train a model from a recipe (SFT warm-up, semi-online DPO, GRPO)

Usage:
  arc train <recipe.yaml> [key=value ...] [--runs-dir .arc/runs] [--run-id <id>]
      Starts a run. Overrides name a recipe key, e.g. trainer.syncInterval=10 data.env=<env of a family>.
  arc train --resume <runId> [--runs-dir .arc/runs]
      Continues a run from its last checkpoint (same data order and sampling seeds).

A run lives in <runs-dir>/<runId>/: recipe.yaml, state.json, metrics.jsonl, metrics.svg and
checkpoints/step-N/ (Hugging Face layout plus optimizer state). Ctrl-C stops after the current step
with a checkpoint and status "cancelled" (so does SIGTERM, as a stopped Ray job gets); --resume continues it.
--json-steps also prints each step's record on stdout as an "arc-step <json>" line (a Ray job's log is read so).

With a server configured (--url or ARC_URL; --key, --home as for arc models), a completed run's last checkpoint is
registered there as a candidate ModelVersion (--base-model <id> names its parent; --no-register skips it).
The server accepts checkpoints under <ARC_HOME>/artifacts/<tenantId>/: give --runs-dir a folder there.`;

/** Prints progress: one rewritten line on a TTY, else a plain line every `every` steps and at checkpoints. */
function progressPrinter(stream: NodeJS.WriteStream) {
  const began = performance.now();
  let first: number | undefined;
  let lastPlain = 0;
  return {
    onStep(record: StepRecord, state: RunState) {
      first ??= record.step;
      const line = progressLine(record, state, first, (performance.now() - began) / 1000);
      if (stream.isTTY) stream.write(`\r\x1b[2K${line}`);
      else if (
        performance.now() - lastPlain > 10_000 ||
        record.step === state.totalSteps ||
        record.evalFailureRate !== undefined
      ) {
        lastPlain = performance.now();
        stream.write(`${line}\n`);
      }
    },
    onCheckpoint(info: CheckpointInfo) {
      stream.write(`${stream.isTTY ? "\n" : ""}checkpoint step ${info.step}: ${info.dir}\n`);
    },
  };
}

/** `--json-steps`: each step record on stdout as one `arc-step <json>` line, for a job's log to be followed. */
function jsonStepPrinter(): Pick<RunHooks, "onStep"> {
  return {
    onStep(record) {
      process.stdout.write(`${ARC_STEP_PREFIX}${JSON.stringify(record)}\n`);
    },
  };
}

async function train(args: ParsedArgs): Promise<number> {
  const runsDir = resolve(stringFlag(args, "runs-dir", ".arc/runs") as string);
  const controller = new AbortController();
  // Ctrl-C, or SIGTERM (a Ray job being stopped), stops the run after its step with a checkpoint
  const onStop = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: stopping after this step (Ctrl-C again to kill)…\n`);
    controller.abort();
    process.off("SIGINT", onStop);
    process.off("SIGTERM", onStop);
  };
  process.on("SIGINT", onStop);
  process.on("SIGTERM", onStop);
  const printer = progressPrinter(process.stderr);
  const steps = args.flags["json-steps"] === true ? jsonStepPrinter() : undefined;
  const options: RunOptions = {
    runsDir,
    factory: engineFactory,
    asyncSource: asyncRolloutSource,
    hooks: {
      onStep: async (record, state) => {
        printer.onStep(record, state);
        steps?.onStep?.(record, state);
      },
      onCheckpoint: printer.onCheckpoint,
    },
    signal: controller.signal,
  };
  let result: RunResult;
  try {
    const resume = stringFlag(args, "resume");
    if (resume) {
      result = await resumeRun(resume, options);
    } else {
      const [recipePath, ...overrides] = args.positionals;
      if (!recipePath) {
        throw new InvalidInputError(`recipe: expected a recipe file, e.g. arc train ${DEFAULT_RECIPE_FILE}`, {
          field: "recipe",
        });
      }
      const recipe = await loadRecipe(recipePath, overrides);
      const from = recipe.model.init
        ? `fresh ${recipe.model.init.size} weights (seed ${recipe.model.init.seed})`
        : recipe.model.path;
      const teaching = recipe.teaching ? `, teaching the frozen ${recipe.teaching.student}` : "";
      process.stderr.write(
        `run ${recipe.name}: ${recipe.trainer.algorithm}, ${recipe.trainer.steps} steps from ${from}${teaching}\n`,
      );
      result = await startRun(recipe, { ...options, runId: stringFlag(args, "run-id") });
    }
  } finally {
    process.off("SIGINT", onStop);
    process.off("SIGTERM", onStop);
  }
  const server = stringFlag(args, "url") ?? process.env.ARC_URL;
  if (
    server &&
    args.flags["no-register"] !== true &&
    result.status === "completed" &&
    result.lastCheckpoint
  ) {
    const model = await registerRunCheckpoint(arcClient(args, "tenant"), result, {
      parentId: stringFlag(args, "base-model"),
    });
    process.stderr.write(`registered ${model.name} as ${model.id} (candidate) on ${server}\n`);
  }
  const last = [...result.records].reverse().find((r) => r.evalFailureRate !== undefined);
  const first = result.records.find((r) => r.evalFailureRate !== undefined);
  process.stderr.write("\n");
  console.log(
    JSON.stringify({
      runId: result.runId,
      status: result.status,
      step: result.step,
      dir: result.dir,
      checkpoint: result.lastCheckpoint,
      heldOutFailureRate: first && last ? { start: first.evalFailureRate, end: last.evalFailureRate } : null,
    }),
  );
  return result.status === "completed" || result.status === "cancelled" ? 0 : 1;
}

/** `arc train`: runs a recipe, shows progress, resumes after a crash. */
export const trainCommand: Command = {
  name: "train",
  summary: "train a model from a recipe (SFT, semi-online DPO, GRPO); --resume after a crash",
  help: HELP,
  flags: {
    ...CLIENT_FLAGS,
    "runs-dir": "string",
    "run-id": "string",
    resume: "string",
    "base-model": "string",
    "no-register": "boolean",
    "json-steps": "boolean",
  },
  run: train,
};
