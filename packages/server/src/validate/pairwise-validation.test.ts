import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { DetectionConfig } from "@arc/core";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { toolcallEvalFixture } from "../deploy/__fixtures__/toolcall-eval-fixture.ts";
import { setReleaseSettings } from "../deploy/release-settings.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import { CITY_RUBRIC } from "../judges/__fixtures__/misread-city.ts";
import { putJudgeModel, putRubric } from "../judges/judge-store.ts";
import { startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { saveDetectorConfig } from "../store/detector-configs.ts";
import { migrate } from "../store/migrate.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import { validateCandidate } from "./validate-candidate.ts";

/** Reference-free requests: no family verifies them, so only the tenant's judge can. */
const QUESTIONS = Array.from({ length: 12 }, (_, i) => `Cancel booking ${100 + i} for tonight.`);
const DONE = (q: string) => `Cancelled booking ${q.match(/\d+/)?.[0]}.`;
const REFUSED = "I can't do that.";

/**
 * A scripted judge on real HTTP, the test double for a hosted LLM judge: it explains and scores each numbered answer,
 * 1 when it says the booking is cancelled, else 0, and records where each good answer stood.
 */
function startScriptedJudge(): Promise<{ url: string; goodPlaces: number[]; server: Server }> {
  const goodPlaces: number[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const { messages } = JSON.parse(body) as { messages: { content: string }[] };
      const answers = [...messages[1].content.matchAll(/^\[answer (\d+)\] (.*)$/gm)];
      // RULER's scheme, as the judge is asked: an explanation, then the score, per numbered answer
      const scores = answers.map(([, place, text]) => {
        const good = text.includes("Cancelled");
        if (good) goodPlaces.push(Number(place));
        const explanation = good ? "cancels the booking asked for" : "refuses a request it could do";
        return { answer: Number(place), explanation, score: good ? 1 : 0 };
      });
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          choices: [{ message: { role: "assistant", content: JSON.stringify({ scores }) } }],
          usage: { total_tokens: 20 },
        }),
      );
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, goodPlaces, server }),
    ),
  );
}

