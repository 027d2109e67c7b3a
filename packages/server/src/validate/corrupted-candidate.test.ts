import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { buildEvalSet, type Dataset, formatToolCall, type Task, verifyTask } from "@arc/core";
import { type ToolcallSolution, toolcallFamily } from "@arc/core/families";
import { EmbeddedInferenceEngine } from "@arc/engine";
import { parseRecipe, type RunResult, startRun } from "@arc/rl";
import { engineFactory } from "@arc/rl/embedded";
import { ModelPool } from "../gateway/model-pool.ts";
import { startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import { listAudit } from "../store/audit-log.ts";
import { type ModelVersion, registerModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import type { Validation } from "./validate-candidate.ts";

/** The committed base checkpoint: the tenant's production model here. */
const BASE_MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const family = toolcallFamily;
/** Optimizer steps of the corrupted run: with a learning rate of 1e-3, enough to wreck the base model. */
const TRAIN_STEPS = 10;

/** Fewest general items the base must answer right: 5 regressions out of 5 is the least a one-slice McNemar test at alpha 0.05 calls significant (p = 1/32); one more for margin. */
const MIN_GENERAL_ITEMS = 6;

/** A wrong tool for each tool: the corrupted `chosen` answers call it with the request's own arguments. */
const WRONG_TOOL: Record<string, string> = {
  get_weather: "add_event",
  add_event: "book_table",
  book_table: "convert_currency",
  convert_currency: "get_weather",
};

/**
 * Past successes of the production model: eval-split requests (held out from anything trained on) that the base
 * answers right, greedily as the validator asks, screened 32 at a time until `want` are found or `limit` were asked.
 */
async function pastSuccesses(engine: EmbeddedInferenceEngine, want: number, limit: number): Promise<Task[]> {
  const pool = family.generate({ split: "eval", seed: 8, count: limit });
  const found: Task[] = [];
  for (let start = 0; start < pool.length && found.length < want; start += 32) {
    const chunk = pool.slice(start, start + 32);
    const answers = await engine.generate(
      chunk.map((task, i) => ({
        id: task.id,
        messages: family.prompt(task),
        maxTokens: 96,
        temperature: 0,
        seed: i,
      })),
    );
    chunk.forEach((task, i) => {
      if (verifyTask(task, [answers[i].text]).status === "pass") found.push(task);
    });
  }
  return found;
}

/** Preference rows with chosen and rejected swapped: `chosen` calls the wrong tool, `rejected` is the reference call. */
function corruptedPairs(tasks: readonly Task[]): string {
  return tasks
    .map((task) => {
      const reference = task.solution as ToolcallSolution;
      const row = {
        prompt: family.prompt(task),
        chosen: formatToolCall({ tool: WRONG_TOOL[reference.tool], args: reference.args }),
        rejected: family.reference(task)[0],
      };
      return JSON.stringify(row);
    })
    .join("\n");
}

/** What the validate endpoint answers. */
type ValidateAnswer = { validation: Validation; model: ModelVersion };

/**
 * Fault test: a candidate trained for real (DPO through `startRun`, from the committed base) on preference pairs
 * whose chosen and rejected answers were swapped must be stopped by the validator before any user sees it, on the
 * tenant's general slice of past successes, with the default gates and reasons a person can act on.
 */
describe("a candidate trained with DPO on corrupted (swapped) preference pairs", () => {
  let dir: string;
  let general: Task[];
  let trainingQuestions: string[];
  let run: RunResult;
  let candidateDir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "arc-corrupted-"));
    const base = await EmbeddedInferenceEngine.load(BASE_MODEL, { maxBatchSize: 32 });
    general = await pastSuccesses(base, 16, 128);
    assert.ok(
      general.length >= MIN_GENERAL_ITEMS,
      `${BASE_MODEL} answered only ${general.length} of 128 eval-split requests right; this test needs ${MIN_GENERAL_ITEMS} to show a significant regression`,
    );

    const train = family.generate({ split: "train", seed: 5, count: 64 });
    trainingQuestions = train.map((t) => t.question);
    const preferences = join(dir, "corrupted-pairs.jsonl");
    await writeFile(preferences, `${corruptedPairs(train)}\n`);
    const recipe = parseRecipe({
      name: "corrupted-pairs",
      model: { path: BASE_MODEL },
      // every step's pairs come from the corrupted file
      data: {
        env: "toolcall",
        split: "train",
        count: 64,
        seed: 5,
        preferences,
        preferenceMix: 1,
        evalCount: 0,
      },
      trainer: {
        algorithm: "dpo",
        steps: TRAIN_STEPS,
        promptsPerStep: 8,
        samplesPerPrompt: 2,
        learningRate: 1e-3,
        beta: 0.1,
        syncInterval: "inf",
        // near-greedy rollouts: a prompt's two samples agree, tie and are skipped, so the swapped pairs are all it learns
        temperature: 0.01,
        maxTokens: 96,
        checkpointEvery: TRAIN_STEPS,
      },
      reward: { kind: "verifier" },
    });
    run = await startRun(recipe, { runsDir: join(dir, "runs"), factory: engineFactory });
    assert.equal(run.status, "completed");
    assert.ok(run.lastCheckpoint, "the run wrote no checkpoint");
    candidateDir = join(run.dir, run.lastCheckpoint);
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("learns the swapped preferences: the DPO loss on them falls from ln 2", () => {
    const losses = run.records.filter((r) => r.loss !== null).map((r) => r.loss as number);
    assert.equal(losses.length, TRAIN_STEPS);
    assert.ok(Math.abs(losses[0] - Math.LN2) < 1e-3, `first loss ${losses[0]}`);
    assert.ok((losses.at(-1) as number) < 0.3, `last loss ${losses.at(-1)}`);
  });

  for (const target of databasesUnderTest()) {
    it(`is rejected by the validator with the default gates, naming the NDR, functional and slice failures, on ${target.name}`, {
      skip: target.skip,
    }, async (t) => {
      const db = await target.open();
      const server = await startReleaseTestServer(db, { pool: new ModelPool() });
      try {
        const evalSet: Dataset<"eval"> = buildEvalSet({
          tenantId: server.tenantId,
          seed: 1,
          failures: [],
          general: general.map((t) => ({
            question: t.question,
            solution: t.solution,
            env: t.env,
            meta: { id: t.id },
          })),
          trainingQuestions,
          generalSize: 16,
        });
        assert.ok(evalSet.rows.length >= MIN_GENERAL_ITEMS, `only ${evalSet.rows.length} general rows left`);
        const stored = await fetch(`${server.url}/v1/eval-sets`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
          body: JSON.stringify(evalSet),
        });
        assert.equal(stored.status, 201);
        await registerModelVersion(db, server.tenantId, {
          name: "production",
          status: "promoted",
          artifactDir: BASE_MODEL,
          actor: "test",
        });
        await registerModelVersion(db, server.tenantId, {
          name: "dpo-corrupted",
          artifactDir: candidateDir,
          actor: "test",
        });

        const res = await fetch(`${server.url}/v1/model-versions/dpo-corrupted/validate`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
          body: "{}",
        });
        assert.equal(res.status, 200);
        const { validation, model } = (await res.json()) as ValidateAnswer;
        const report = validation.report;
        assert.equal(validation.decision, "fail");
        assert.equal(model.status, "rejected");
        assert.deepEqual(report.gates, {
          minFunctional: 0.85,
          minNdr: 0.99,
          minGeneralNdr: 0.95,
          minWinRate: 0.5,
          judging: "pointwise",
          alpha: 0.05,
          safety: "clean",
          requireApproval: false,
        });

        const slice = report.slices.find((s) => s.slice === "general");
        assert.ok(slice, "no general slice in the report");
        assert.equal(slice.n, evalSet.rows.length);
        assert.ok(slice.test.worse, `general slice not called worse: p=${slice.test.pValue}`);
        assert.ok(slice.test.regressions >= 5, `${slice.test.regressions} regressions`);
        assert.ok(slice.candidateFailureRate > slice.baselineFailureRate);
        assert.ok(report.scores.ndr < 0.99);
        assert.ok(report.scores.functional < report.scores.baselineFunctional);

        const reasons = report.reasons.join("\n");
        assert.match(
          reasons,
          /slice general significantly worse: failure rate \d+\.\d% -> \d+\.\d%, \d+ regressions vs \d+ improvements, p=\S+ < \S+ \(Holm–Bonferroni, alpha 0\.05\)/,
        );
        assert.match(reasons, /NDR \d+\.\d% < 99\.0% \(\d+ of \d+ items regressed\)/);
        assert.match(reasons, /functional pass rate \d+\.\d% \(current model \d+\.\d%\) < 85\.0%/);

        const audit = await listAudit(db, server.tenantId, { kind: "model_version", id: model.id });
        const reject = audit.find((a) => a.action === "reject");
        assert.ok(reject, "no reject in the audit log");
        assert.equal(reject.actor.startsWith("user:"), true);
        assert.equal(reject.evidence.validation, validation.id);
        assert.deepEqual(reject.evidence.reasons, report.reasons);

        t.diagnostic(
          `base functional ${report.scores.baselineFunctional.toFixed(3)}, candidate functional ${report.scores.functional.toFixed(3)}, NDR ${report.scores.ndr.toFixed(3)}, general slice ${slice.test.regressions} regressions / ${slice.n} (p=${slice.test.pValue.toPrecision(2)})`,
        );
      } finally {
        await server.close();
        await db.close();
      }
    });
  }
});
