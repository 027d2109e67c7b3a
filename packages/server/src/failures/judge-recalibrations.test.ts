import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Trace } from "@arc/core";
import {
  type HostedJudgeDouble,
  startHostedJudgeDouble,
} from "../judges/__fixtures__/hosted-judge-double.ts";
import { CITY_RUBRIC, MISREAD_CITY_TRACE } from "../judges/__fixtures__/misread-city.ts";
import { addAnnotation } from "../judges/annotation-store.ts";
import { calibrateJudge } from "../judges/calibrate-judge.ts";
import { putJudgeModel, putRubric } from "../judges/judge-store.ts";
import { judgeTrust } from "../judges/judge-trust.ts";
import { judgeQueue } from "../judges/tenant-judge.ts";
import { listAudit } from "../store/audit-log.ts";
import type { Database } from "../store/database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { insertTraces } from "../store/trace-store.ts";
import { getRecalibration, runDueRecalibrations } from "./judge-recalibrations.ts";
import { tenantRegistry } from "./tenant-registry.ts";

/** A trace no family verifies, started `at`: the agent read the city right (Oslo) or wrong (Bergen). */
function cityTrace(id: string, at: Date, city: "Oslo" | "Bergen", tools = ["get_weather"]) {
  const startedAt = at.toISOString();
  const [step] = MISREAD_CITY_TRACE.steps;
  return Trace.parse({
    id,
    startedAt,
    steps: [
      {
        ...step,
        startedAt,
        llm: {
          ...step.llm,
          ...(tools.length
            ? { tools: tools.map((name) => ({ type: "function", function: { name, parameters: {} } })) }
            : {}),
          output: { content: `{"tool":"get_weather","args":{"city":"${city}","unit":"c"}}` },
        },
      },
    ],
  });
}

