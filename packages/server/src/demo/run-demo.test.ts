import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, mock } from "node:test";
import { fileURLToPath } from "node:url";
import { toolcallFamily } from "@arc/core/families";
import { configForSize, initWeights, loadChatTokenizer, writeHfCheckpoint } from "@arc/engine";
import { RunDir } from "@arc/rl";
import { main } from "../cli/main.ts";
import { getRun, listRuns } from "../orchestrator/run-store.ts";
import { listModelVersions } from "../store/model-registry.ts";
import { openDatabase } from "../store/open-database.ts";
import { listTenants } from "../store/tenants.ts";
import { longestAgentPrompt } from "./production-agent.ts";
import { demoPaths } from "./run-demo.ts";

/**
 * `arc demo` end to end on a tiny, freshly initialised model and a 36-second budget: every phase runs for real
 * (server, SDK agent through the gateway, detection, datasets, `arc train` in a child process, validator, deployer),
 * only smaller. What the figures are is the real demo's business; here the plumbing and the files are checked.
 */
describe("arc demo (tiny model, 36-second budget)", () => {
  let dir: string;
  let home: string;
  let stderr = "";
  let code: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "arc-demo-"));
    home = join(dir, "home");
    const model = join(dir, "tiny");
    const config = configForSize("tiny");
    await writeHfCheckpoint(model, config, initWeights(config, 0));
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      stderr += String(chunk);
      return true;
    }) as typeof process.stderr.write;
    try {
      code = await main([
        "demo",
        "--home",
        home,
        "--minutes",
        "0.6",
        "--sft-steps",
        "2",
        "--train-steps",
        "1",
        "--baseline-rate",
        "8",
        "--training-rate",
        "2",
        "--rate",
        "6",
        "--base-model",
        model,
        "--max-tokens",
        "8",
        "--train-set",
        "data.evalCount=4,trainer.promptsPerStep=2,trainer.samplesPerPrompt=2",
      ]);
    } finally {
      process.stderr.write = write;
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("exits 0 and runs every phase, each announced on its own line", () => {
    assert.equal(code, 0, stderr.slice(-2000));
    for (const phase of [
      "platform",
      "baseline traffic",
      "failures → datasets",
      "SFT warm-up",
      "train (semi-online DPO)",
      "validate",
      "canary",
      "measure",
    ]) {
      assert.match(stderr, new RegExp(`✓ ${phase.replace(/[()]/g, "\\$&")} \\(\\d+ s\\)`), `phase ${phase}`);
    }
    assert.match(stderr, /gates: \{"minFunctional":0/, "the gates used are printed");
    assert.match(
      stderr,
      /SFT warm-up: [12] steps?: a step took [\d.]+ s and a judgement of 4 tasks [\d.]+ s in a \d+ s probe( \(--sft-steps 2 caps it\))?; it stops sooner once the held-out failure rate's 95% upper bound is at most [\d.]+ \(judged on 4 tasks at step [12], every [12] steps after it and at its end\)/,
      "the warm-up is planned from a timed probe and stops at its held-out target",
    );
    assert.match(stderr, /✓ SFT warm-up \(\d+ s\): run demo-sft-\S+: \d of [12] planned steps/);
    assert.match(
      stderr,
      /the agent sends 2 conversation\(s\) a second while the candidate trains on 2 threads, 6 after/,
    );
  });

  it("writes summary.json with exactly the figures' keys and a version per model", () => {
    const summary = JSON.parse(readFileSync(demoPaths(home).summary, "utf8")) as Record<string, unknown>;
    assert.deepEqual(Object.keys(summary).sort(), [
      "base_failure_rate",
      "final_failure_rate",
      "general_ndr",
      "ndr",
      "patterns_fixed",
      "patterns_worse",
      "rollbacks",
      "train_s",
      "versions",
      "wall_s",
      "warmup_planned_steps",
      "warmup_replans",
      "warmup_seconds_per_step",
      "warmup_steps",
    ]);
    assert.equal(typeof summary.base_failure_rate, "number");
    assert.ok((summary.base_failure_rate as number) >= 0 && (summary.base_failure_rate as number) <= 1);
    assert.equal(typeof summary.wall_s, "number");
    // the budget holds: a 36-second plan plus start-up, on a machine that may be running other tests too (a
    // demo that ignored --minutes would run its default 14)
    assert.ok((summary.wall_s as number) < 300, `wall_s ${summary.wall_s}`);
    assert.equal(typeof summary.rollbacks, "number");
    const versions = summary.versions as { name: string; n: number; status: string }[];
    assert.equal(versions.length, 2, "the base model and the trained candidate");
    assert.ok(
      versions.some((v) => v.name === "toolcall-base" && v.n > 0),
      "the base model served judged calls",
    );
    if (!versions.some((v) => v.name !== "toolcall-base" && v.status === "promoted")) {
      assert.equal(summary.final_failure_rate, summary.base_failure_rate, "one model, one figure");
      assert.match(readFileSync(demoPaths(home).report, "utf8"), /no new model in production/);
    }
  });

  it("trains DPO from the SFT warm-up's checkpoint", () => {
    const runs = readdirSync(join(home, "runs"));
    const warmup = runs.find((r) => r.startsWith("demo-sft-"));
    const dpo = runs.find((r) => r.startsWith("demo-") && r !== warmup);
    assert.ok(warmup && dpo, `runs: ${runs.join(", ")}`);
    assert.match(readFileSync(join(home, "runs", warmup, "recipe.yaml"), "utf8"), /algorithm: sft/);
    const dpoRecipe = readFileSync(join(home, "runs", dpo, "recipe.yaml"), "utf8");
    assert.match(dpoRecipe, /algorithm: dpo/);
    assert.ok(
      dpoRecipe.includes(join(home, "runs", warmup, "checkpoints")),
      "model.path is the warm-up's checkpoint",
    );
  });

  it("records the warm-up and the DPO run in the product's run store, where the candidate's lineage finds them", async () => {
    const db = await openDatabase({ home });
    try {
      const [tenant] = await listTenants(db);
      const runs = await listRuns(db, tenant.id);
      const warmup = runs.find((r) => r.id.startsWith("demo-sft-"));
      const dpo = runs.find((r) => r.id.startsWith("demo-") && !r.id.startsWith("demo-sft-"));
      assert.ok(warmup && dpo, `runs in the store: ${runs.map((r) => r.id).join(", ") || "none"}`);
      const [candidate] = (await listModelVersions(db, tenant.id)).filter((m) => m.lineage.runId === dpo.id);
      assert.ok(candidate, "the DPO run's candidate names it as its run");
      assert.equal((await getRun(db, tenant.id, candidate.lineage.runId as string)).id, dpo.id);
      assert.equal(dpo.candidateId, candidate.id);
      for (const [run, recipe, kinds] of [
        [warmup, "recipes/toolcall-sft.yaml", ["prompts"]],
        [dpo, "recipes/toolcall-dpo.yaml", ["prompts", "eval"]],
      ] as const) {
        assert.equal(run.trigger, "demo");
        assert.equal(run.status, "succeeded", `${run.id}: ${run.error}`);
        assert.ok(run.recipePath.endsWith(recipe), run.recipePath);
        assert.match(run.recipeHash ?? "", /^sha256:[0-9a-f]{64}$/);
        assert.ok(run.step >= 1 && run.totalSteps !== null, `${run.id} step ${run.step}/${run.totalSteps}`);
        assert.ok(run.endedAt !== null && run.baseModelId !== null);
        assert.equal(typeof run.metrics.elapsedS, "number", JSON.stringify(run.metrics));
        for (const kind of kinds)
          assert.ok(
            run.datasets.some((d) => d.kind === kind),
            `${run.id} lists its ${kind} dataset`,
          );
        assert.ok(run.patterns.length > 0 && run.sourceTraceCount > 0);
        const records = await new RunDir(join(run.runsDir, run.id)).readMetrics();
        assert.equal(records.at(-1)?.step, run.step, "its artifact folder holds the steps the row shows");
      }
    } finally {
      await db.close();
    }
  });

  it("writes a self-contained report.html with its four charts, the verdict rule, and no paths or commands", () => {
    const path = demoPaths(home).report;
    assert.ok(existsSync(path));
    const html = readFileSync(path, "utf8");
    assert.equal((html.match(/<svg /g) ?? []).length, 4);
    assert.doesNotMatch(html, /<script|<link|src="http/);
    assert.match(html, /id="verdict-rule"/);
    assert.ok(!html.includes(dir), "no temporary path on the page");
    assert.doesNotMatch(html, /arc train/);
  });
});

describe("arc demo with a BPE base model", () => {
  const bpe = fileURLToPath(new URL("../../../../models/toolcall-bpe", import.meta.url));

  it("fits the agent's longest prompt, its tools included, and an answer in the shipped BPE model's context", async () => {
    const context = JSON.parse(readFileSync(join(bpe, "config.json"), "utf8")).max_position_embeddings;
    const tasks = toolcallFamily.generate({ split: "production", seed: 1, count: 256 });
    const longest = longestAgentPrompt(await loadChatTokenizer(bpe), tasks);
    assert.ok(longest + 96 <= context, `${longest} + 96 tokens in a context of ${context}`);
  });

  it("names the prompt that does not fit a model's context, and leaves the demo's last files alone", async () => {
    const home = mkdtempSync(join(tmpdir(), "arc-demo-refused-"));
    writeFileSync(join(home, "summary.json"), "{}\n");
    const small = join(home, "small-context");
    cpSync(bpe, small, { recursive: true });
    const config = JSON.parse(readFileSync(join(small, "config.json"), "utf8"));
    writeFileSync(join(small, "config.json"), JSON.stringify({ ...config, max_position_embeddings: 128 }));
    const err = mock.method(console, "error", () => {});
    try {
      assert.equal(await main(["demo", "--home", home, "--base-model", small]), 2);
      const printed = err.mock.calls.map((c) => c.arguments.join(" ")).join("\n");
      assert.match(
        printed,
        /chat template renders the agent's prompt with its tools in \d+ tokens \(the longest of 256\), which with 96 to answer exceeds its context of 128/,
      );
      assert.equal(readFileSync(join(home, "summary.json"), "utf8"), "{}\n");
    } finally {
      err.mock.restore();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
