import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Trace } from "@arc/core";
import { seriesValue } from "../metrics/__fixtures__/metric-values.ts";
import { ServerMetrics } from "../metrics/metrics-registry.ts";
import type { Database, Queryable } from "../store/database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { getTrace } from "../store/trace-store.ts";
import { TraceRecorder } from "./trace-recorder.ts";

function trace(id: string, fields: Partial<Trace> = {}): Trace {
  return {
    id,
    name: "gateway",
    startedAt: "2026-05-01T10:00:00.000Z",
    status: "ok",
    steps: [],
    metadata: {},
    ...fields,
  } as Trace;
}

function llmStep(id: string): Trace["steps"][number] {
  return {
    id,
    kind: "llm",
    name: "chat.completions",
    startedAt: "2026-05-01T10:00:00.000Z",
  } as Trace["steps"][number];
}

/** TEST DOUBLE for a database that is down: the real one, with its first `failures` statements refused. */
function failingFirst(db: Queryable, failures: number): Queryable & { refused: number } {
  const wrapper = {
    refused: 0,
    query: ((sql: string, params?: unknown[]) => {
      if (wrapper.refused < failures) {
        wrapper.refused++;
        return Promise.reject(Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" }));
      }
      return db.query(sql, params);
    }) as Queryable["query"],
    exec: (sql: string) => db.exec(sql),
  };
  return wrapper;
}

for (const target of databasesUnderTest()) {
  describe(`gateway trace recorder on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;
    const count = async () =>
      (
        await db.query<{ n: number }>("select count(*)::int as n from traces where tenant_id = $1", [tenant])
      )[0].n;
    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "acme")).id;
    });
    after(() => db?.close());

    it("keeps at most maxQueued traces while nothing is written, dropping the oldest and counting them on /metrics", async () => {
      const metrics = new ServerMetrics();
      const recorder = new TraceRecorder(db, {
        maxQueued: 5,
        maxBatch: 1000,
        flushMs: 60_000,
        counter: metrics.gatewayTraces,
      });
      for (let i = 0; i < 12; i++) recorder.record(tenant, trace(`bounded-${i}`));
      assert.equal(recorder.queued, 5);
      assert.equal(recorder.dropped, 7);
      await recorder.flush();
      const ids = await db.query<{ id: string }>(
        "select id from traces where tenant_id = $1 and id like 'bounded-%' order by id",
        [tenant],
      );
      assert.deepEqual(
        ids.map((r) => r.id),
        ["bounded-10", "bounded-11", "bounded-7", "bounded-8", "bounded-9"],
      );
      assert.match(await metrics.render(), /arc_gateway_traces_total\{outcome="dropped"\} 7/);
      assert.match(await metrics.render(), /arc_gateway_traces_total\{outcome="stored"\} 5/);
    });

    it("tries a failed write again and stores the batch once the database answers, counting the retries", async () => {
      const metrics = new ServerMetrics();
      const flaky = failingFirst(db, 2);
      const recorder = new TraceRecorder(flaky, { retryDelayMs: 1, counter: metrics.gatewayTraces });
      const before = await count();
      recorder.record(tenant, trace("retry-1"));
      recorder.record(tenant, trace("retry-2"));
      await recorder.flush();
      assert.equal(flaky.refused, 2);
      assert.equal(await count(), before + 2);
      assert.equal(await seriesValue(metrics.gatewayTraces, { outcome: "retried" }), 4);
      assert.equal(await seriesValue(metrics.gatewayTraces, { outcome: "stored" }), 2);
      assert.equal(recorder.lost, 0);
    });

    it("gives a batch up after maxAttempts tries, counts it as lost and reports it, and keeps recording", async () => {
      const metrics = new ServerMetrics();
      const reported: number[] = [];
      const flaky = failingFirst(db, 3);
      const recorder = new TraceRecorder(flaky, {
        retryDelayMs: 1,
        maxAttempts: 3,
        counter: metrics.gatewayTraces,
        onError: (_e, lost) => reported.push(lost),
      });
      const before = await count();
      recorder.record(tenant, trace("lost-1"));
      await recorder.flush();
      assert.deepEqual(reported, [1]);
      assert.equal(await seriesValue(metrics.gatewayTraces, { outcome: "lost" }), 1);
      recorder.record(tenant, trace("after-1"));
      await recorder.flush();
      assert.equal(await count(), before + 1);
    });

    it("stores the 31 good traces of a batch of 32 when one cannot be inserted, and counts the one rejected with its cause", async () => {
      const metrics = new ServerMetrics();
      const rejected: { id: string; cause: string }[] = [];
      const recorder = new TraceRecorder(db, {
        maxBatch: 1000,
        flushMs: 60_000,
        retryDelayMs: 1,
        counter: metrics.gatewayTraces,
        onRejected: (_error, bad, cause) => rejected.push({ id: bad.id, cause }),
      });
      for (let i = 0; i < 32; i++) {
        // a lone surrogate: JSON can carry it, PostgreSQL's jsonb refuses it (22P02)
        recorder.record(tenant, trace(`batch-${i}`, i === 17 ? { input: "half a pair: \ud800" } : {}));
      }
      await recorder.flush();
      const ids = await db.query<{ id: string }>(
        "select id from traces where tenant_id = $1 and id like 'batch-%'",
        [tenant],
      );
      assert.equal(ids.length, 31);
      assert.ok(!ids.some((r) => r.id === "batch-17"));
      assert.deepEqual(rejected, [{ id: "batch-17", cause: "invalid_text_representation" }]);
      assert.equal(recorder.stored, 31);
      assert.equal(recorder.rejected, 1);
      assert.equal(recorder.lost, 0);
      assert.match(
        await metrics.render(),
        /arc_gateway_traces_total\{outcome="rejected",cause="invalid_text_representation"\} 1\n/,
      );
      assert.equal(await seriesValue(metrics.gatewayTraces, { outcome: "stored" }), 31);
    });

    it("stores both records of one trace that arrive in one flush (two gateway calls of one SDK trace)", async () => {
      const recorder = new TraceRecorder(db, { maxBatch: 1000, flushMs: 60_000, retryDelayMs: 1 });
      recorder.record(tenant, trace("sdk-trace", { steps: [llmStep("call-1")] }));
      recorder.record(tenant, trace("other-trace"));
      recorder.record(tenant, trace("sdk-trace", { steps: [llmStep("call-2")] }));
      await recorder.flush();
      const stored = await getTrace(db, tenant, "sdk-trace");
      assert.deepEqual(stored.steps.map((s) => s.id).sort(), ["call-1", "call-2"]);
      assert.equal(recorder.stored, 3);
      assert.equal(recorder.rejected, 0);
    });
  });
}
