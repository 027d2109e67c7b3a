import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { judgeGeneral, MIN_COUNTED_GENERAL_ITEMS } from "@arc/core";
import { EmbeddedInferenceEngine } from "@arc/engine";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { toolcallEvalFixture } from "../deploy/__fixtures__/toolcall-eval-fixture.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import { parseGeneralSlice, shippedGeneralSlice } from "./general-slice.ts";
import { validateCandidate } from "./validate-candidate.ts";

const TOY_BASE = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));

describe("the general slice gate (capability retention)", () => {
  let db: Database;
  let server: ReleaseTestServer;
  const general = shippedGeneralSlice();

  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
    const fx = toolcallEvalFixture("any");
    /** TEST DOUBLES for trained models (answer books): every eval row right, the general slice right or wrong. */
    const book = (knowsGeneral: boolean) =>
      new AnswerBookEngine(
        new Map([
          ...[...fx.patternQuestions, ...fx.generalQuestions].map((q): [string, string] => [q, fx.right(q)]),
          ...general.map((g): [string, string] => [g.prompt, knowsGeneral ? g.expected : "I do not know."]),
        ]),
        "I'm sorry, I can't help with that.",
      );
    const engines: Record<string, () => Promise<EmbeddedInferenceEngine | AnswerBookEngine>> = {
      production: async () => book(true),
      keeps: async () => book(true),
      forgets: async () => book(false),
    };
    const pool = new ModelPool({
      loadEngine: (dir) => engines[dir.split("/").at(-1) as string]?.() ?? EmbeddedInferenceEngine.load(dir),
    });
    server = await startReleaseTestServer(db, { pool, judge: { maxTokens: 96 } });
    const { evalSet } = toolcallEvalFixture(server.tenantId);
    const res = await fetch(`${server.url}/v1/eval-sets`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...evalSet, rows: evalSet.rows.slice(0, 8), version: "sha256:small" }),
    });
    assert.equal(res.status, 201);
    await registerModelVersion(db, server.tenantId, {
      name: "production",
      status: "promoted",
      artifactDir: "/answer-books/production",
      actor: "test",
    });
  });

  after(async () => {
    await server.close();
    await db.close();
  });

  const validate = async (name: string) => {
    await registerModelVersion(db, server.tenantId, {
      name,
      artifactDir: `/answer-books/${name}`,
      actor: "test",
    });
    return (await validateCandidate(server.release.validatorDeps, server.tenantId, name, "test")).validation;
  };

  it("ships a general slice of checkable items the right answers pass", () => {
    assert.ok(general.length >= 40, `expected at least 40 items, got ${general.length}`);
    assert.equal(new Set(general.map((g) => g.id)).size, general.length);
    for (const g of general) assert.equal(judgeGeneral(g, g.expected).pass, true, g.id);
    assert.deepEqual(
      new Set(general.map((g) => g.topic)),
      new Set(["arithmetic", "copy", "capital", "unit", "instruction"]),
    );
  });

  it("rejects a candidate that forgets what the production model knew, naming the general NDR", async () => {
    const { report, decision } = await validate("forgets");
    assert.equal(decision, "fail");
    assert.deepEqual(report.scores.general, {
      total: general.length,
      counted: general.length,
      kept: 0,
      ndr: 0,
    });
    const check = report.checks.find((c) => c.gate === "general_ndr");
    assert.equal(check?.passed, false);
    assert.match(report.reasons.join("\n"), /general NDR 0\.0% < 95\.0%/);
    // the EvalSet alone would have let it through
    assert.equal(report.scores.functional, 1);
    assert.equal(report.slices.find((s) => s.slice === "general-knowledge")?.n, general.length);
  });

  it("validates a candidate that keeps the general slice", async () => {
    const { report, decision } = await validate("keeps");
    assert.equal(decision, "pass", report.reasons.join("; "));
    assert.equal(report.scores.general?.ndr, 1);
    assert.equal(report.checks.find((c) => c.gate === "general_ndr")?.passed, true);
  });

  it("passes the gate with a note on the shipped toy base, which answers fewer general items right than count", async () => {
    const local = await startReleaseTestServer(db, { pool: new ModelPool(), judge: { maxTokens: 32 } });
    try {
      const { evalSet } = toolcallEvalFixture(local.tenantId);
      await fetch(`${local.url}/v1/eval-sets`, {
        method: "POST",
        headers: { authorization: `Bearer ${local.key}`, "content-type": "application/json" },
        body: JSON.stringify({ ...evalSet, rows: evalSet.rows.slice(0, 4), version: "sha256:toy" }),
      });
      for (const [name, status] of [
        ["toy", "promoted"],
        ["toy-again", "candidate"],
      ] as const)
        await registerModelVersion(db, local.tenantId, {
          name,
          status,
          artifactDir: TOY_BASE,
          actor: "test",
        });
      const { validation } = await validateCandidate(
        local.release.validatorDeps,
        local.tenantId,
        "toy-again",
        "test",
      );
      const counted = validation.report.scores.general?.counted ?? -1;
      assert.ok(counted < MIN_COUNTED_GENERAL_ITEMS, `the toy base answered ${counted} general items right`);
      const check = validation.report.checks.find((c) => c.gate === "general_ndr");
      assert.equal(check?.passed, true);
      assert.match(check?.detail ?? "", /general NDR not gated: only the \d+ of \d+ .* fewer than 10/);
    } finally {
      await local.close();
    }
  });

  it("refuses a general slice line that is not an item, naming the line and the field", () => {
    assert.throws(
      () =>
        parseGeneralSlice(
          '{"id":"a","topic":"t","prompt":"p","check":"number","expected":"1"}\n{"id":"b"}',
          "x.jsonl",
        ),
      /x\.jsonl:2: topic: Required/,
    );
  });
});