describe("pairwise validation of reference-free rows", () => {
  let db: Database;
  let judge: Awaited<ReturnType<typeof startScriptedJudge>>;
  /** Answer-book models (test doubles for trained models): one cancels every booking, one refuses every request. */
  const pool = new ModelPool({
    loadEngine: async (artifactDir) =>
      new AnswerBookEngine(
        new Map(QUESTIONS.map((q) => [q, artifactDir.endsWith("/cancels") ? DONE(q) : REFUSED])),
        "I'm sorry, I can't help with that.",
      ),
  });

  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
    judge = await startScriptedJudge();
  });
  after(async () => {
    await db.close();
    judge.server.close();
  });

  /** A tenant whose production model and candidate answer from the books named, judged pairwise; its validation. */
  async function validatePairwise(
    production: string,
    candidate: string,
    judgeUrl = judge.url,
    trusted = true,
  ) {
    const local = await startReleaseTestServer(db, { pool, startWorkers: false });
    try {
      const evalSet = {
        ...toolcallEvalFixture(local.tenantId).evalSet,
        version: `sha256:pairwise-${production}-${candidate}`,
        rows: QUESTIONS.map((question, i) => ({
          id: `free-${i}`,
          env: "assistant",
          question,
          context: { messages: [{ role: "user", content: question }] },
          meta: { slice: "pat-cancel", sourceTraceIds: [] },
        })),
      };
      const stored = await fetch(`${local.url}/v1/eval-sets`, {
        method: "POST",
        headers: { authorization: `Bearer ${local.key}`, "content-type": "application/json" },
        body: JSON.stringify(evalSet),
      });
      assert.equal(stored.status, 201, await stored.text());
      await registerModelVersion(db, local.tenantId, {
        name: "production",
        status: "promoted",
        artifactDir: `/models/${production}`,
        actor: "test",
      });
      await registerModelVersion(db, local.tenantId, {
        name: "candidate",
        artifactDir: `/models/${candidate}`,
        actor: "test",
      });
      const upstreams = { judges: { baseUrl: judgeUrl } };
      await putRubric(db, local.tenantId, CITY_RUBRIC);
      await putJudgeModel(db, local.tenantId, { upstream: "judges", model: "scripted-judge" }, upstreams);
      await setReleaseSettings(db, local.tenantId, { gates: { judging: "pairwise" } });
      // the tenant's explicit choice to trust its judge uncalibrated, or a judge never calibrated
      if (trusted)
        await saveDetectorConfig(db, local.tenantId, DetectionConfig.parse({ judgeMinKappa: null }));
      return await validateCandidate(
        { ...local.release.validatorDeps, judgeUpstreams: upstreams },
        local.tenantId,
        "candidate",
        "test",
      );
    } finally {
      await local.close();
    }
  }

  it("passes a candidate the judge prefers on every row, showing it first on some rows and second on others", async () => {
    judge.goodPlaces.length = 0;
    const { validation, model } = await validatePairwise("refuses", "cancels");
    const { report } = validation;
    assert.equal(validation.decision, "pass", report.reasons.join("; "));
    assert.equal(model.status, "validated");
    assert.deepEqual(
      { ...report.scores.winRate, interval: undefined },
      { n: 12, wins: 12, losses: 0, ties: 0, rate: 1, interval: undefined },
    );
    assert.ok((report.scores.winRate?.interval.lower ?? 0) > 0.7);
    const slice = report.slices.find((s) => s.slice === "pat-cancel");
    assert.deepEqual(slice?.judgedBy, { "judge:scripted-judge": 12 });
    // the order is drawn per row: the candidate's answer stood first on some rows and second on the others
    assert.equal(judge.goodPlaces.length, 12);
    assert.ok(judge.goodPlaces.includes(1) && judge.goodPlaces.includes(2), `places ${judge.goodPlaces}`);
  });

  it("rejects a candidate the judge finds worse, with the judged rows and the win rate in the report", async () => {
    const { validation, model } = await validatePairwise("cancels", "refuses");
    const { report } = validation;
    assert.equal(validation.decision, "fail");
    assert.equal(model.status, "rejected");
    assert.deepEqual([report.scores.winRate?.wins, report.scores.winRate?.losses], [0, 12]);
    assert.equal(report.checks.find((c) => c.gate === "win_rate")?.passed, false);
    assert.match(report.reasons.join("\n"), /win rate 0\.0% over the current model on 12 judged items/);
    const slice = report.slices.find((s) => s.slice === "pat-cancel");
    assert.deepEqual([slice?.n, slice?.candidateFailureRate, slice?.baselineFailureRate], [12, 1, 0]);
  });

  it("decides nothing while the judge is down, and says why", async () => {
    // nothing listens on port 9: every judge call fails, so no row is decided
    await assert.rejects(
      validatePairwise("refuses", "cancels", "http://127.0.0.1:9/v1"),
      /the judge \(scripted-judge\) decided none of the 12 reference-free eval rows yet/,
    );
  });

  it("ties two candidates the judge scores alike, and a tie wins nothing", async () => {
    const { validation } = await validatePairwise("cancels", "cancels");
    assert.deepEqual(
      [validation.report.scores.winRate?.ties, validation.report.scores.winRate?.rate],
      [12, 0.5],
    );
    assert.equal(validation.report.checks.find((c) => c.gate === "win_rate")?.passed, false);
  });

  it("lets an untrusted judge gate no validation: rows only it can judge are refused, saying why", async () => {
    await assert.rejects(
      validatePairwise("refuses", "cancels", judge.url, false),
      /no eval row can be judged: all 12 need the tenant's judge, which is not trusted yet: the judge \(scripted-judge, rubric v1\) was never calibrated/,
    );
  });
});
