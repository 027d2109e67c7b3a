import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type EvalRow, Trace } from "@arc/core";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { DetectionWorker } from "../failures/detection-worker.ts";
import { exportDataset } from "../failures/export-dataset.ts";
import { listPatterns } from "../failures/pattern-store.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import { createTenant } from "../store/tenants.ts";
import { insertTraces } from "../store/trace-store.ts";
import { SUPPORT_FAMILY_SPEC } from "./__fixtures__/support-family.ts";
import { tenantTaskFamilies } from "./task-family-store.ts";

const { env: _env, ...SPEC } = SUPPORT_FAMILY_SPEC;

const questions = Array.from({ length: 12 }, (_, i) => `Please refund order B${i} for ${i + 2}.25 dollars.`);
const solutionOf = (i: number) => ({ tool: "refund", args: { order_id: `B${i}`, amount: i + 2.25 } });
const callOf = (i: number, amount = i + 2.25) =>
  JSON.stringify({ tool: "refund", args: { order_id: `B${i}`, amount } });

describe("a tenant's task family given as data, through the API", () => {
  let db: Database;
  let server: ReleaseTestServer;

  const request = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
    // TEST DOUBLES for two trained models: production refunds 1 dollar too little, the candidate the right amount
    const engines: Record<string, AnswerBookEngine> = {
      production: new AnswerBookEngine(new Map(questions.map((q, i) => [q, callOf(i, i + 1.25)]))),
      candidate: new AnswerBookEngine(new Map(questions.map((q, i) => [q, callOf(i)]))),
    };
    server = await startReleaseTestServer(db, {
      pool: new ModelPool({ loadEngine: async (dir) => engines[dir.split("/").at(-1) as string] }),
      startWorkers: false,
    });
  });
  after(async () => {
    await server?.close();
    await db?.close();
  });

  it("registers, replaces, lists and removes a family, refusing a bad spec or a server family's env", async () => {
    const created = await request("PUT", "/task-families/support", SPEC);
    assert.equal(created.status, 201);
    assert.deepEqual((await created.json()).tools[0].name, "refund");
    assert.equal((await request("PUT", "/task-families/support", SPEC)).status, 200);
    const listed = (await (await request("GET", "/task-families")).json()).data;
    assert.deepEqual(
      listed.map((f: { env: string; source: string }) => [f.env, f.source]),
      [
        ["toolcall", "server"],
        ["arith", "server"],
        ["orderdesk", "server"],
        ["support", "tenant"],
      ],
    );
    const taken = await request("PUT", "/task-families/toolcall", SPEC);
    assert.equal(taken.status, 409);
    const bad = await request("PUT", "/task-families/broken", { ...SPEC, tools: [{ name: "x" }] });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /tools\.0\.parameters: Required/);
    assert.equal(
      (await request("PUT", "/task-families/scratch", { ...SPEC, verifier: "judge" })).status,
      201,
    );
    assert.equal((await request("DELETE", "/task-families/scratch")).status, 204);
    assert.equal((await request("DELETE", "/task-families/scratch")).status, 404);
    const other = await createTenant(db, "other");
    assert.equal((await tenantTaskFamilies(db, other.id)).find("support"), undefined);
  });

  it("judges the tenant's traces with the family's verifier and groups the failures into a pattern", async () => {
    await insertTraces(
      db,
      server.tenantId,
      questions.slice(0, 6).map((question, i) =>
        Trace.parse({
          id: `support-${i}`,
          env: "support",
          startedAt: "2026-11-20T10:00:00.000Z",
          input: { question },
          metadata: { solution: solutionOf(i) },
          steps: [
            {
              id: "llm0",
              kind: "llm",
              startedAt: "2026-11-20T10:00:00.000Z",
              llm: {
                messages: [{ role: "user", content: question }],
                output: { content: callOf(i, i % 2 ? i + 1.25 : i + 2.25) },
              },
            },
          ],
        }),
      ),
    );
    const worker = new DetectionWorker(db, { config: { quietMs: 0, batchSize: 100 } });
    while ((await worker.runOnce()).judged > 0);
    const patterns = await listPatterns(db, server.tenantId);
    assert.deepEqual(
      patterns.map((p) => [p.label, p.count]),
      [["wrong_argument: refund.amount", 3]],
    );
  });

  it("validates a candidate on the family's eval rows with its verifier, and exports them with tool_calls", async () => {
    const rows: EvalRow[] = questions.map((question, i) => ({
      id: `ev-${i}`,
      question,
      solution: solutionOf(i),
      env: "support",
      meta: { slice: "pat-amount", patternId: "pat-amount", sourceTraceIds: [] },
    }));
    const stored = await request("POST", "/eval-sets", { kind: "eval", version: "sha256:support", rows });
    assert.equal(stored.status, 201);
    for (const name of ["production", "candidate"]) {
      await registerModelVersion(db, server.tenantId, {
        name,
        status: name === "production" ? "promoted" : "candidate",
        artifactDir: `/models/${name}`,
        actor: "test",
      });
    }
    const validated = await (await request("POST", "/model-versions/candidate/validate")).json();
    const report = validated.validation.report;
    assert.equal(validated.validation.decision, "pass", report.reasons.join("; "));
    assert.equal(report.unjudged, 0);
    const slice = report.slices.find((s: { slice: string }) => s.slice === "pat-amount");
    assert.deepEqual([slice.baselineFailureRate, slice.candidateFailureRate], [1, 0]);

    const chat = exportDataset(
      { id: "ds", kind: "eval", rows } as unknown as Parameters<typeof exportDataset>[0],
      "chat",
      await tenantTaskFamilies(db, server.tenantId),
    );
    const first = JSON.parse(
      Buffer.from(chat.body as Uint8Array)
        .toString("utf8")
        .split("\n")[0],
    );
    assert.deepEqual(first.messages.at(-1).tool_calls[0].function, {
      name: "refund",
      arguments: JSON.stringify(solutionOf(0).args),
    });
  });
});
