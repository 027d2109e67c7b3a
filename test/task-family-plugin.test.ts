import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import {
  buildEvalSet,
  chatExampleOf,
  DetectorRegistry,
  detectAndCluster,
  FailureClusterer,
  generateTasks,
  type Task,
  taskFamilies,
  taskToRow,
  toChatJsonl,
  toDatasetJsonl,
  toVerlParquet,
} from "@arc/core";
import { loadRecipe, loadTaskFamilies } from "@arc/rl";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import { AnswerBookEngine } from "../packages/server/src/deploy/__fixtures__/answer-book-engine.ts";
import { SUPPORT_FAMILY_SPEC } from "../packages/server/src/families/__fixtures__/support-family.ts";
import { embeddedBackend } from "../packages/server/src/gateway/model-backend.ts";
import { judgeModels } from "../packages/server/src/validate/judge-models.ts";

const run = promisify(execFile);
const FAMILY = resolve("examples/unit-convert/family.ts");
const ARC = resolve("bin/arc.mjs");

/** Runs the repository's `arc` with the given arguments and environment; resolves to its exit code and output. */
async function arc(args: string[], env: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [ARC, ...args], {
      env: { ...process.env, ARC_FAMILIES: "", ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A trace of the unit-conversion agent answering `task` with `output`, as an SDK would send it. */
function traceOf(task: Task, output: string) {
  return {
    id: `tr-${task.id}`,
    startedAt: "2026-11-01T10:00:00.000Z",
    env: task.env,
    input: { question: task.question },
    metadata: { solution: task.solution },
    steps: [
      {
        id: "llm0",
        kind: "llm",
        startedAt: "2026-11-01T10:00:00.000Z",
        latencyMs: 300,
        llm: {
          modelVersion: "base-v1",
          messages: [{ role: "user", content: task.question }],
          output: { content: output },
          finishReason: "stop",
        },
      },
    ],
  };
}

describe("a task family registered by path at run time", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "arc-family-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is unknown to recipes and the CLI until registered, then found by both", async () => {
    assert.equal(taskFamilies.find("unitconv"), undefined);
    const bare = join(dir, "bare.yaml");
    await writeFile(bare, "data:\n  env: unitconv\n");
    await assert.rejects(
      loadRecipe(bare),
      /data\.env: expected one of toolcall, arith, orderdesk, got "unitconv"/,
    );

    const listed = join(dir, "listed.yaml");
    await writeFile(listed, `families: [${JSON.stringify(FAMILY)}]\ndata:\n  env: unitconv\n`);
    const recipe = await loadRecipe(listed);
    assert.equal(recipe.data.env, "unitconv");
    assert.deepEqual(recipe.families, [FAMILY]);
    assert.equal(taskFamilies.find("unitconv")?.tools?.[0].name, "convert_units");

    const plain = await arc(["--help"]);
    assert.match(plain.stdout, /Task families: toolcall, arith, orderdesk \(/);
    const flagged = await arc(["--family", FAMILY, "--help"]);
    assert.match(flagged.stdout, /Task families: toolcall, arith, orderdesk, unitconv \(/);
    const fromEnv = await arc(["families", "--json"], { ARC_FAMILIES: FAMILY });
    const row = JSON.parse(fromEnv.stdout).find((f: { env: string }) => f.env === "unitconv");
    assert.deepEqual(row.tools, ["convert_units"]);
    assert.equal(row.verifier, true);
  });

  it("refuses a module that does not export a family, naming the module and the field", async () => {
    const broken = join(dir, "broken.mjs");
    await writeFile(broken, "export default { env: 'Bad Env', prompt() {}, reference() {} };\n");
    await assert.rejects(loadTaskFamilies([broken]), (error: Error) => {
      assert.match(error.message, /family module .*broken\.mjs: env: expected an id of lowercase letters/);
      return true;
    });
    const none = join(dir, "none.mjs");
    await writeFile(none, "export const family = {};\n");
    await assert.rejects(loadTaskFamilies([none]), /none\.mjs: expected a default export/);
    const cli = await arc(["--family", join(dir, "missing.ts"), "families"]);
    assert.equal(cli.code, 2);
    assert.match(cli.stderr, /missing\.ts: cannot be imported/);
  });

  it("judges the family's traces with its verifier and puts failures into patterns", async () => {
    await loadTaskFamilies([FAMILY]);
    const family = taskFamilies.get("unitconv");
    const [task] = generateTasks(family, { split: "production", seed: 4, count: 1 });
    const solution = task.solution as { value: number; from: string; to: string };
    const wrongUnit = JSON.stringify({ tool: "convert_units", args: { ...solution, to: solution.from } });
    const clusterer = new FailureClusterer("acme");
    const failed = await detectAndCluster(traceOf(task, wrongUnit), new DetectorRegistry(), clusterer);
    assert.equal(failed.judgement.status, "failed");
    assert.equal(clusterer.pattern(failed.patternId ?? "")?.label, "wrong_argument: convert_units.to");
    const passed = await detectAndCluster(
      traceOf(task, family.reference(task)[0]),
      new DetectorRegistry(),
      clusterer,
    );
    assert.equal(passed.judgement.status, "passed");
  });

  it("exports its rows as dataset JSONL, chat JSONL and VERL parquet", async () => {
    await loadTaskFamilies([FAMILY]);
    const family = taskFamilies.get("unitconv");
    const rows = generateTasks(family, { split: "eval", seed: 2, count: 6 }).map(taskToRow);
    const evalSet = buildEvalSet({
      tenantId: "acme",
      seed: 1,
      failures: [],
      general: rows,
      trainingQuestions: [],
      generalSize: 6,
    });
    const jsonl = toDatasetJsonl(evalSet.rows)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      jsonl.map((r) => r.env),
      rows.map(() => "unitconv"),
    );
    const chat = toChatJsonl(evalSet.rows.map((r) => chatExampleOf(r)))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const [i, example] of chat.entries()) {
      const row = evalSet.rows[i];
      const reference = family.reference({
        id: "x",
        env: "unitconv",
        question: row.question,
        solution: row.solution,
      });
      const [call] = example.messages.at(-1).tool_calls;
      assert.deepEqual(
        example.tools.map((t: { function: { name: string } }) => t.function.name),
        ["convert_units"],
      );
      assert.deepEqual(
        { tool: call.function.name, args: JSON.parse(call.function.arguments) },
        JSON.parse(reference[0]),
      );
    }
    const table = tableFromIPC(readParquet(toVerlParquet(evalSet.rows, { split: "test" })).intoIPCStream());
    const read = table.toArray().map((r) => JSON.parse(JSON.stringify(r.toJSON())));
    assert.deepEqual(
      read.map((r) => [r.data_source, r.ability]),
      rows.map(() => ["arc/unitconv", "tool_use"]),
    );
  });

  it("judges a candidate and its baseline on the family's eval rows with its verifier", async () => {
    await loadTaskFamilies([FAMILY]);
    const family = taskFamilies.get("unitconv");
    const tasks = generateTasks(family, { split: "eval", seed: 3, count: 4 });
    const rows = tasks.map((t) => ({
      ...taskToRow(t),
      id: t.id,
      meta: { slice: "general", sourceTraceIds: [] },
    }));
    const right = new Map(tasks.map((t) => [t.question, family.reference(t)[0]]));
    const wrong = new Map(
      tasks.map((t) => [
        t.question,
        JSON.stringify({ tool: "convert_units", args: { value: 0, from: "m", to: "ft" } }),
      ]),
    );
    // TEST DOUBLES for two trained models: one answers every task right, the other with a wrong value
    const candidate = embeddedBackend(new AnswerBookEngine(right), "candidate");
    const baseline = embeddedBackend(new AnswerBookEngine(wrong), "baseline");
    const items = await judgeModels(baseline, candidate, rows, []);
    assert.deepEqual(
      items.map((i) => [i.candidate.pass, i.baseline.pass]),
      tasks.map(() => [true, false]),
    );
    for (const item of items) assert.match(item.baseline.reason ?? "", /^value: expected/);
  });

  it("trains through `arc train` with the recipe's families key, its rollout worker loading the family too", async () => {
    const recipe = join(dir, "unitconv-grpo.yaml");
    await writeFile(
      recipe,
      [
        `families: [${JSON.stringify(FAMILY)}]`,
        `model: { path: ${JSON.stringify(resolve("models/toolcall-base"))} }`,
        "data: { env: unitconv, split: train, count: 16, evalCount: 4 }",
        "trainer: { algorithm: grpo, steps: 2, promptsPerStep: 2, samplesPerPrompt: 2, maxTokens: 48, asyncRollouts: true, evalEvery: 2, checkpointEvery: 2 }",
        "reward: { kind: partial }",
      ].join("\n"),
    );
    const out = await arc(["train", recipe, "--runs-dir", join(dir, "runs"), "--run-id", "unitconv"]);
    assert.equal(out.code, 0, out.stderr);
    const state = JSON.parse(await readFile(join(dir, "runs", "unitconv", "state.json"), "utf8"));
    assert.equal(state.status, "completed");
    const saved = await readFile(join(dir, "runs", "unitconv", "recipe.yaml"), "utf8");
    assert.match(saved, /unit-convert\/family\.ts/);
  });
});

describe("a task family given as JSON data", () => {
  let dir: string;
  let spec: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "arc-json-family-"));
    spec = join(dir, "support.json");
    await writeFile(spec, JSON.stringify(SUPPORT_FAMILY_SPEC));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const call = (args: Record<string, unknown>, tool = "refund") => JSON.stringify({ tool, args });
  const solution = { tool: "refund", args: { order_id: "A17", amount: 12.5 } };

  it("checks a tool call's tool, schema and each argument by its rule", async () => {
    const [family] = await loadTaskFamilies([spec]);
    const verify = family.verify;
    assert.ok(verify);
    const judge = (output: string) => verify({ outputs: [output], solution });
    assert.equal(judge(call({ order_id: "a17", amount: 12.5001 })).status, "pass");
    assert.deepEqual(judge(call({ order_id: "A17", amount: 13 })).failure?.path, "refund.amount");
    assert.equal(judge(call({ order_id: "A17" })).failure?.class, "schema_violation");
    assert.equal(judge(call({ order_id: "A17", amount: 12.5 }, "cancel")).failure?.class, "wrong_tool");
    assert.deepEqual(family.prompt({ id: "t", env: "support", question: "Refund A17", solution }), [
      { role: "system", content: SUPPORT_FAMILY_SPEC.system },
      { role: "user", content: "Refund A17" },
    ]);
    const listed = await arc(["--family", spec, "families", "--json"]);
    const row = JSON.parse(listed.stdout).find((f: { env: string }) => f.env === "support");
    assert.deepEqual([row.generator, row.verifier, row.tools], [false, true, ["refund"]]);
  });

  it("refuses a bad spec naming the field, and a judge-only family has no verifier", async () => {
    const bad = join(dir, "bad.json");
    await writeFile(bad, JSON.stringify({ ...SUPPORT_FAMILY_SPEC, env: "bad", tools: [{ parameters: {} }] }));
    await assert.rejects(loadTaskFamilies([bad]), /family spec .*bad\.json: tools\.0\.name: Required/);
    const judged = join(dir, "judged.json");
    await writeFile(judged, JSON.stringify({ ...SUPPORT_FAMILY_SPEC, env: "judged", verifier: "judge" }));
    const [family] = await loadTaskFamilies([judged]);
    assert.equal(family.verify, undefined);
  });

  it("trains through `arc train` on a PromptPool of its rows, and validation judges its rows", async () => {
    const rows = Array.from({ length: 8 }, (_, i) => ({
      question: `Please refund order A${i} of ${i + 1}.50 dollars.`,
      solution: { tool: "refund", args: { order_id: `A${i}`, amount: i + 1.5 } },
      env: "support",
      meta: {},
    }));
    const pool = join(dir, "pool.jsonl");
    await writeFile(pool, rows.map((r) => JSON.stringify(r)).join("\n"));
    const recipe = join(dir, "support-sft.yaml");
    await writeFile(
      recipe,
      [
        `families: [${JSON.stringify(spec)}]`,
        `model: { path: ${JSON.stringify(resolve("models/toolcall-base"))} }`,
        `data: { env: support, prompts: ${JSON.stringify(pool)}, evalCount: 0 }`,
        "trainer: { algorithm: sft, steps: 2, promptsPerStep: 4, checkpointEvery: 2, evalEvery: 2 }",
      ].join("\n"),
    );
    const out = await arc(["train", recipe, "--runs-dir", join(dir, "runs"), "--run-id", "support"]);
    assert.equal(out.code, 0, out.stderr);

    await loadTaskFamilies([spec]);
    const family = taskFamilies.get("support");
    const evalRows = rows.map((r, i) => ({
      ...r,
      id: `ev-${i}`,
      meta: { slice: "general", sourceTraceIds: [] },
    }));
    const right = new Map(rows.map((r) => [r.question, family.reference({ id: "x", ...r })[0]]));
    // TEST DOUBLE for a trained candidate: it answers every row right; the baseline (untrained) answers prose
    const candidate = embeddedBackend(new AnswerBookEngine(right), "candidate");
    const baseline = embeddedBackend(new AnswerBookEngine(new Map()), "baseline");
    const items = await judgeModels(baseline, candidate, evalRows, []);
    assert.deepEqual(
      items.map((i) => [i.candidate.pass, i.baseline.pass, i.judgedBy]),
      rows.map(() => [true, false, "verifier:support"]),
    );
  });
});
