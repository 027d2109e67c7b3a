import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Trace } from "@arc/core";
import { simulateProductionTraffic } from "@arc/core/testing";
import type { Database } from "../store/database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { insertFeedback, insertTraces } from "../store/trace-store.ts";
import { DetectionWorker } from "./detection-worker.ts";
import { getVerdict } from "./verdict-store.ts";

/** A production trace as the gateway records it (no reference solution), and the SDK's copy that carries one. */
const [simulated] = simulateProductionTraffic({ seed: 11, count: 1, envMix: { toolcall: 1 } });
const sdkCopy = Trace.parse(simulated.trace);
const { solution, ...gatewayMetadata } = sdkCopy.metadata as Record<string, unknown>;
const gatewayCopy = Trace.parse({ ...simulated.trace, metadata: gatewayMetadata });

/** Judges every queued trace. */
async function drain(db: Database): Promise<number> {
  const worker = new DetectionWorker(db, { config: { quietMs: 0, batchSize: 100 } });
  let judged = 0;
  for (let n = -1; n !== 0; judged += n) n = (await worker.runOnce()).judged;
  return judged;
}

for (const target of databasesUnderTest()) {
  describe(`late data on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;
    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "late")).id;
    });
    after(() => db?.close());

    it("judges a trace again when its reference solution, then a correction, arrive after it was judged", async () => {
      assert.ok(solution !== undefined, "the simulated trace carries its solution");
      await insertTraces(db, tenant, [gatewayCopy]);
      assert.equal(await drain(db), 1);
      const first = await getVerdict(db, tenant, gatewayCopy.id);
      assert.equal(first?.status, "unknown");

      // the SDK's copy of the same trace, flushed later, brings metadata.solution
      await insertTraces(db, tenant, [sdkCopy]);
      assert.equal(await drain(db), 1, "the merged trace is judged again");
      const second = await getVerdict(db, tenant, gatewayCopy.id);
      assert.notEqual(second?.status, "unknown", JSON.stringify(second));
      assert.equal(second?.revision, (first?.revision ?? 0) + 1);

      // the same copy again changes nothing, so nothing is judged again
      await insertTraces(db, tenant, [sdkCopy]);
      assert.equal(await drain(db), 0);

      // a reviewer's correction arriving later queues it again too
      await insertFeedback(db, tenant, {
        id: "fb-correction",
        traceId: gatewayCopy.id,
        correction: JSON.stringify((solution as { calls?: unknown[] }).calls?.[0] ?? solution),
      });
      assert.equal(await drain(db), 1, "the corrected trace is judged again");
      assert.equal((await getVerdict(db, tenant, gatewayCopy.id))?.revision, (second?.revision ?? 0) + 1);
    });
  });
}
