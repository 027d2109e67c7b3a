import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DEFAULT_BASE_MODEL } from "@arc/core";
import { configForSize, initWeights, writeHfCheckpoint } from "@arc/engine";
import { loadRecipe } from "@arc/rl";
import { main } from "../cli/main.ts";
import type { DemoDatasets } from "./demo-datasets.ts";
import type { DemoOptions } from "./demo-options.ts";
import { DEMO_GATES, demoPlanFor, IMPORTED_PLAN, LORA_SFT_RECIPE, TOY_PLAN } from "./demo-plan.ts";
import { loraOverrides } from "./lora-candidate.ts";
import { REPO_ROOT } from "./train-candidate.ts";

/** The provenance.json `arc models import` writes beside an imported checkpoint, as far as the plan reads it. */
const IMPORTED_PROVENANCE = {
  model: "HuggingFaceTB/SmolLM2-135M-Instruct",
  format: "gguf",
  importer: { module: "arc_torch.model_import" },
};

/** Runs `arc <args>` in this process; returns its exit code and what it wrote to stderr and stdout. */
async function arc(args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const capture = (chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  };
  const [stderr, stdout] = [process.stderr.write, process.stdout.write];
  process.stderr.write = capture as typeof process.stderr.write;
  process.stdout.write = capture as typeof process.stdout.write;
  try {
    return { code: await main(args), out };
  } finally {
    process.stderr.write = stderr;
    process.stdout.write = stdout;
  }
}

describe("arc demo's plan for its base model", () => {
  let dir: string;
  let imported: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "arc-demo-plan-"));
    imported = join(dir, "imported");
    const config = configForSize("tiny");
    await writeHfCheckpoint(imported, config, initWeights(config, 0));
    writeFileSync(join(imported, "provenance.json"), JSON.stringify(IMPORTED_PROVENANCE));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the toy plan (warm-up and DPO on the embedded engine, the shipped defaults) for Arc's own base", () => {
    const plan = demoPlanFor(join(REPO_ROOT, DEFAULT_BASE_MODEL));
    assert.equal(plan, TOY_PLAN);
    assert.deepEqual(plan.defaults, { baselineRate: 20, trainingRate: 1, rate: 20, maxTokens: 96 });
    assert.deepEqual(plan.canary, {}, "the default canary policy");
    assert.equal(plan.gates, DEMO_GATES);
  });

  it("picks LoRA SFT on the torch engine for a checkpoint `arc models import` wrote", async () => {
    const plan = demoPlanFor(imported);
    assert.equal(plan.base, "imported");
    assert.equal(plan.importedModel, IMPORTED_PROVENANCE.model);
    assert.match(plan.training, /LoRA adapters on the torch engine/);
    assert.equal(plan.gates.minGeneralNdr, 0.95, "the general slice gates capability retention");
    assert.deepEqual(plan.defaults, IMPORTED_PLAN.defaults);
    // the recipe as the demo's LoRA run resolves it
    const options = { seed: 3, sftSteps: 30, extraOverrides: ["trainer.learningRate=0.0005"] } as DemoOptions;
    const datasets = {
      warmupPoolPath: join(dir, "pool.jsonl"),
      poolPath: join(dir, "all.jsonl"),
    } as DemoDatasets;
    writeFileSync(datasets.warmupPoolPath as string, "");
    const recipe = await loadRecipe(
      join(REPO_ROOT, LORA_SFT_RECIPE),
      loraOverrides(options, imported, datasets),
    );
    assert.equal(recipe.engine.kind, "torch");
    assert.deepEqual(recipe.engine.lora, {
      rank: 16,
      alpha: 32,
      targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    });
    assert.equal(recipe.trainer.algorithm, "sft");
    assert.equal(recipe.model.path, imported);
    assert.equal(recipe.data.prompts, datasets.warmupPoolPath, "it trains on the baseline traffic's prompts");
    assert.equal(recipe.data.evalCount, 0, "the validator judges the candidate, not the run");
    assert.equal(recipe.trainer.steps, 30);
    assert.equal(recipe.trainer.learningRate, 0.0005, "--train-set overrides come last");
  });

  it("is not taken in by a provenance.json that no import wrote", () => {
    const own = join(dir, "own");
    mkdirSync(own);
    writeFileSync(join(own, "provenance.json"), JSON.stringify({ source: "scripts/make-base-models.ts" }));
    assert.equal(demoPlanFor(own), TOY_PLAN);
  });

  it("says in --help how an imported base trains", async () => {
    const { code, out } = await arc(["demo", "--help"]);
    assert.equal(code, 0);
    assert.match(out, /arc models import smollm2-135m-instruct/);
    assert.match(out, /LoRA adapters on the torch engine \(recipes\/toolcall-lora-sft\.yaml\)/);
  });

  it("refuses a --base-model folder that is not a checkpoint, naming what it lacks, before starting anything", async () => {
    const notCheckpoint = join(dir, "not-a-checkpoint");
    mkdirSync(notCheckpoint);
    writeFileSync(join(notCheckpoint, "model.gguf"), "not a checkpoint");
    const home = join(dir, "home");
    const { code, out } = await arc([
      "demo",
      "--base-model",
      notCheckpoint,
      "--home",
      home,
      "--minutes",
      "1",
    ]);
    assert.equal(code, 2);
    assert.match(out, /arc demo: base model: expected a checkpoint \(config\.json\) in .*not-a-checkpoint/);
    assert.equal(existsSync(home), false, "no demo home was made");
  });
});
