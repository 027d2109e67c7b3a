import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { toolcallFamily } from "@arc/core/families";
import { waitUntil } from "@arc/core/testing";
import { EmbeddedInferenceEngine, type RunningEngineServer, startEngineServer } from "@arc/engine";
import { runArcCli } from "../cli/__fixtures__/run-arc-cli.ts";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import { CITY_RUBRIC, MISREAD_CITY_TRACE } from "./__fixtures__/misread-city.ts";

const MODEL_DIR = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));

const RUBRIC = CITY_RUBRIC;
const trace = MISREAD_CITY_TRACE;

// A real `arc serve`, and a real model behind an allowlisted upstream (`arc engine serve` on the shipped toolcall base,
// which was never trained to judge: its verdicts here check the path, not judgement).
describe("a tenant's judge, through the API and the detection worker", () => {
  let home: string;
  let engine: RunningEngineServer;
  let server: RunningServer;

  const api = async (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${server.credentials?.tenantKey}`,
        "content-type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  before(async () => {
    process.env.ARC_TEST_JUDGE_KEY = "judge-key";
    engine = await startEngineServer(await EmbeddedInferenceEngine.load(MODEL_DIR), {
      modelId: "toolcall-judge",
      apiKey: "judge-key",
    });
    home = mkdtempSync(join(tmpdir(), "arc-judges-"));
    const upstreams = { judges: { baseUrl: engine.baseURL, apiKeyEnv: "ARC_TEST_JUDGE_KEY" } };
    server = await startServer(loadServerConfig({}, { home, port: 0, upstreams }), {
      // the failure service's timer ticks every 200 ms: it schedules the re-calibration of a changed judge
      failures: { config: { quietMs: 0, pollMs: 50, scheduleCheckMs: 200 } },
    });
  });
  after(async () => {
    await server?.close();
    await engine?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("versions the rubric, and refuses a bad one naming the field", async () => {
    assert.deepEqual(await (await api("GET", "/judges")).json(), {
      rubric: null,
      model: null,
      calibration: null,
      trust: { trusted: false, reason: "the tenant has no judge (a rubric and a model)" },
      recalibration: null,
    });
    const first = await api("PUT", "/judges/rubric", RUBRIC);
    assert.equal(first.status, 201);
    assert.equal((await first.json()).version, 1);
    const second = await (await api("PUT", "/judges/rubric", RUBRIC)).json();
    assert.equal(second.version, 2);
    const bad = await api("PUT", "/judges/rubric", { criteria: ["x"], classes: [{ name: "Bad Name" }] });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /classes\[0\]\.name/);
    assert.equal((await (await api("GET", "/judges")).json()).rubric.version, 2);
  });

  it("takes a judge model only on an allowlisted upstream", async () => {
    const refused = await api("PUT", "/judges/model", { upstream: "elsewhere", model: "m" });
    assert.equal(refused.status, 400);
    assert.match(
      (await refused.json()).error.message,
      /expected one of the upstreams the admin configured \(judges\)/,
    );
    const set = await api("PUT", "/judges/model", {
      upstream: "judges",
      model: "toolcall-judge",
      callsPerMinute: 30,
    });
    assert.equal(set.status, 200);
    assert.deepEqual(await set.json(), {
      upstream: "judges",
      model: "toolcall-judge",
      callsPerMinute: 30,
      tokensPerMinute: 60_000,
    });
  });

  it("judges a trace that has no verifier in the detection worker once trusted, and on demand", async () => {
    type Verdicts = {
      judgement?: { verdicts: { detectorId: string; status: string; evidence: { message: string } }[] };
    };
    // never calibrated: the detection worker judges the trace without the judge
    const early = { ...trace, id: "before-trust" };
    assert.equal((await api("POST", "/traces", { traces: [early] })).status, 200);
    const before = await waitUntil(async () => {
      const answer = await api("GET", `/verdicts?traceId=${early.id}`);
      return answer.status === 200 && ((await answer.json()) as Verdicts);
    }, "the worker's verdict on the trace before the judge is trusted");
    assert.deepEqual(
      before.judgement?.verdicts.filter((v) => v.detectorId === "judge"),
      [],
      "an untrusted judge fails no trace",
    );
    // the tenant's explicit choice to trust its judge uncalibrated
    assert.equal((await api("PUT", "/detectors", { judgeMinKappa: null })).status, 200);
    assert.equal((await api("POST", "/traces", { traces: [trace] })).status, 200);
    let stored: Verdicts = {};
    await waitUntil(
      async () => {
        const answer = await api("GET", `/verdicts?traceId=${trace.id}`);
        if (answer.status !== 200) return false;
        stored = await answer.json();
        return (stored.judgement?.verdicts ?? []).some((v) => v.detectorId === "judge");
      },
      "the worker's verdict on the trace, with the judge's",
      { timeoutMs: 30_000 },
    );
    const judged = stored.judgement?.verdicts.find((v) => v.detectorId === "judge");
    assert.ok(judged);
    // the byte model's reply may not parse: then the verdict is unknown and names what was wrong with the reply
    if (judged.status === "unknown") assert.match(judged.evidence.message, /the judge could not judge it/);
    const tested = await api("POST", "/judges/test", { traceId: trace.id });
    assert.equal(tested.status, 200);
    const [now] = (await tested.json()).data;
    assert.equal(now.detectorId, "judge");
    assert.equal((await api("POST", "/judges/test", { traceId: "no-such-trace" })).status, 404);
    // back to the default: the judge is trusted once calibrated
    assert.equal((await api("PUT", "/detectors", { judgeMinKappa: 0.6 })).status, 200);
  });

  it("is calibrated against the verifier's labels and people's feedback on recent traces", async () => {
    const tasks = toolcallFamily.generate({ split: "production", seed: 7, count: 2 });
    const labelled = tasks.map((task, i) => {
      const right = toolcallFamily.reference(task)[0];
      return {
        ...MISREAD_CITY_TRACE,
        id: `labelled-${i}`,
        env: "toolcall",
        metadata: { solution: task.solution },
        steps: [
          {
            ...MISREAD_CITY_TRACE.steps[0],
            llm: {
              messages: [{ role: "user", content: task.question }],
              // the first answers right, the second calls a tool no request asks for
              output: { content: i === 0 ? right : '{"tool":"send_email","args":{}}' },
            },
          },
        ],
      };
    });
    // no family verifies this one: a person's feedback labels it
    const reviewed = { ...MISREAD_CITY_TRACE, id: "reviewed-by-a-person" };
    assert.equal((await api("POST", "/traces", { traces: [...labelled, reviewed] })).status, 200);
    const feedback = {
      id: "fb-1",
      traceId: reviewed.id,
      label: "thumbs_down",
      comment: "it booked Bergen, I said Oslo",
    };
    assert.equal((await api("POST", "/feedback", feedback)).status, 200);
    const answer = await api("POST", "/judges/calibrate", { limit: 10 });
    assert.equal(answer.status, 200);
    const calibration = await answer.json();
    assert.equal(calibration.rubricVersion, 2);
    assert.equal(calibration.model, "toolcall-judge");
    // the trace with no env and no feedback has no label; the toolcall traces are labelled by the verifier, now,
    // and the reviewed one by the person's feedback
    const byId = new Map(calibration.items.map((i: { traceId: string }) => [i.traceId, i]));
    assert.deepEqual((byId.get("labelled-0") as { label: unknown }).label, { failed: false });
    assert.equal((byId.get("labelled-1") as { label: { failed: boolean } }).label.failed, true);
    assert.deepEqual(byId.get(reviewed.id), {
      ...(byId.get(reviewed.id) as object),
      label: { failed: true },
      labelledBy: "feedback",
    });
    assert.equal(byId.has(trace.id), false);
    assert.equal(calibration.labelledBy.feedback, 1);
    const { report } = calibration;
    assert.equal(report.items, 3);
    assert.equal(report.judged + report.unjudged, 3);
    // the report is kept: the judge's page and analytics read the latest
    const kept = (await (await api("GET", "/judges")).json()).calibration;
    assert.deepEqual([kept.rubricVersion, kept.model, kept.report], [2, "toolcall-judge", report]);
    const bad = await api("POST", "/judges/calibrate", { limit: 0 });
    assert.equal(bad.status, 400);
    assert.match(
      (await bad.json()).error.message,
      /limit: expected a whole number of traces from 1 to 1000, got 0/,
    );
  });

  it("is set, shown and tried from the CLI", async () => {
    const target = { url: server.url, key: server.credentials?.tenantKey as string };
    const arc = (argv: string[]) => runArcCli(target, argv);
    const file = join(home, "rubric.json");
    writeFileSync(file, JSON.stringify({ ...RUBRIC, instructions: "The agent books and looks things up." }));
    const set = await arc(["judges", "set", file]);
    assert.equal(set.code, 0, set.out);
    assert.match(set.out, /rubric version 3/);
    assert.match(set.out, /class wrong_value \(high\)/);
    const model = await arc(["judges", "model", "judges", "toolcall-judge", "--calls-per-minute", "20"]);
    assert.equal(model.code, 0, model.out);
    // the calibrated judge's rubric changed: the server's own timer schedules its re-calibration
    await waitUntil(
      async () => (await (await api("GET", "/judges")).json()).recalibration?.status === "scheduled",
      "the re-calibration of the changed rubric is scheduled",
    );
    const shown = await arc(["judges", "show"]);
    assert.match(shown.out, /judge model toolcall-judge on upstream judges, at most 20 calls/);
    assert.match(
      shown.out,
      /not trusted yet: rubric v3 was never calibrated \(the latest calibration measured v2\)/,
    );
    assert.match(
      shown.out,
      /re-calibration: scheduled \(0 runs, next at \S+\) because rubric v3 was never calibrated/,
    );
    const tested = await arc(["judges", "test", trace.id]);
    assert.equal(tested.code, 0, tested.out);
    assert.match(tested.out, /^(failed|passed|unknown)/);
    const calibrated = await arc(["judges", "calibrate", "--limit", "10"]);
    assert.equal(calibrated.code, 0, calibrated.out);
    assert.match(calibrated.out, /3 of \d+ recent traces labelled \(.*people's feedback 1.*\)/);
    assert.match(calibrated.out, /agreement .* Cohen's kappa/);
    // a calibration on 3 labelled traces is too few to trust the judge on
    assert.match(
      (await arc(["judges", "show"])).out,
      /not trusted yet: its calibration judged \d labelled traces, under 50: calibrate it on at least 50/,
    );
    const unknown = await arc(["judges", "grade"]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.out, /expected show, set, model, test or calibrate/);
  });
});
