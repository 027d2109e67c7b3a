/**
 * Makes models/toolcall-judge: the `toolcall` base model fine-tuned by SFT to judge a `toolcall` agent's answers
 * against the rubric shipped beside it, writing the judge's structured verdict. Its data are the base model's own
 * answers to production requests (greedy, as the demo's agent asks, and sampled at temperature 1 for more failures),
 * labelled by the family's verifier; the model trains by recipes/toolcall-judge-sft.yaml.
 *
 *   node --import tsx scripts/make-judge-model.ts [--tasks 2000] [trainer.steps=400 ...]
 *
 * Writes models/toolcall-judge (the checkpoint, rubric.json) and its judge.json (how it was made). Its agreement with
 * the verifier is measured by `npm run bench:judges`, on held-out traces this script never reads.
 */
import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseRubric } from "@arc/core";
import { generateToolcallTasks } from "@arc/core/families";
import { EmbeddedInferenceEngine, startEngineServer } from "@arc/engine";
import { loadRecipe, startRun } from "@arc/rl";
import { engineFactory } from "@arc/rl/embedded";
import {
  judgeExample,
  sampleLabelledTraces,
} from "../packages/server/src/judges/__fixtures__/toolcall-judge-data.ts";
import {
  TOOLCALL_JUDGE_RUBRIC,
  TOOLCALL_JUDGE_TRAIN_SEED,
} from "../packages/server/src/judges/__fixtures__/toolcall-judge-rubric.ts";

const args = process.argv.slice(2);
const tasksFlag = args.indexOf("--tasks");
const taskCount = tasksFlag >= 0 ? Number(args[tasksFlag + 1]) : 2000;
const overrides = args.filter((a) => a.includes("="));
const base = resolve("models/toolcall-base");
const out = resolve("models/toolcall-judge");
const log = (line: string) => console.error(`[make-judge-model] ${line}`);

const rubric = parseRubric(TOOLCALL_JUDGE_RUBRIC);
const work = await mkdtemp(join(tmpdir(), "arc-judge-model-"));
const server = await startEngineServer(await EmbeddedInferenceEngine.load(base), {
  modelId: "toolcall-base",
  apiKey: "make-judge",
});
const sampled = Date.now();
const traces = await sampleLabelledTraces({
  baseURL: server.baseURL,
  apiKey: "make-judge",
  model: "toolcall-base",
  tasks: generateToolcallTasks({ split: "production", seed: TOOLCALL_JUDGE_TRAIN_SEED, count: taskCount }),
  temperatures: [0, 1],
});
await server.close();
const failed = traces.filter((t) => t.label.failed);
const classes: Record<string, number> = {};
for (const t of failed) classes[t.label.class ?? "?"] = (classes[t.label.class ?? "?"] ?? 0) + 1;
log(
  `${traces.length} labelled answers in ${((Date.now() - sampled) / 1000).toFixed(0)} s, ${failed.length} failed: ${JSON.stringify(classes)}`,
);
const examplesPath = join(work, "judge-examples.jsonl");
await writeFile(examplesPath, `${traces.map((t) => JSON.stringify(judgeExample(rubric, t))).join("\n")}\n`);

const recipe = await loadRecipe("recipes/toolcall-judge-sft.yaml", [
  `model.path=${base}`,
  `data.examples=${examplesPath}`,
  ...overrides,
]);
const started = Date.now();
const result = await startRun(recipe, {
  runsDir: join(work, "runs"),
  factory: engineFactory,
  hooks: {
    onStep(r) {
      if (r.step % 25 === 0)
        log(`step ${r.step}: loss ${r.loss?.toFixed(4)} (${r.tokensPerSecond.toFixed(0)} tokens/s)`);
    },
  },
});
if (result.status !== "completed" || !result.lastCheckpoint)
  throw new Error(`the judge's run ended ${result.status}`);
const minutes = (Date.now() - started) / 60_000;
log(`trained ${result.step} steps in ${minutes.toFixed(1)} min`);

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
const final = join(result.dir, result.lastCheckpoint);
for (const file of [
  "config.json",
  "generation_config.json",
  "model.safetensors",
  "tokenizer.json",
  "tokenizer_config.json",
])
  await cp(join(final, file), join(out, file)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
await writeFile(join(out, "rubric.json"), `${JSON.stringify(TOOLCALL_JUDGE_RUBRIC, null, 2)}\n`);
const commit = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { encoding: "utf8" }).trim();
await writeFile(
  join(out, "judge.json"),
  `${JSON.stringify(
    {
      what: "the toolcall base model fine-tuned by SFT to judge toolcall answers against rubric.json",
      command: `node --import tsx scripts/make-judge-model.ts --tasks ${taskCount}${overrides.map((o) => ` ${o}`).join("")}`,
      commit,
      recipe: {
        ...recipe,
        model: { ...recipe.model, path: "models/toolcall-base" },
        data: { ...recipe.data, examples: "the labelled answers below, as this script writes them" },
      },
      data: {
        split: "production",
        seed: TOOLCALL_JUDGE_TRAIN_SEED,
        tasks: taskCount,
        temperatures: [0, 1],
        examples: traces.length,
        failed: failed.length,
        classes,
      },
      steps: result.step,
      minutes: Number(minutes.toFixed(1)),
    },
    null,
    2,
  )}\n`,
);
await rm(work, { recursive: true, force: true });
log(`wrote ${out}`);
