// npm run bench:demo -- --base-model <an imported model> [--runs 1] [--minutes 45]: `arc demo` on a pretrained model
// `arc models import` wrote (e.g. .arc/models/smollm2-135m-instruct), run in this checkout, where the imported model
// and the Python venv of its torch engine are. Writes bench/results/demo-real.json: each run's live failure rate
// before and after, patterns worse, NDR on validation and on the general slice, wall and training seconds, and the
// load average at its start and end (the machine is shared).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { toOpenAiTools } from "@arc/core";
import { toolcallFamily } from "@arc/core/families";
import { EmbeddedInferenceEngine, loadChatTokenizer, TorchInferenceEngine } from "@arc/engine";
import { hfReference } from "../packages/engine/src/torch/hf-reference.ts";
import { loadAverages, writeBenchResults } from "./results-file.ts";

/** Production prompts of the export check, and the tokens each decodes greedily. */
const EXPORT_PROMPTS = 32;
const EXPORT_TOKENS = 48;

const ROOT = resolve(import.meta.dirname, "..");

/** One `arc demo --base-model` run, as bench/results/demo-real.json records it in `runs[]`. */
export interface RealBaseRun {
  commit: string;
  exit_code: number;
  failure_rate_before: number | null;
  failure_rate_after: number | null;
  patterns_worse: number | null;
  ndr: number | null;
  general_ndr: number | null;
  wall_s: number | null;
  train_s: number | null;
  /** LoRA steps the candidate trained, and seconds a step. */
  train_steps: number | null;
  train_seconds_per_step: number | null;
  new_model_served: boolean;
  /** A new model in production at half the base's live failure rate or less, with no pattern worse. */
  target_met: boolean;
  /** Each model version: its status at the end and its judged calls over the demo. */
  versions: { name: string; status: string; n: number; failure_rate: number | null }[];
  load_average_start: number[];
  load_average_end: number[];
  /** The demo's last lines when it exited non-zero; null otherwise. */
  error: string | null;
}

/** Runs `arc demo` on `baseModel` for `minutes` in a fresh home; resolves with its exit code. */
function runDemo(baseModel: string, minutes: number, home: string): Promise<number> {
  const log = join(home, "demo.log");
  const command = `node bin/arc.mjs demo --base-model '${baseModel}' --minutes ${minutes} --home '${home}' > '${log}' 2>&1`;
  return new Promise((done) => {
    const child = spawn("bash", ["-c", command], { cwd: ROOT, stdio: "ignore" });
    child.on("exit", (code) => done(code ?? 1));
  });
}

/** A finished run's figures from its summary.json (or its log's tail when it wrote none). */
function readRun(home: string, exitCode: number, loadStart: number[]): RealBaseRun {
  const path = join(home, "summary.json");
  const s = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : {};
  const versions = ((s.versions ?? []) as RealBaseRun["versions"]).map((v) => ({
    name: v.name,
    status: v.status,
    n: v.n,
    failure_rate: v.failure_rate,
  }));
  const production = versions.find((v) => v.status === "promoted");
  const newModelServed = production !== undefined && production.name !== "toolcall-base";
  const before = s.base_failure_rate ?? null;
  const after = s.final_failure_rate ?? null;
  const log = existsSync(join(home, "demo.log")) ? readFileSync(join(home, "demo.log"), "utf8") : "";
  return {
    commit: execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim(),
    exit_code: exitCode,
    failure_rate_before: before,
    failure_rate_after: after,
    patterns_worse: s.patterns_worse ?? null,
    ndr: s.ndr ?? null,
    general_ndr: s.general_ndr ?? null,
    wall_s: s.wall_s ?? null,
    train_s: s.train_s ?? null,
    train_steps: s.warmup_steps ?? null,
    train_seconds_per_step: s.warmup_seconds_per_step ?? null,
    new_model_served: newModelServed,
    target_met:
      newModelServed && before !== null && after !== null && after <= before / 2 && s.patterns_worse === 0,
    versions,
    load_average_start: loadStart,
    load_average_end: loadAverages(),
    error: exitCode === 0 ? null : log.split("\n").slice(-20).join("\n"),
  };
}

/** The LoRA run's last checkpoint in a demo's home (merged weights, the adapter in PEFT's layout in `adapter/`). */
function candidateCheckpoint(home: string): string | null {
  const runs = join(home, "runs");
  if (!existsSync(runs)) return null;
  const run = readdirSync(runs).find((r) => r.startsWith("demo-lora-"));
  if (!run || !existsSync(join(runs, run, "checkpoints"))) return null;
  const steps = readdirSync(join(runs, run, "checkpoints"))
    .filter((d) => /^step-\d+$/.test(d))
    .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
  return steps.length === 0 ? null : join(runs, run, "checkpoints", steps[steps.length - 1]);
}

