import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Trace } from "@arc/core";
import type { Database } from "./database.ts";
import { createTenant } from "./tenants.ts";
import { databasesUnderTest } from "./test-databases.ts";
import { listTraces } from "./trace-list.ts";
import { insertTraces } from "./trace-store.ts";

/** Trace `i` of twelve: started i minutes after 10:00, lasting i × 100 ms, using i × 10 tokens. */
function trace(i: number): Trace {
  const startedAt = new Date(Date.UTC(2026, 2, 1, 10, i)).toISOString();
  return Trace.parse({
    id: `t${String(i).padStart(2, "0")}`,
    startedAt,
    endedAt: new Date(Date.parse(startedAt) + i * 100).toISOString(),
    userId: `user-${i % 3}`,
    sessionId: `session-${i % 2}`,
    env: i % 4 === 0 ? "sql" : "toolcall",
    tags: i % 5 === 0 ? ["vip"] : [],
    input: i === 7 ? "Refund order 7" : `Book flight ${i}`,
    steps: [
      {
        id: "s1",
        kind: "llm",
        startedAt,
        llm: {
          modelVersion: i < 6 ? "mv_old" : "mv_new",
          messages: [{ role: "user", content: "hello" }],
          usage: { totalTokens: i * 10 },
        },
      },
    ],
  });
}

for (const target of databasesUnderTest()) {
  describe(`the trace list's filters and keyset pages (${target.name})`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;
    const ids = async (query: Parameters<typeof listTraces>[2]) =>
      (await listTraces(db, tenant, query)).data.map((t) => t.id);

    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "list")).id;
      await insertTraces(
        db,
        tenant,
        Array.from({ length: 12 }, (_, i) => trace(i)),
      );
      // a verdict and a pattern for three traces, as detection writes them
      await db.query(
        `insert into verdicts (tenant_id, trace_id, status, failure_class, pattern_id, model_version, judgement)
         values ($1, 't03', 'failed', 'wrong_tool', 'pat_a', 'mv_old', '{}'),
                ($1, 't08', 'failed', 'refusal', 'pat_b', 'mv_new', '{}'),
                ($1, 't09', 'passed', null, null, 'mv_new', '{}')`,
        [tenant],
      );
      await db.query(
        `insert into failures (tenant_id, trace_id, pattern_id, failure_class)
         values ($1, 't03', 'pat_a', 'wrong_tool'), ($1, 't08', 'pat_b', 'refusal')`,
        [tenant],
      );
    });
    after(() => db?.close());

    it("filters by verdict, failure class, pattern and model version", async () => {
      assert.deepEqual(await ids({ verdict: "failed" }), ["t08", "t03"]);
      assert.deepEqual(await ids({ verdict: "passed" }), ["t09"]);
      assert.equal((await ids({ verdict: "unjudged" })).length, 9);
      assert.deepEqual(await ids({ failureClass: "refusal" }), ["t08"]);
      assert.deepEqual(await ids({ patternId: "pat_a" }), ["t03"]);
      assert.deepEqual(await ids({ modelVersion: "mv_old", verdict: "failed" }), ["t03"]);
      assert.equal((await ids({ modelVersion: "mv_new" })).length, 6);
    });

    it("filters by user, session, task family, tag, text, latency and tokens", async () => {
      assert.deepEqual(await ids({ userId: "user-1" }), ["t10", "t07", "t04", "t01"]);
      assert.deepEqual(await ids({ sessionId: "session-1", userId: "user-0" }), ["t09", "t03"]);
      assert.deepEqual(await ids({ env: "sql" }), ["t08", "t04", "t00"]);
      assert.deepEqual(await ids({ tag: "vip" }), ["t10", "t05", "t00"]);
      assert.deepEqual(await ids({ text: "refund" }), ["t07"]);
      assert.deepEqual(await ids({ minLatencyMs: 300, maxLatencyMs: 500 }), ["t05", "t04", "t03"]);
      assert.deepEqual(await ids({ minTokens: 100 }), ["t11", "t10"]);
      assert.deepEqual(await ids({ maxTokens: 10 }), ["t01", "t00"]);
    });

    it("summarises each trace: verdict, model version, latency, tokens", async () => {
      const [t08] = (await listTraces(db, tenant, { patternId: "pat_b" })).data;
      assert.deepEqual(t08.verdict, {
        status: "failed",
        failureClass: "refusal",
        patternId: "pat_b",
        modelVersion: "mv_new",
      });
      assert.equal(t08.latencyMs, 800);
      assert.equal(t08.totalTokens, 80);
      assert.equal(t08.stepCount, 1);
      const [t02] = (await listTraces(db, tenant, { minTokens: 20, maxTokens: 20 })).data;
      assert.equal(t02.verdict, null);
      assert.equal(t02.modelVersion, "mv_old", "an unjudged trace names its LLM step's version");
    });

    it("pages by cursor in either order, every trace once", async () => {
      for (const order of ["desc", "asc"] as const) {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await listTraces(db, tenant, { order, limit: 5, cursor });
          seen.push(...page.data.map((t) => t.id));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        const all = Array.from({ length: 12 }, (_, i) => `t${String(i).padStart(2, "0")}`);
        assert.deepEqual(seen, order === "asc" ? all : all.reverse());
      }
    });
  });
}
