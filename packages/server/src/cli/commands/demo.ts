import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_BASE_MODEL, DEFAULT_ENV, InvalidInputError } from "@arc/core";
import { demoPlanFor, IMPORTED_PLAN, LORA_SFT_RECIPE, TOY_PLAN } from "../../demo/demo-plan.ts";
import { demoReportHtml } from "../../demo/demo-report.ts";
import { summaryJson, summaryTable } from "../../demo/demo-result.ts";
import { demoPaths, REPO_ROOT, runDemo } from "../../demo/run-demo.ts";
import type { Command } from "../command.ts";
import { intFlag, type ParsedArgs, stringFlag } from "../parse-args.ts";

const HELP = `arc demo — the whole loop in one command, on the embedded defaults

Usage:
  arc demo [--minutes 14] [--seed 1] [--home .arc/demo] [--baseline-rate 20] [--training-rate 1] [--rate 20]
           [--sft-steps 2000] [--train-steps 200] [--serve] [--base-model <dir>] [--max-tokens 96]
           [--train-set key=value,...]

Starts Arc, runs a simulated production agent (the openai client wrapped by @arc/sdk, through Arc's gateway)
on the ${DEFAULT_ENV} production split, detects and clusters its failures, synthesizes datasets, trains a candidate
(an SFT warm-up on the reference answers of failed prompts and passed traffic, then semi-online DPO),
validates it, deploys it as a canary (10% → 50% → 100%) and keeps the traffic running to measure each model
version's live failure rate. Prints a live line per phase and a summary table, and writes <home>/summary.json
and <home>/report.html.

  --minutes       wall-clock budget; the phases are cut to fit (default 14)
  --seed          seed of the production traffic and of the datasets (default 1)
  --home          the demo's ARC_HOME; its previous demo data is removed first (default .arc/demo)
  --baseline-rate conversations per second of the simulated agent before training, the traffic the candidate
                  learns from (default 20)
  --training-rate conversations per second while the candidate trains, which takes both cores (default 1)
  --rate          conversations per second of the simulated agent after training (default 20)
  --sft-steps     SFT warm-up steps at most, 0 for none: it plans as many as a short timed probe says fit in
                  90% of the training time, this many at most, and stops sooner once its held-out failure rate
                  is surely at the target (half the baseline's live rate); time it saves goes to measuring
                  (default 2000)
  --train-steps   DPO steps at most (training also stops at its share of the budget; default 200)
  --base-model    the starting checkpoint (default ${DEFAULT_BASE_MODEL}; models/${DEFAULT_ENV}-bpe is the BPE one).
                  A pretrained model \`arc models import\` wrote (its provenance.json says so), e.g.
                  .arc/models/smollm2-135m-instruct from \`arc models import smollm2-135m-instruct\`, trains instead
                  with SFT and LoRA adapters on the torch engine (${LORA_SFT_RECIPE}) until its share of the budget,
                  no DPO; its defaults: --baseline-rate ${IMPORTED_PLAN.defaults.baselineRate} --training-rate ${IMPORTED_PLAN.defaults.trainingRate} --rate ${IMPORTED_PLAN.defaults.rate} --max-tokens ${IMPORTED_PLAN.defaults.maxTokens},
                  ${IMPORTED_PLAN.agentMaxInFlight} calls in flight, a canary of one 50% stage (give it --minutes 45 on 2 cores)
  --max-tokens    output budget of every model call (default ${TOY_PLAN.defaults.maxTokens}; the longest ${DEFAULT_ENV} answer is 84 tokens)
  --train-set     more overrides of the DPO recipe, comma-separated, e.g. trainer.syncInterval=1,trainer.beta=0.2;
                  the SFT warm-up takes those an SFT recipe has (data.*, trainer.promptsPerStep, ...)
  --serve         leave the platform running afterwards and print its URL, the dashboard's URL and the keys`;

function numberFlag(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) {
    throw new InvalidInputError(`--${name}: expected a positive number, got "${value}"`, { field: name });
  }
  return n;
}

function nonNegativeIntFlag(args: ParsedArgs, name: string, fallback: number): number {
  const n = intFlag(args, name, fallback);
  if (n < 0)
    throw new InvalidInputError(`--${name}: expected a whole number >= 0, got ${n}`, { field: name });
  return n;
}

async function demo(args: ParsedArgs): Promise<number> {
  const home = stringFlag(args, "home", ".arc/demo") as string;
  const serve = args.flags.serve === true;
  const baseModel = stringFlag(args, "base-model", join(REPO_ROOT, DEFAULT_BASE_MODEL)) as string;
  const { defaults } = demoPlanFor(baseModel);
  const { result, server } = await runDemo({
    home,
    minutes: numberFlag(stringFlag(args, "minutes"), "minutes", 14),
    seed: intFlag(args, "seed", 1),
    rate: numberFlag(stringFlag(args, "rate"), "rate", defaults.rate),
    trainingRate: numberFlag(stringFlag(args, "training-rate"), "training-rate", defaults.trainingRate),
    baselineRate: numberFlag(stringFlag(args, "baseline-rate"), "baseline-rate", defaults.baselineRate),
    sftSteps: nonNegativeIntFlag(args, "sft-steps", 2000),
    trainSteps: intFlag(args, "train-steps", 200),
    baseModel,
    maxTokens: intFlag(args, "max-tokens", defaults.maxTokens),
    extraOverrides: (stringFlag(args, "train-set") ?? "").split(",").filter((o) => o.trim() !== ""),
    serve,
    out: process.stderr,
  });
  const paths = demoPaths(home);
  writeFileSync(paths.summary, `${JSON.stringify(summaryJson(result), null, 2)}\n`);
  writeFileSync(paths.report, demoReportHtml(result));
  console.log(`\n${summaryTable(result)}\n\nsummary: ${paths.summary}\nreport:  ${paths.report}`);
  if (!serve) {
    await server.close();
    return 0;
  }
  const c = server.credentials;
  console.log(
    `\nArc is still running at ${server.url} (Ctrl-C stops it)\n  dashboard: ${server.url}/ui (sign in with a key below)\n  tenant ${c?.tenant} key: ${c?.tenantKey}\n  admin key: ${c?.adminKey}\n  e.g. ARC_URL=${server.url} ARC_API_KEY=${c?.tenantKey} npx arc models ls`,
  );
  await new Promise<void>((resolve) => process.once("SIGINT", resolve));
  await server.close();
  return 0;
}

/** `arc demo`: the whole loop — traffic, failures, datasets, DPO, validation, canary — with a report. */
export const demoCommand: Command = {
  name: "demo",
  summary: "run the whole loop on a simulated agent and write a report (--serve keeps Arc running)",
  help: HELP,
  flags: {
    minutes: "string",
    seed: "string",
    home: "string",
    "baseline-rate": "string",
    "training-rate": "string",
    rate: "string",
    "sft-steps": "string",
    "train-steps": "string",
    "base-model": "string",
    "max-tokens": "string",
    "train-set": "string",
    serve: "boolean",
  },
  run: demo,
};
