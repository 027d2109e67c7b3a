import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Trace } from "@arc/core";
import { simulateProductionTraffic } from "@arc/core/testing";
import type { Database } from "../store/database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { getTrace, insertFeedback, insertTraces } from "../store/trace-store.ts";
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

    it("merges the SDK's copy of a step the gateway recorded, filling in what it lacked, and judges the trace again", async () => {
      const startedAt = "2026-01-01T00:00:00.000Z";
      const llm = {
        modelRequested: "toolcall-base",
        messages: [{ role: "user" as const, content: "What is the weather in Oslo?" }],
      };
      const gatewayStep = Trace.parse({
        id: "late-step",
        startedAt,
        steps: [{ id: "call-1", kind: "llm", startedAt, latencyMs: 12, llm }],
      });
      // the SDK's copy of the same step: the error the caller saw, its own metadata, a different latency
      const sdkStep = Trace.parse({
        id: "late-step",
        startedAt,
        steps: [
          {
            id: "call-1",
            kind: "llm",
            startedAt,
            latencyMs: 30_000,
            llm,
            error: { message: "the client timed out", type: "timeout" },
            metadata: { attempt: 1 },
          },
        ],
      });
      assert.equal((await insertTraces(db, tenant, [gatewayStep])).steps, 1);
      assert.equal(await drain(db), 1);
      const first = await getVerdict(db, tenant, "late-step");
      assert.notEqual(first?.failureClass, "timeout");

      assert.equal((await insertTraces(db, tenant, [sdkStep])).steps, 0, "one step, not two");
      const [stored] = (await getTrace(db, tenant, "late-step"))?.steps ?? [];
      assert.deepEqual(stored.error, { message: "the client timed out", type: "timeout" });
      assert.deepEqual(stored.metadata, { attempt: 1 });
      assert.equal(stored.latencyMs, 12, "what the gateway recorded is kept");
      assert.equal(await drain(db), 1, "the merged trace is judged again");
      const second = await getVerdict(db, tenant, "late-step");
      assert.equal(second?.failureClass, "timeout", JSON.stringify(second));
      assert.equal(second?.revision, (first?.revision ?? 0) + 1);

      // the same copy again adds nothing, so nothing is written or judged again
      await insertTraces(db, tenant, [sdkStep]);
      assert.equal(await drain(db), 0);
    });

    it("stores the first of a step id a batch lists twice, as a re-send would", async () => {
      const startedAt = "2026-01-01T00:00:00.000Z";
      const step = { id: "twice", kind: "tool", startedAt, name: "lookup" };
      const trace = Trace.parse({
        id: "step-twice",
        startedAt,
        steps: [step, { ...step, name: "other", output: { rows: 1 } }],
      });
      assert.equal((await insertTraces(db, tenant, [trace])).steps, 1);
      const [stored] = (await getTrace(db, tenant, "step-twice"))?.steps ?? [];
      assert.deepEqual([stored.name, stored.output], ["lookup", undefined]);
    });
  });
}
