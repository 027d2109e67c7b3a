import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { DetectionConfig } from "@arc/core";
import * as engine from "@arc/engine";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import {
  type ToolcallEvalFixture,
  toolcallEvalFixture,
} from "../deploy/__fixtures__/toolcall-eval-fixture.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import { CITY_RUBRIC } from "../judges/__fixtures__/misread-city.ts";
import { putJudgeModel, putRubric } from "../judges/judge-store.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { saveDetectorConfig } from "../store/detector-configs.ts";
import { migrate } from "../store/migrate.ts";
import { getModelVersion, type ModelVersion, registerModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import { type Validation, validateCandidate } from "./validate-candidate.ts";

const MODEL_DIR = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));

/** What the endpoints used here answer: a validation, a model version, or an error. */
type Answer = { validation: Validation; model: ModelVersion; status: string; error: { message: string } };

/** POSTs as the tenant and returns status and JSON. */
async function post(server: ReleaseTestServer, path: string, body?: unknown) {
  const res = await fetch(`${server.url}/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify(body ?? {}),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

describe("validator", () => {
  let db: Database;
  let dir: string;
  let server: ReleaseTestServer;
  let fx: ToolcallEvalFixture;
  /** The answer-book models of the tenant's production and its candidate (test doubles for trained models). */
  let answerBooks: ModelPool;

  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
    dir = await mkdtemp(join(tmpdir(), "arc-validate-"));
    fx = toolcallEvalFixture("any");
    const book = (answer: (q: string, slice: "pattern" | "general") => string) => {
      const entries: [string, string][] = [
        ...fx.patternQuestions.map((q): [string, string] => [q, answer(q, "pattern")]),
        ...fx.generalQuestions.map((q): [string, string] => [q, answer(q, "general")]),
      ];
      return new AnswerBookEngine(new Map(entries), "I'm sorry, I can't help with that.");
    };
    const engines: Record<string, AnswerBookEngine> = {
      // the production model: right on general traffic, wrong on the booking pattern it failed in production
      production: book((q, slice) => (slice === "pattern" ? fx.wrong(q) : fx.right(q))),
      // a good candidate: learned the pattern, kept the rest
      fixed: book((q) => fx.right(q)),
    };
    const config = engine.configForSize("tiny");
    const weights = engine.initWeights(config, 3);
    await engine.writeHfCheckpoint(join(dir, "tiny"), config, weights);
    for (const t of weights.values()) for (let i = 0; i < t.data.length; i++) t.data[i] += (i % 7) * 0.05;
    await engine.writeHfCheckpoint(join(dir, "tiny-perturbed"), config, weights);
    answerBooks = new ModelPool({
      loadEngine: async (artifactDir) => {
        const name = artifactDir.split("/").at(-1) as string;
        return engines[name] ?? engine.EmbeddedInferenceEngine.load(artifactDir);
      },
    });
    server = await startReleaseTestServer(db, { pool: answerBooks });
    fx = toolcallEvalFixture(server.tenantId);
    const stored = await post(server, "/eval-sets", fx.evalSet);
    assert.equal(stored.status, 201);
    await registerModelVersion(db, server.tenantId, {
      name: "production",
      status: "promoted",
      artifactDir: join(dir, "production"),
      actor: "test",
    });
  });

  after(async () => {
    await server.close();
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("validates a candidate that fixes the pattern and keeps general and safety, with per-slice figures", async () => {
    await registerModelVersion(db, server.tenantId, {
      name: "fixed",
      artifactDir: join(dir, "fixed"),
      actor: "test",
    });
    const { body } = await post(server, "/model-versions/fixed/validate");
    assert.equal(body.validation.decision, "pass", body.validation.report.reasons.join("; "));
    assert.equal(body.model.status, "validated");
    const report = body.validation.report;
    const pattern = report.slices.find((s) => s.slice === "pat-booking");
    assert.equal(pattern?.baselineFailureRate, 1);
    assert.equal(pattern?.candidateFailureRate, 0);
    assert.deepEqual(pattern?.judgedBy, { "verifier:toolcall": pattern?.n });
    assert.deepEqual(report.slices.find((s) => s.kind === "safety")?.judgedBy, {
      "safety:must_not_leak": 6,
      "safety:must_refuse": 6,
    });
    assert.equal(report.scores.ndr, 1);
    assert.equal(report.scores.safety.total, 12);
    assert.equal(report.scores.safety.leaks, 0);
  });

  it("holds a passing candidate for approval when the tenant requires it, and only `approve` releases it to a canary", async () => {
    const res = await fetch(`${server.url}/v1/release-settings`, {
      method: "PUT",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ gates: { requireApproval: true } }),
    });
    assert.equal(res.status, 200);
    await registerModelVersion(db, server.tenantId, {
      name: "fixed-2",
      artifactDir: join(dir, "fixed"),
      actor: "test",
    });
    await server.release.validator.tick();
    assert.equal((await getModelVersion(db, server.tenantId, "fixed-2")).status, "validated");
    await db.query("update model_versions set status = 'retired' where tenant_id = $1 and name = 'fixed'", [
      server.tenantId,
    ]);
    await server.release.deployer.tickTenant(server.tenantId);
    assert.equal((await getModelVersion(db, server.tenantId, "fixed-2")).status, "validated");
    const approved = await post(server, "/model-versions/fixed-2/approve");
    assert.equal(approved.body.status, "approved");
    await server.release.deployer.tickTenant(server.tenantId);
    assert.equal((await getModelVersion(db, server.tenantId, "fixed-2")).status, "canary");
  });

  it("runs the validator on real embedded checkpoints: an untrained, perturbed candidate is rejected on the functional gate", async () => {
    const local = await startReleaseTestServer(db, { pool: new ModelPool(), judge: { maxTokens: 16 } });
    try {
      const small = { ...fx.evalSet, rows: fx.evalSet.rows.slice(0, 8), version: "sha256:small" };
      assert.equal((await post(local, "/eval-sets", small)).status, 201);
      await registerModelVersion(db, local.tenantId, {
        name: "tiny",
        status: "promoted",
        artifactDir: join(dir, "tiny"),
        actor: "test",
      });
      await registerModelVersion(db, local.tenantId, {
        name: "tiny-perturbed",
        artifactDir: join(dir, "tiny-perturbed"),
        actor: "test",
      });
      const { body } = await post(local, "/model-versions/tiny-perturbed/validate");
      assert.equal(body.validation.decision, "fail");
      assert.match(body.validation.report.reasons.join("\n"), /functional pass rate 0\.0% .* < 85\.0%/);
      assert.ok(body.validation.report.scores.tokens.candidateMean > 0);
    } finally {
      await local.close();
    }
  });

  it("judges the rows no verifier can judge with the tenant's judge, and gates them on the win rate", async () => {
    // a real judge over real HTTP: `arc engine serve` on the shipped toolcall base, never trained to judge, so its
    // verdicts mean nothing: this checks the path (every row judged by what can judge it, counted, gated)
    const judgeServer = await engine.startEngineServer(await engine.EmbeddedInferenceEngine.load(MODEL_DIR), {
      modelId: "byte-judge",
    });
    const local = await startReleaseTestServer(db, { pool: answerBooks, judge: { maxTokens: 48 } });
    try {
      const free = [
        "Cancel my dinner for tonight.",
        "Move the meeting to Friday.",
        "What did I book last week?",
      ];
      const evalSet = {
        ...fx.evalSet,
        version: "sha256:with-reference-free",
        rows: [
          ...fx.evalSet.rows.slice(0, 6),
          ...free.map((question, i) => ({
            id: `free-${i}`,
            env: "assistant",
            question,
            context: { messages: [{ role: "user", content: question }] },
            meta: { slice: "pat-free", sourceTraceIds: [] },
          })),
        ],
      };
      const stored = await post(local, "/eval-sets", evalSet);
      assert.equal(stored.status, 201, JSON.stringify(stored.body));
      for (const [name, status] of [
        ["production", "promoted"],
        ["fixed", "candidate"],
      ] as const)
        await registerModelVersion(db, local.tenantId, {
          name,
          status,
          artifactDir: join(dir, name),
          actor: "test",
        });
      const upstreams = { judges: { baseUrl: judgeServer.baseURL } };
      await putRubric(db, local.tenantId, CITY_RUBRIC);
      await putJudgeModel(db, local.tenantId, { upstream: "judges", model: "byte-judge" }, upstreams);
      // the tenant's explicit choice to trust its judge uncalibrated (an untrusted one gates no validation)
      await saveDetectorConfig(db, local.tenantId, DetectionConfig.parse({ judgeMinKappa: null }));
      const { validation } = await validateCandidate(
        { ...local.release.validatorDeps, judgeUpstreams: upstreams },
        local.tenantId,
        "fixed",
        "test",
      );
      const { report } = validation;
      const judged = report.slices.find((sl) => sl.slice === "pat-free");
      // the judge decided some of the three rows; the rest are counted, not guessed
      assert.equal((judged?.n ?? 0) + (report.unjudged ?? 0), free.length);
      for (const sl of report.slices.filter((x) => x.kind === "pattern" && x.slice !== "pat-free"))
        assert.deepEqual(Object.keys(sl.judgedBy), ["verifier:toolcall"]);
      if (judged) {
        assert.deepEqual(judged.judgedBy, { "judge:byte-judge": judged.n });
        // both models answer these rows alike, so the judge sees ties only: no win shown, the candidate rejected
        assert.deepEqual([report.scores.winRate?.n, report.scores.winRate?.ties], [judged.n, judged.n]);
        assert.equal(report.checks.find((c) => c.gate === "win_rate")?.passed, false);
        assert.equal(validation.decision, "fail");
      } else {
        assert.equal(report.scores.winRate, null);
      }
    } finally {
      await local.close();
      await judgeServer.close();
    }
  });

  it("refuses to validate without an EvalSet, saying how to add one", async () => {
    const bare = await startReleaseTestServer(db);
    try {
      await registerModelVersion(db, bare.tenantId, {
        name: "p",
        status: "promoted",
        artifactDir: join(dir, "production"),
        actor: "test",
      });
      await registerModelVersion(db, bare.tenantId, {
        name: "c",
        artifactDir: join(dir, "fixed"),
        actor: "test",
      });
      const { status, body } = await post(bare, "/model-versions/c/validate");
      assert.equal(status, 400);
      assert.match(body.error.message, /no EvalSet for this tenant: add one \(POST \/v1\/eval-sets\)/);
    } finally {
      await bare.close();
    }
  });
});
