import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createJudgeDetector, type Detector, openAIJudgeClient, parseRubric, type Trace } from "@arc/core";
import { EmbeddedInferenceEngine, type RunningEngineServer, startEngineServer } from "@arc/engine";
import { CITY_RUBRIC, MISREAD_CITY_TRACE } from "./__fixtures__/misread-city.ts";

const MODEL_DIR = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));

const rubric = parseRubric(CITY_RUBRIC);
const trace = { ...MISREAD_CITY_TRACE, tenantId: "acme" } as unknown as Trace;

// A real model over real HTTP: `arc engine serve` on the shipped toolcall base, asked for structured output. That
// byte model was never trained to judge, so its verdicts mean nothing and its replies need not even be whole JSON
// (an unbounded number can run past max_tokens): this checks the path (the request, the schema-constrained reply,
// the strict reading, a verdict or a named reason for none), not the quality of a judgement.
describe("the judge detector on arc engine serve", () => {
  let server: RunningEngineServer;
  let judge: Detector;
  const replies: string[] = [];

  before(async () => {
    server = await startEngineServer(await EmbeddedInferenceEngine.load(MODEL_DIR), {
      modelId: "toolcall-judge",
      apiKey: "judge-key",
    });
    const client = openAIJudgeClient({ baseUrl: server.baseURL, apiKey: "judge-key" });
    judge = createJudgeDetector({
      rubric,
      model: "toolcall-judge",
      client: {
        complete: async (request) => {
          const answer = await client.complete(request);
          replies.push(answer.content);
          return answer;
        },
      },
    });
  });
  after(() => server.close());

  it("asks for the verdict schema, reads the reply strictly, and says why when it cannot", async () => {
    const [verdict] = await judge.detect(trace, {} as never);
    assert.equal(replies.length, 1);
    assert.ok(
      replies[0].startsWith('{"failed":'),
      `the reply follows the schema: ${replies[0].slice(0, 80)}`,
    );
    assert.equal(verdict.detectorId, "judge");
    if (verdict.status === "unknown") {
      assert.match(
        verdict.evidence.message,
        /^the judge could not judge it: (the judge's reply|failed:|class:|severity:|evidence:|confidence:)/,
      );
    } else {
      assert.equal(verdict.failed, verdict.class === "rubric_violation");
      assert.ok(verdict.score >= 0 && verdict.score <= 1);
    }
  });

  it("keeps a trace as unknown when the endpoint refuses the judge's key", async () => {
    const refused = createJudgeDetector({
      rubric,
      model: "toolcall-judge",
      client: openAIJudgeClient({ baseUrl: server.baseURL, apiKey: "wrong-key" }),
    });
    const [verdict] = await refused.detect(trace, {} as never);
    assert.equal(verdict.status, "unknown");
    assert.match(verdict.evidence.message, /HTTP 401/);
  });
});
