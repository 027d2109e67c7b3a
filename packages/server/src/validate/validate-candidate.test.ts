import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { configForSize, EmbeddedInferenceEngine, initWeights, writeHfCheckpoint } from "@arc/engine";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import {
  type ReleaseTestServer,
  startReleaseTestServer,
} from "../deploy/__fixtures__/release-test-server.ts";
import {
  type ToolcallEvalFixture,
  toolcallEvalFixture,
} from "../deploy/__fixtures__/toolcall-eval-fixture.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import type { Database } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { getModelVersion, type ModelVersion, registerModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import type { Validation } from "./validate-candidate.ts";

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
    const config = configForSize("tiny");
    const weights = initWeights(config, 3);
    await writeHfCheckpoint(join(dir, "tiny"), config, weights);
    for (const t of weights.values()) for (let i = 0; i < t.data.length; i++) t.data[i] += (i % 7) * 0.05;
    await writeHfCheckpoint(join(dir, "tiny-perturbed"), config, weights);
    server = await startReleaseTestServer(db, {
      pool: new ModelPool({
        loadEngine: async (artifactDir) => {
          const name = artifactDir.split("/").at(-1) as string;
          return engines[name] ?? EmbeddedInferenceEngine.load(artifactDir);
        },
      }),
    });
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
