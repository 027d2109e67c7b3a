import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CalibrationItem, calibrationReport, DetectionConfig } from "@arc/core";
import { saveDetectorConfig } from "../store/detector-configs.ts";
import type { Database } from "../store/database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
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
  });
}