/**
 * The export check: the candidate's checkpoint loads in transformers (merged weights) and in PEFT (its adapter on
 * the base), and both greedy-decode the same tokens as Arc's embedded and torch engines on 32 production prompts,
 * the agent's tools in each.
 */
async function exportCheck(baseModel: string, checkpoint: string) {
  const tokenizer = await loadChatTokenizer(checkpoint);
  const tools = toOpenAiTools(toolcallFamily.tools) as unknown as object[];
  const tasks = toolcallFamily.generate({ split: "production", seed: 4242, count: EXPORT_PROMPTS });
  const prompts = tasks.map((t) => tokenizer.render(toolcallFamily.prompt(t), { tools }));
  const greedy = prompts.map((promptTokens) => ({ promptTokens, maxTokens: EXPORT_TOKENS }));
  const merged = await hfReference({ modelDir: checkpoint, greedy, threads: 2 });
  const peft = await hfReference({
    modelDir: baseModel,
    adapters: [join(checkpoint, "adapter")],
    greedy,
    threads: 2,
  });
  const requests = greedy.map((g) => ({ ...g, temperature: 0 }));
  const embedded = await EmbeddedInferenceEngine.load(checkpoint);
  const embeddedTokens = (await embedded.generate(requests)).map((r) => r.outputTokens);
  await embedded.close();
  const torch = await TorchInferenceEngine.load(checkpoint, { device: "cpu", threads: 2 });
  const torchTokens = (await torch.generate(requests)).map((r) => r.outputTokens);
  await torch.close();
  const same = (a: number[][], b: number[][]) =>
    a.filter((x, i) => JSON.stringify(x) === JSON.stringify(b[i])).length;
  return {
    prompts: EXPORT_PROMPTS,
    new_tokens: EXPORT_TOKENS,
    transformers_merged_vs_embedded_identical: same(merged.greedy, embeddedTokens),
    transformers_merged_vs_torch_identical: same(merged.greedy, torchTokens),
    peft_adapter_vs_embedded_identical: same(peft.adapterGreedy[0] ?? [], embeddedTokens),
    peft_adapter_vs_merged_identical: same(peft.adapterGreedy[0] ?? [], merged.greedy),
  };
}

/** The export check on a run's candidate, or why it could not run. */
async function exportCheckOf(baseModel: string, home: string, candidateStatus: string | null) {
  const checkpoint = candidateCheckpoint(home);
  if (checkpoint === null)
    return { candidate_status: candidateStatus, error: "the run left no LoRA checkpoint" };
  try {
    return { candidate_status: candidateStatus, ...(await exportCheck(baseModel, checkpoint)) };
  } catch (error) {
    return {
      candidate_status: candidateStatus,
      error: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Makes `runs` runs of `minutes` on `baseModel` one after the other and writes demo-real.json; returns its path. */
export async function benchImportedBase(baseModel: string, runs: number, minutes: number): Promise<string> {
  if (!existsSync(join(baseModel, "provenance.json")))
    throw new Error(
      `${baseModel}: no provenance.json; import a model first (npx arc models import smollm2-135m-instruct)`,
    );
  const made: RealBaseRun[] = [];
  let lastHome = "";
  for (let i = 1; i <= runs; i++) {
    const home = mkdtempSync(join(tmpdir(), `arc-demo-real-${i}-`));
    const loadStart = loadAverages();
    console.log(`run ${i} of ${runs}: arc demo --base-model ${baseModel} --minutes ${minutes} in ${home}`);
    made.push(readRun(home, await runDemo(baseModel, minutes, home), loadStart));
    console.log(JSON.stringify(made.at(-1)));
    lastHome = home;
  }
  const candidate = made.at(-1)?.versions.find((v) => v.name.startsWith("toolcall-lora-"));
  console.log(`export check on the last run's candidate (${candidate?.status ?? "none"})`);
  const exported = await exportCheckOf(baseModel, lastHome, candidate?.status ?? null);
  console.log(JSON.stringify(exported));
  const provenance = JSON.parse(readFileSync(join(baseModel, "provenance.json"), "utf8"));
  return writeBenchResults("demo-real", {
    base_model: provenance.model ?? baseModel,
    minutes,
    runs_count: made.length,
    target_met_runs: made.filter((r) => r.target_met).length,
    runs: made,
    export_check: { ...exported, load_average_end: loadAverages() },
  });
}
