import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { calibrationReport, createJudgeDetector, openAIJudgeClient, parseRubric } from "@arc/core";
import { generateToolcallTasks } from "@arc/core/families";
import { EmbeddedInferenceEngine, type RunningEngineServer, startEngineServer } from "@arc/engine";
import {
  judgeLabelledTraces,
  type LabelledTrace,
  sampleLabelledTraces,
} from "./__fixtures__/toolcall-judge-data.ts";
import { TOOLCALL_JUDGE_RUBRIC } from "./__fixtures__/toolcall-judge-rubric.ts";

/**
 * What the judge must reach on these answers: above a judge that always says "passed" (agreement 0.65 here, kappa
 * 0). It measures 0.77 and 0.48 on them; `bench:judges` measures it on 512 held-out answers.
 */
const MIN_AGREEMENT = 0.7;
const MIN_KAPPA = 0.3;

const models = (name: string) => fileURLToPath(new URL(`../../../../models/${name}`, import.meta.url));

// The shipped judge, served by `arc engine serve` and asked through the judge detector, on answers of the shipped
// toolcall base that the verifier labelled: production requests of a seed neither the judge's data nor
// `bench:judges` uses.
describe("the shipped toolcall judge", () => {
  let base: RunningEngineServer;
  let judgeServer: RunningEngineServer;
  let traces: LabelledTrace[];

  before(async () => {
    base = await startEngineServer(await EmbeddedInferenceEngine.load(models("toolcall-base")), {
      modelId: "base",
      apiKey: "k",
    });
    judgeServer = await startEngineServer(await EmbeddedInferenceEngine.load(models("toolcall-judge")), {
      modelId: "toolcall-judge",
      apiKey: "k",
    });
    traces = await sampleLabelledTraces({
      baseURL: base.baseURL,
      apiKey: "k",
      model: "base",
      tasks: generateToolcallTasks({ split: "production", seed: 5151, count: 40 }),
      temperatures: [0, 1],
    });
  });
  after(async () => {
    await base.close();
    await judgeServer.close();
  });

  it("writes a verdict the strict reader accepts for every answer, and agrees with the verifier", async () => {
    const judge = createJudgeDetector({
      rubric: parseRubric(TOOLCALL_JUDGE_RUBRIC),
      model: "toolcall-judge",
      client: openAIJudgeClient({ baseUrl: judgeServer.baseURL, apiKey: "k", timeoutMs: 120_000 }),
      maxTokens: 128,
    });
    const items = await judgeLabelledTraces(judge, traces);
    const unjudged = items.filter((item) => item.judged === null).map((item) => item.traceId);
    assert.deepEqual(unjudged, [], "every answer gets a readable verdict");
    const report = calibrationReport(items);
    assert.ok(
      traces.some((t) => t.label.failed) && traces.some((t) => !t.label.failed),
      "the answers hold failures and passes",
    );
    assert.ok((report.agreement ?? 0) >= MIN_AGREEMENT, `agreement ${report.agreement} on ${report.items}`);
    assert.ok((report.kappa ?? 0) >= MIN_KAPPA, `kappa ${report.kappa}`);
  });
});
