import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  type CalibrationReport,
  calibrationReport,
  createJudgeDetector,
  DetectionConfig,
  openAIJudgeClient,
  parseRubric,
} from "@arc/core";
import { EmbeddedInferenceEngine, type RunningEngineServer, startEngineServer } from "@arc/engine";
import { saveDetectorConfig } from "../store/detector-configs.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { judgeLabelledTraces } from "./__fixtures__/toolcall-judge-data.ts";
import { TOOLCALL_JUDGE_RUBRIC } from "./__fixtures__/toolcall-judge-rubric.ts";
import { UNSEEN_FAMILY, unseenFamilyLabelledTraces } from "./__fixtures__/unseen-family-data.ts";
import { putJudgeModel, putRubric, saveCalibration } from "./judge-store.ts";
import { calibrationRefusal, judgeTrust } from "./judge-trust.ts";
import { tracesToolNames } from "./traffic-tools.ts";

const JUDGE_DIR = fileURLToPath(new URL("../../../../models/toolcall-judge", import.meta.url));

// The shipped toolcall judge, served by `arc engine serve`, measured on a family whose tools it never saw (the order
// desk's), against that family's verifier: it passes nearly every answer, so its kappa is about 0, and the gate a
// tenant's judge must pass refuses it there.
describe("the gate, on a family whose tools the shipped judge never saw", () => {
  let engine: RunningEngineServer;
  let report: CalibrationReport;
  let tools: string[];
  before(async () => {
    engine = await startEngineServer(await EmbeddedInferenceEngine.load(JUDGE_DIR, { maxBatchSize: 8 }), {
      modelId: "toolcall-judge",
      apiKey: "k",
    });
    const judge = createJudgeDetector({
      rubric: parseRubric(TOOLCALL_JUDGE_RUBRIC),
      model: "toolcall-judge",
      client: openAIJudgeClient({ baseUrl: engine.baseURL, apiKey: "k", timeoutMs: 120_000 }),
      maxTokens: 128,
    });
    const traces = unseenFamilyLabelledTraces(7, 80);
    assert.ok(traces.every((t) => t.trace.env === UNSEEN_FAMILY));
    assert.equal(traces.filter((t) => t.label.failed).length, 40, "half the answers take another action");
    report = calibrationReport(await judgeLabelledTraces(judge, traces, 4));
    tools = tracesToolNames(traces.map((t) => t.trace));
  });
  after(() => engine?.close());

  it("measures a kappa under the default threshold on at least 50 judged answers, and refuses the judge", async () => {
    assert.ok(report.judged >= 50, `judged ${report.judged} of ${report.items}`);
    assert.ok((report.kappa ?? 0) < 0.6, `kappa ${report.kappa} on the unseen family`);
    assert.match(
      calibrationRefusal(report, 0.6) ?? "trusted",
      /^its calibration's kappa is (-?0\.\d{3}|undefined), under the tenant's judgeMinKappa 0\.6$/,
    );
  });

  for (const target of databasesUnderTest())
    it(`leaves a tenant's judge calibrated there untrusted, on ${target.name}`, {
      skip: target.skip,
    }, async () => {
      const db = await target.open();
      try {
        const { id: tenantId } = await createTenant(db, "unseen-family");
        await putRubric(db, tenantId, TOOLCALL_JUDGE_RUBRIC);
        await putJudgeModel(db, tenantId, { upstream: "judges", model: "toolcall-judge" }, { judges: {} });
        await saveCalibration(db, tenantId, { rubricVersion: 1, model: "toolcall-judge", report, tools });
        const trust = await judgeTrust(db, tenantId);
        assert.equal(trust.trusted, false);
        assert.match(
          trust.trusted ? "" : trust.reason,
          /^its calibration's kappa is .*, under the tenant's judgeMinKappa 0\.6: calibrate it/,
        );
        // the same figures pass a threshold under them: the gate is the kappa, nothing else
        await saveDetectorConfig(db, tenantId, DetectionConfig.parse({ judgeMinKappa: -1 }));
        assert.equal((await judgeTrust(db, tenantId)).trusted, report.kappa !== null);
      } finally {
        await db.close();
      }
    });
});