for (const target of databasesUnderTest()) {
  describe(`judges re-calibrated when they change, on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let judge: HostedJudgeDouble;
    let upstreams: { judges: { baseUrl: string } };
    before(async () => {
      db = await target.open();
      judge = await startHostedJudgeDouble('"city":"Bergen"');
      upstreams = { judges: { baseUrl: judge.url } };
    });
    after(async () => {
      await db?.close();
      await judge?.close();
    });

    it("re-calibrates after a change by itself, through the judge's queue, untrusted until it passes, and says why", async () => {
      const { id: tenantId } = await createTenant(db, "recalibrate");
      await putRubric(db, tenantId, CITY_RUBRIC);
      await putJudgeModel(db, tenantId, { upstream: "judges", model: "judge-1" }, upstreams);
      const start = Date.now() - 3_600_000;
      const traces = Array.from({ length: 60 }, (_, i) =>
        cityTrace(`city-${i}`, new Date(start + i * 1_000), i % 2 ? "Oslo" : "Bergen"),
      );
      await insertTraces(db, tenantId, traces);
      for (const [i, trace] of traces.entries())
        await addAnnotation(
          db,
          tenantId,
          { traceId: trace.id, label: i % 2 ? "pass" : "fail", rationale: "checked by hand" },
          "test",
        );
      const labeller = await tenantRegistry(db, tenantId, undefined);
      await calibrateJudge(db, tenantId, { upstreams, labeller }, 100);
      assert.equal((await judgeTrust(db, tenantId)).trusted, true, "calibrated on 60 gold labels");
      const calibrations = async () =>
        Number(
          (
            await db.query<{ n: number }>(
              "select count(*)::int as n from judge_calibrations where tenant_id = $1",
              [tenantId],
            )
          )[0].n,
        );
      const run = (options: Parameters<typeof runDueRecalibrations>[2]) =>
        runDueRecalibrations(db, { upstreams }, options);

      assert.deepEqual(await run({ settleMs: 0 }), [], "an unchanged, trusted judge is not re-calibrated");
      assert.equal(await getRecalibration(db, tenantId), undefined);

      // a new rubric: untrusted at once, re-calibrated once the change settled, trusted again
      await putRubric(db, tenantId, CITY_RUBRIC);
      assert.deepEqual(await run({ settleMs: 60_000 }), [], "a change waits for its settle time");
      const scheduled = await getRecalibration(db, tenantId);
      assert.equal(scheduled?.status, "scheduled");
      assert.match(scheduled?.why ?? "", /^rubric v2 was never calibrated/);
      assert.ok(Date.parse(scheduled?.nextAt ?? "") > Date.now() + 50_000);
      assert.equal((await judgeTrust(db, tenantId)).trusted, false);
      await db.query("update judge_recalibrations set next_at = now() where tenant_id = $1", [tenantId]);
      const before = judge.calls;
      const [rubricRun] = await run({ settleMs: 60_000 });
      assert.equal(rubricRun.status, "trusted", rubricRun.outcome);
      assert.equal(judge.calls - before, 60, "the 60 gold traces, judged again under rubric v2");
      assert.equal(judge.peakOpen, 1, "one call at a time: the judge's queue holds its default concurrency");
      assert.equal(judgeQueue(upstreams.judges, "judge-1").stats().peakInFlight, 1);
      assert.equal(await calibrations(), 2);
      assert.equal((await judgeTrust(db, tenantId)).trusted, true);
      const [audited] = (await listAudit(db, tenantId, { kind: "judge", id: "judge-1" })).slice(-1);
      assert.equal(audited.action, "recalibrate");
      assert.equal(audited.actor, "system:judge-recalibration");
      assert.equal(audited.toState, "trusted");
      assert.match(String(audited.evidence.why), /^rubric v2 was never calibrated/);
      assert.equal(audited.evidence.kappa, 1);
      assert.deepEqual(await run({ settleMs: 0 }), [], "trusted again: nothing is due");

      // a tool the traffic offers that no labelled trace was offered: re-run with a back-off, never in a loop
      await insertTraces(db, tenantId, [
        cityTrace("refund", new Date(Date.now() + 1_000), "Oslo", ["get_weather", "refund_order"]),
      ]);
      const [toolsRun] = await run({ settleMs: 0, retryMs: 60_000 });
      assert.equal(toolsRun.status, "scheduled", "the unlabelled trace left refund_order uncalibrated");
      assert.match(toolsRun.outcome, /offers tools its traces were never offered \(refund_order\)/);
      assert.deepEqual(await run({ settleMs: 0, retryMs: 60_000 }), [], "its back-off holds the next run");
      assert.equal(await calibrations(), 3);
      assert.equal((await getRecalibration(db, tenantId))?.attempts, 1);
      await addAnnotation(db, tenantId, { traceId: "refund", label: "pass", rationale: "as asked" }, "test");
      await db.query("update judge_recalibrations set next_at = now() where tenant_id = $1", [tenantId]);
      const [labelledRun] = await run({ settleMs: 0, retryMs: 60_000 });
      assert.equal(labelledRun.status, "trusted", labelledRun.outcome);
      assert.equal((await getRecalibration(db, tenantId))?.attempts, 2);

      // another model that disagrees with every label: re-calibrated, and stays untrusted, saying why
      judge.contrary = true;
      await putJudgeModel(db, tenantId, { upstream: "judges", model: "judge-2" }, upstreams);
      const [modelRun] = await run({ settleMs: 0 });
      assert.equal(modelRun.status, "untrusted");
      assert.match(modelRun.why, /^the judge model judge-2 was never calibrated/);
      assert.match(
        modelRun.outcome,
        /^its calibration's kappa is -1\.000, under the tenant's judgeMinKappa 0\.6/,
      );
      const trust = await judgeTrust(db, tenantId);
      assert.equal(trust.trusted, false);
      assert.deepEqual(
        await run({ settleMs: 0 }),
        [],
        "a kappa under the gate is a person's move, not a re-run",
      );
      assert.equal(await calibrations(), 5);
      const recalibration = await getRecalibration(db, tenantId);
      assert.equal(recalibration?.status, "untrusted");
      assert.match(recalibration?.outcome ?? "", /kappa is -1\.000/);
    });
  });
}
