/**
 * Makes models/toolcall-bpe: a small Qwen2-architecture model with a byte-level BPE tokenizer, trained by SFT on the
 * PyTorch engine. The tokenizer is trained with HF `tokenizers` on text of Arc's own task families; the model starts
 * from random weights and trains by recipes/toolcall-bpe-sft.yaml.
 *
 *   node --import tsx scripts/make-bpe-model.ts [--vocab 1024] [trainer.steps=1500 ...]
 *
 * Writes models/toolcall-bpe (config, weights, tokenizer files, generation config) and its base-model.json (how it
 * was made and what it scored). Needs the project's Python venv (npm test makes it, or node scripts/python-env.mjs).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { FamilyTool, Task, TaskFamily } from "@arc/core";
import {
  arithFamily,
  generateArithTasks,
  generateOrderdeskTasks,
  generateToolcallTasks,
  orderdeskFamily,
  toolcallFamily,
} from "@arc/core/families";
import { TORCH_WORKER_DIR, torchPython } from "@arc/engine";
import { loadRecipe, startRun } from "@arc/rl";
import { engineFactory } from "@arc/rl/embedded";

const args = process.argv.slice(2);
const vocabFlag = args.indexOf("--vocab");
const vocab = vocabFlag >= 0 ? Number(args[vocabFlag + 1]) : 1024;
const overrides = args.filter((a) => a.includes("="));
const out = resolve("models/toolcall-bpe");
const log = (line: string) => console.error(`[make-bpe-model] ${line}`);

/**
 * The lines of the tools section the chat template writes for a family's tools (arc_tools/make_bpe_model.py), each
 * tool as its signature `name(arg, optional?)`.
 */
function toolsSection(family: TaskFamily): string[] {
  if (!family.tools?.length) return [];
  const signature = ({ name, parameters }: FamilyTool) => {
    const args = Object.keys(parameters.properties ?? {}).map((n) =>
      parameters.required?.includes(n) ? n : `${n}?`,
    );
    return `${name}(${args.join(", ")})`;
  };
  return ["# Tools", ...family.tools.map(signature)];
}

/** Corpus lines: every message of each task's prompt, its tools section, and its reference answers. */
function corpusLines(family: TaskFamily, tasks: Task[]): string[] {
  const tools = toolsSection(family);
  return tasks.flatMap((task) => [
    ...family.prompt(task).map((m) => m.content),
    ...tools,
    ...family.reference(task),
  ]);
}

const work = await mkdtemp(join(tmpdir(), "arc-bpe-model-"));
const corpus = join(work, "corpus.txt");
const lines = [
  ...corpusLines(toolcallFamily, generateToolcallTasks({ split: "train", seed: 7, count: 20_000 })),
  ...corpusLines(arithFamily, generateArithTasks({ split: "train", seed: 7, count: 4_000 })),
  ...corpusLines(orderdeskFamily, generateOrderdeskTasks({ split: "train", seed: 7, count: 2_000 })),
];
await writeFile(corpus, `${lines.join("\n")}\n`);
log(`corpus: ${lines.length} lines`);
const init = join(work, "init");
const made = spawnSync(
  torchPython(),
  ["-m", "arc_tools.make_bpe_model", "--corpus", corpus, "--out", init, "--vocab", String(vocab)],
  { cwd: TORCH_WORKER_DIR, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
);
if (made.status !== 0) throw new Error(`python -m arc_tools.make_bpe_model failed (exit ${made.status})`);
log(`initialized: ${made.stdout.trim()}`);

const recipe = await loadRecipe("recipes/toolcall-bpe-sft.yaml", [`model.path=${init}`, ...overrides]);
const started = Date.now();
const result = await startRun(recipe, {
  runsDir: join(work, "runs"),
  factory: engineFactory,
  hooks: {
    onStep(record) {
      if (record.step % 50 === 0 || record.evalFailureRate !== undefined)
        log(
          `step ${record.step}: loss ${record.loss?.toFixed(3)}${record.evalFailureRate === undefined ? "" : `, held-out failure rate ${record.evalFailureRate.toFixed(3)}`}`,
        );
    },
  },
});
if (result.status !== "completed" || !result.lastCheckpoint)
  throw new Error(`training ended ${result.status}`);
const final = join(result.dir, result.lastCheckpoint);
await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
for (const file of [
  "config.json",
  "generation_config.json",
  "model.safetensors",
  "tokenizer.json",
  "tokenizer_config.json",
])
  await cp(join(final, file), join(out, file));
const evals = result.records.filter((r) => r.evalFailureRate !== undefined);
const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
await writeFile(
  join(out, "base-model.json"),
  `${JSON.stringify(
    {
      made: `node --import tsx scripts/make-bpe-model.ts ${args.join(" ")}`.trim(),
      commit,
      tokenizer: {
        kind: "byte-level BPE",
        vocab: JSON.parse(await readFile(join(out, "config.json"), "utf8")).vocab_size,
        corpusLines: lines.length,
      },
      recipe: JSON.parse(JSON.stringify(recipe)),
      minutes: Math.round((Date.now() - started) / 600) / 100,
      evalFailureRate: evals.map((r) => ({ step: r.step, failureRate: r.evalFailureRate })),
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${out} (${((Date.now() - started) / 60_000).toFixed(1)} min of training)`);
await rm(work, { recursive: true, force: true });
