import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DetectorRegistry, type EvalRow, type PromptRow, solutionsByQuestion, Trace } from "@arc/core";
import { simulateProductionTraffic } from "@arc/core/testing";
import type { Database } from "../store/database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { insertTraces } from "../store/trace-store.ts";
import { getDataset } from "./dataset-store.ts";
import { DetectionWorker } from "./detection-worker.ts";
import {
  lockDatasetBuilds,
  parseDatasetRequest,
  passedRows,
  synthesizeDataset,
} from "./synthesize-dataset.ts";

/** Gateway traffic: the same episodes, recorded without the reference solution the simulator knows. */
const traffic = simulateProductionTraffic({ seed: 11, count: 300 });
const gatewayTraces = traffic.map((s) => Trace.parse({ ...s.trace, metadata: undefined }));
const resolver = solutionsByQuestion(traffic.map((s) => s.task));
const setupRegistry = (registry: DetectorRegistry) => {
  registry.resolveSolutionsWith(resolver);
};

for (const target of databasesUnderTest()) {
  describe(`dataset synthesis on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;

    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "acme")).id;
      await insertTraces(db, tenant, gatewayTraces);
      const worker = new DetectionWorker(db, { config: { quietMs: 0, batchSize: 500 }, setupRegistry });
      while ((await worker.runOnce()).judged > 0);
    });
    after(() => db?.close());

    it("makes verifiable eval rows from traffic without stored solutions through the tenant's resolver", async () => {
      const request = parseDatasetRequest({ kind: "eval", seed: 1, perPattern: 50, generalSize: 10 });
      const without = await synthesizeDataset(db, tenant, request, { createdBy: "api" });
      const referenceFree = (await getDataset(db, tenant, without.dataset.id)).rows as EvalRow[];
      assert.ok(referenceFree.length > 0);
      assert.ok(
        referenceFree.every((r) => r.solution === undefined && r.context?.messages.length),
        "without a solution every row is reference-free, with the agent's recorded prompt",
      );
      assert.equal(without.dataset.stats.referenceFree, referenceFree.length);
      const made = await synthesizeDataset(db, tenant, request, { createdBy: "api", setupRegistry });
      assert.ok(made.dataset.rowCount > 10, `rows: ${JSON.stringify(made.dataset.stats)}`);
      const rows = (await getDataset(db, tenant, made.dataset.id)).rows as EvalRow[];
      const byTrace = new Map(traffic.map((s) => [s.trace.id as string, s.task.solution]));
      for (const row of rows) {
        const source = row.meta.sourceTraceIds[0] ?? row.meta.sourceId;
        assert.deepEqual(row.solution, byTrace.get(source as string));
      }
      assert.ok(rows.some((r) => r.meta.slice === "general"));
    });

    it("gives the same dataset for the same seed and another for another seed", async () => {
      const request = (seed: number) => parseDatasetRequest({ kind: "prompts", seed, size: 40 });
      const a = await synthesizeDataset(db, tenant, request(5), { createdBy: "api", setupRegistry });
      const b = await synthesizeDataset(db, tenant, request(5), { createdBy: "api", setupRegistry });
      const c = await synthesizeDataset(db, tenant, request(6), { createdBy: "api", setupRegistry });
      assert.equal(b.dataset.version, a.dataset.version);
      assert.equal(b.created, false);
      assert.notEqual(c.dataset.version, a.dataset.version);
    });

    it("takes each failed prompt once for a proportional pool, and refuses an unknown way of sampling", async () => {
      // a tenant of its own: another test's EvalSet would keep its failed prompts out of any pool
      const own = (await createTenant(db, "proportional")).id;
      await insertTraces(db, own, gatewayTraces);
      const worker = new DetectionWorker(db, { config: { quietMs: 0, batchSize: 500 }, setupRegistry });
      while ((await worker.runOnce()).judged > 0);
      const request = (failureSampling: string) =>
        parseDatasetRequest({
          kind: "prompts",
          seed: 3,
          size: 160,
          failureSamplingRatio: 0.5,
          failureSampling,
        });
      const build = async (failureSampling: string) => {
        const made = await synthesizeDataset(db, own, request(failureSampling), {
          createdBy: "api",
          setupRegistry,
        });
        const rows = ((await getDataset(db, own, made.dataset.id)).rows as PromptRow[]).filter(
          (r) => r.meta.source === "failure",
        );
        return { rows, distinct: made.dataset.stats.distinctFailurePrompts };
      };
      const proportional = await build("proportional");
      assert.ok(proportional.distinct >= 80, `distinct failed prompts: ${proportional.distinct}`);
      assert.equal(new Set(proportional.rows.map((r) => r.question)).size, 80, "80 failure rows, no repeats");
      const balanced = await build("balanced");
      assert.ok(new Set(balanced.rows.map((r) => r.question)).size < 80, "balanced repeats rare patterns");
      assert.throws(() => request("random"), /failureSampling/);
    });

    it("reads the passed traces of the replay slice in a seeded order spread over all of them, not the lowest ids", async () => {
      const registry = new DetectorRegistry();
      setupRegistry(registry);
      const ids = async (seed: number) =>
        (await passedRows(db, tenant, registry, { seed, limit: 20 })).map((r) => r.meta.id as string);
      const [a, again, other, all] = [
        await ids(1),
        await ids(1),
        await ids(2),
        await passedRows(db, tenant, registry, { seed: 1 }),
      ];
      assert.equal(a.length, 20);
      assert.deepEqual(again, a, "the same seed reads the same traces");
      assert.notDeepEqual(new Set(other), new Set(a), "another seed reads other traces");
      const lowest = all
        .map((r) => r.meta.id as string)
        .sort()
        .slice(0, 20);
      assert.notDeepEqual([...a].sort(), lowest, "the sample is not the first traces by id");
      assert.ok(all.length > 40, `passed traces with a solution: ${all.length}`);
    });

    it("waits while another build of the same tenant holds the dataset-build lock, then builds", async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked!: () => void;
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = db.transaction(async (tx) => {
        await lockDatasetBuilds(tx, tenant);
        locked();
        await held;
      });
      await lockTaken;
      let done = false;
      const build = synthesizeDataset(
        db,
        tenant,
        parseDatasetRequest({ kind: "prompts", seed: 9, size: 10 }),
        {
          createdBy: "api",
          setupRegistry,
        },
      ).then((made) => {
        done = true;
        return made;
      });
      try {
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(done, false, "the build waits for the lock");
      } finally {
        release();
        await holder;
      }
      assert.ok((await build).dataset.rowCount > 0);
    });
  });
}
