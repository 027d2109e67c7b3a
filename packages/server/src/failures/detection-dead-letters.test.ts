import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Trace } from "@arc/core";
import { simulateProductionTraffic } from "@arc/core/testing";
import { createApp } from "../http/app.ts";
import { Authenticator } from "../http/authenticator.ts";
import { patternRoutes } from "../http/routes/pattern-routes.ts";
import { ServerMetrics } from "../metrics/metrics-registry.ts";
import type { Database } from "../store/database.ts";
import { createApiKey } from "../store/keys.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { insertFeedback, insertTraces } from "../store/trace-store.ts";
import { claimDueTraces, deadLetteredDetections, pendingDetections } from "./detection-queue.ts";
import { DetectionWorker } from "./detection-worker.ts";
import { getVerdict } from "./verdict-store.ts";

const config = { quietMs: 0, batchSize: 100, pollMs: 10, leaseMs: 60_000, maxAttempts: 2 };
const traces = simulateProductionTraffic({ seed: 11, count: 12 }).map((s) => Trace.parse(s.trace));

/** Runs passes until the tenant has nothing pending; returns how many traces were judged in all. */
async function drain(db: Database, tenant: string, worker: DetectionWorker): Promise<number> {
  let judged = 0;
  for (let i = 0; i < 20; i++) {
    if ((await pendingDetections(db, tenant)) === 0) return judged;
    judged += (await worker.runOnce()).judged;
  }
  throw new Error("the detection queue did not drain in 20 passes");
}

/** A trace's verdict came from its detectors, not from the worker giving up on it. */
async function judgedByDetectors(db: Database, tenant: string, traceId: string): Promise<boolean> {
  const verdict = await getVerdict(db, tenant, traceId);
  return verdict?.judgement.verdicts.every((v) => v.detectorId !== "worker") ?? false;
}

/** Lets leases of 1 ms run out: PostgreSQL's now() is the time its transaction started. */
const leasesRunOut = () => new Promise((resolve) => setTimeout(resolve, 20));

for (const target of databasesUnderTest()) {
  describe(`detection dead letters on ${target.name}`, { skip: target.skip, timeout: 120_000 }, () => {
    let db: Database;
    let tenant: string;
    const errors: unknown[] = [];
    const worker = () => new DetectionWorker(db, { config, onError: (e) => errors.push(e) });

    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "acme")).id;
    });
    after(() => db?.close());

    it("judges a trace nested 2,000 levels deep, and the database keeps answering", async () => {
      let deep: unknown = "bottom";
      for (let i = 0; i < 2_000; i++) deep = { nested: deep };
      const trace = traces[0];
      await insertTraces(db, tenant, [{ ...trace, steps: [{ ...trace.steps[0], metadata: { deep } }] }]);
      assert.equal(await drain(db, tenant, worker()), 1);
      assert.ok(await judgedByDetectors(db, tenant, trace.id));
      assert.deepEqual(await db.query("select 1 as one"), [{ one: 1 }]);
    });

    it("judges the rest of a batch when one trace cannot be read, and moves that one aside with its error", async () => {
      const good = traces.slice(1, 5);
      const bad = traces[5];
      await insertTraces(db, tenant, [...good, bad]);
      // A stored value the reader cannot turn back into a trace (stored before validation, or by another path).
      await db.query("update traces set started_at = 'infinity' where tenant_id = $1 and id = $2", [
        tenant,
        bad.id,
      ]);
      errors.length = 0;
      const first = await worker().runOnce();
      assert.deepEqual({ judged: first.judged, released: first.released }, { judged: 4, released: 1 });
      for (const t of good) assert.ok(await judgedByDetectors(db, tenant, t.id), `${t.id} is judged`);
      assert.deepEqual(await worker().runOnce(), { judged: 0, assigned: 0, released: 0 });
      assert.equal(await getVerdict(db, tenant, bad.id), null);
      assert.equal(await pendingDetections(db, tenant), 0);
      const dead = await deadLetteredDetections(db, tenant);
      assert.deepEqual(
        dead.map((d) => ({ traceId: d.traceId, attempts: d.attempts })),
        [{ traceId: bad.id, attempts: 2 }],
      );
      assert.match(dead[0].error, /Invalid time value/);
      assert.equal(errors.length, 2);
      assert.match(String(errors[1]), new RegExp(`trace "${bad.id}" of tenant ${tenant} is moved aside`));

      await insertFeedback(db, tenant, { id: "fb-dead", traceId: bad.id, label: "thumbs_down" });
      assert.deepEqual(
        await worker().runOnce(),
        { judged: 0, assigned: 0, released: 0 },
        "a dead letter is not claimed again when feedback arrives",
      );
      assert.equal((await deadLetteredDetections(db, tenant)).length, 1);
    });

    it("claims a trace whose worker keeps dying alone, then moves it aside and judges the traces claimed with it", async () => {
      const killer = traces[6];
      const batchMates = traces.slice(7, 10);
      await insertTraces(db, tenant, [killer]);
      await insertTraces(db, tenant, batchMates);
      // A worker claims the four and dies (its leases run out unfinished); after a restart it takes the oldest
      // abandoned claim, the killer, alone, and dies again.
      const claimedByDyingWorker = async () =>
        (await claimDueTraces(db, { quietMs: 0, limit: 100, leaseMs: 1 })).map((c) => c.traceId).sort();
      assert.deepEqual(await claimedByDyingWorker(), [killer, ...batchMates].map((t) => t.id).sort());
      await leasesRunOut();
      assert.deepEqual(await claimedByDyingWorker(), [killer.id]);
      await leasesRunOut();

      errors.length = 0;
      assert.equal(await drain(db, tenant, worker()), 3);
      for (const t of batchMates) assert.ok(await judgedByDetectors(db, tenant, t.id), `${t.id} is judged`);
      assert.equal(await getVerdict(db, tenant, killer.id), null);
      const [dead] = (await deadLetteredDetections(db, tenant)).filter((d) => d.traceId === killer.id);
      assert.match(dead.error, /did not finish in 2 attempts, the last one abandoned when its lease ran out/);
      assert.equal(await pendingDetections(db, tenant), 0);
      assert.equal(errors.length, 1);
    });

    it("shows the tenant its dead letters over HTTP: a count on /v1/patterns and the list on /v1/dead-letters", async () => {
      const key = (await createApiKey(db, { role: "tenant", tenantId: tenant })).key;
      const app = createApp({
        db,
        authenticator: new Authenticator(db),
        metrics: new ServerMetrics(),
        maxBodyBytes: 1 << 20,
        tenantRoutes: [{ path: "/", app: patternRoutes({ db, maxBodyBytes: 1 << 20 }) }],
      });
      const get = async (path: string) =>
        (await app.request(path, { headers: { authorization: `Bearer ${key}` } })).json() as Promise<{
          deadLettered?: number;
          data: { traceId: string; error: string }[];
        }>;
      const stored = await deadLetteredDetections(db, tenant);
      assert.ok(stored.length > 0);
      assert.equal((await get("/v1/patterns")).deadLettered, stored.length);
      const listed = (await get("/v1/dead-letters")).data;
      assert.deepEqual(
        listed.map((d) => [d.traceId, d.error]),
        stored.map((d) => [d.traceId, d.error]),
      );
    });
  });
}
