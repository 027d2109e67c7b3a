import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CalibrationItem, calibrationReport, DetectionConfig, Trace } from "@arc/core";
import type { Database } from "../store/database.ts";
import { saveDetectorConfig } from "../store/detector-configs.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { insertTraces } from "../store/trace-store.ts";
import { CITY_RUBRIC } from "./__fixtures__/misread-city.ts";
import { putJudgeModel, putRubric, saveCalibration } from "./judge-store.ts";
import { judgeTrust } from "./judge-trust.ts";

const UPSTREAMS = { judges: { baseUrl: "http://127.0.0.1:9/v1" } };

/** `agree` labelled traces the judge got right and `disagree` it got wrong, half of each failed. */
function items(agree: number, disagree: number): CalibrationItem[] {
  const item = (i: number, right: boolean): CalibrationItem => {
    const failed = i % 2 === 0;
    return { traceId: `t${i}`, label: { failed }, judged: { failed: right ? failed : !failed } };
  };
  return [
    ...Array.from({ length: agree }, (_, i) => item(i, true)),
    ...Array.from({ length: disagree }, (_, i) => item(agree + i, false)),
  ];
}

for (const target of databasesUnderTest()) {
  describe(`trusting a tenant's judge, on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    before(async () => {
      db = await target.open();
    });
    after(() => db?.close());

    it("trusts it only once calibrated on 50 labelled traces to the tenant's kappa, for its rubric and model", async () => {
      const { id: tenantId } = await createTenant(db, "trust");
      await putRubric(db, tenantId, CITY_RUBRIC);
      await putJudgeModel(db, tenantId, { upstream: "judges", model: "judge-1" }, UPSTREAMS);
      const reason = async () => {
        const trust = await judgeTrust(db, tenantId);
        return trust.trusted ? `trusted: ${trust.basis}` : trust.reason;
      };
      assert.match(
        await reason(),
        /^the judge \(judge-1, rubric v1\) was never calibrated: calibrate it on at least 50 labelled traces to a kappa of 0\.6/,
      );

      const calibrate = (agree: number, disagree: number, model = "judge-1", rubricVersion = 1) =>
        saveCalibration(db, tenantId, {
          rubricVersion,
          model,
          report: calibrationReport(items(agree, disagree)),
        });
      await calibrate(40, 0);
      assert.match(await reason(), /^its calibration judged 40 labelled traces, under 50/);
      // 45 of 60 agree, evenly split labels: kappa 0.5
      await calibrate(45, 15);
      assert.match(
        await reason(),
        /^its calibration's kappa is 0\.500, under the tenant's judgeMinKappa 0\.6/,
      );
      await saveDetectorConfig(db, tenantId, DetectionConfig.parse({ judgeMinKappa: 0.5 }));
      assert.match(
        await reason(),
        /^trusted: calibrated at .*: kappa 0\.500 on 60 labelled traces \(judgeMinKappa 0\.5\)/,
      );

      // a new rubric version, or another model, is not what was calibrated
      await putRubric(db, tenantId, CITY_RUBRIC);
      assert.match(await reason(), /^rubric v2 was never calibrated \(the latest calibration measured v1\)/);
      await calibrate(45, 15, "judge-1", 2);
      assert.match(await reason(), /^trusted/);
      await putJudgeModel(db, tenantId, { upstream: "judges", model: "judge-2" }, UPSTREAMS);
      assert.match(
        await reason(),
        /^the judge model judge-2 was never calibrated \(the latest calibration measured judge-1\)/,
      );

      // null: the tenant's explicit choice to trust its judge uncalibrated
      await saveDetectorConfig(db, tenantId, DetectionConfig.parse({ judgeMinKappa: null }));
      assert.match(await reason(), /^trusted: the tenant's judgeMinKappa is null/);
    });

    it("stops trusting it when the traffic since its calibration offers a tool its traces were never offered", async () => {
      const { id: tenantId } = await createTenant(db, "trust-tools");
      await putRubric(db, tenantId, CITY_RUBRIC);
      await putJudgeModel(db, tenantId, { upstream: "judges", model: "judge-1" }, UPSTREAMS);
      await saveCalibration(db, tenantId, {
        rubricVersion: 1,
        model: "judge-1",
        report: calibrationReport(items(60, 0)),
        tools: ["get_weather"],
      });
      /** A trace started now whose agent was offered `tools`. */
      const traffic = (id: string, tools: string[]) =>
        Trace.parse({
          id,
          startedAt: new Date(Date.now() + 1_000).toISOString(),
          steps: [
            {
              id: "s1",
              kind: "llm",
              startedAt: new Date(Date.now() + 1_000).toISOString(),
              llm: {
                messages: [{ role: "user", content: "Weather in Oslo?" }],
                tools: tools.map((name) => ({ type: "function", function: { name, parameters: {} } })),
                output: { content: "Sunny." },
              },
            },
          ],
        });
      await insertTraces(db, tenantId, [traffic("same-tools", ["get_weather"])]);
      assert.equal((await judgeTrust(db, tenantId)).trusted, true);
      await insertTraces(db, tenantId, [traffic("new-tools", ["get_weather", "refund_order"])]);
      const trust = await judgeTrust(db, tenantId);
      assert.equal(trust.trusted, false);
      assert.match(
        trust.trusted ? "" : trust.reason,
        /^the traffic since the calibration offers tools its traces were never offered \(refund_order\): calibrate it/,
      );
      await saveCalibration(db, tenantId, {
        rubricVersion: 1,
        model: "judge-1",
        report: calibrationReport(items(60, 0)),
        tools: ["get_weather", "refund_order"],
      });
      assert.equal((await judgeTrust(db, tenantId)).trusted, true, "calibrated again on the new tools");
    });
  });
}
