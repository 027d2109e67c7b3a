import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runArcCli } from "../cli/__fixtures__/run-arc-cli.ts";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import { CITY_RUBRIC, MISREAD_CITY_TRACE } from "./__fixtures__/misread-city.ts";

/** TEST DOUBLE of a hosted LLM judge, over real HTTP: it passes every answer. */
function startPassingJudge(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const verdict = { failed: false, class: "none", severity: "none", evidence: "fine", confidence: 0.9 };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ choices: [{ message: { content: JSON.stringify(verdict) } }] }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server }),
    ),
  );
}

// People's labels through the API: stored with their rationale, queued for review, and read as the gold set a judge
// is calibrated on where no verifier decides.
describe("annotations and review queues", () => {
  let home: string;
  let judge: Awaited<ReturnType<typeof startPassingJudge>>;
  let server: RunningServer;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${server.credentials?.tenantKey}`,
        "content-type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  /** Traces no family verifies: the agent misread the city in the even ones. */
  const traces = Array.from({ length: 4 }, (_, i) => ({ ...MISREAD_CITY_TRACE, id: `booking-${i}` }));

  before(async () => {
    judge = await startPassingJudge();
    home = mkdtempSync(join(tmpdir(), "arc-annotations-"));
    server = await startServer(
      loadServerConfig({}, { home, port: 0, upstreams: { judges: { baseUrl: judge.url } } }),
      { failures: { config: { quietMs: 60_000 } } },
    );
    assert.equal((await api("POST", "/traces", { traces })).status, 200);
  });
  after(async () => {
    await server?.close();
    judge.server.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("stores a label with its rationale on a trace or a step, and refuses a bad one naming the field", async () => {
    const bad = async (body: unknown, status: number, message: RegExp) => {
      const answer = await api("POST", "/annotations", body);
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.match(answer.body.error.message, message);
    };
    await bad(
      { traceId: "booking-0", label: "meh", rationale: "x" },
      400,
      /^label: expected "pass" or "fail"/,
    );
    await bad({ traceId: "booking-0", label: "fail" }, 400, /^rationale: expected a non-empty string/);
    await bad(
      { traceId: "booking-0", label: "pass", class: "wrong_value", rationale: "x" },
      400,
      /^class: a failure class goes with label fail/,
    );
    await bad({ traceId: "booking-0", label: "fail", rationale: "x", score: 1 }, 400, /score/);
    await bad(
      { traceId: "no-such-trace", label: "fail", rationale: "x" },
      404,
      /trace "no-such-trace" not found/,
    );
    await bad(
      { traceId: "booking-0", stepId: "s9", label: "fail", rationale: "x" },
      404,
      /step "s9" not found/,
    );
    const saved = await api("POST", "/annotations", {
      traceId: "booking-0",
      stepId: MISREAD_CITY_TRACE.steps[0].id,
      label: "fail",
      class: "wrong_value",
      rationale: "the user asked about Oslo; the agent looked up Bergen",
    });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    assert.match(saved.body.id, /^ann_/);
    assert.match(saved.body.author, /^user:/);
    const listed = await api("GET", "/annotations?traceId=booking-0");
    assert.deepEqual(listed.body.data, [saved.body]);
    assert.equal((await api("GET", "/annotations?trace=booking-0")).status, 400);
  });

  it("keeps traces in a review queue until someone labels them", async () => {
    const added = await api("POST", "/review-queues/spot-checks/items", {
      traceIds: ["booking-1", "booking-2", "no-such-trace"],
      reason: "weekly spot check",
    });
    assert.deepEqual([added.status, added.body], [201, { queue: "spot-checks", added: 2 }]);
    assert.equal(
      (await api("POST", "/review-queues/Spot Checks/items", { traceIds: ["booking-1"], reason: "x" }))
        .status,
      400,
    );
    await api("POST", "/annotations", {
      traceId: "booking-2",
      label: "fail",
      class: "wrong_value",
      rationale: "Bergen, not Oslo",
    });
    const pending = await api("GET", "/review-queues/spot-checks");
    assert.deepEqual(
      pending.body.data.map((i: { traceId: string; reason: string }) => [i.traceId, i.reason]),
      [["booking-1", "weekly spot check"]],
    );
    assert.deepEqual((await api("GET", "/review-queues")).body.data, [{ queue: "spot-checks", pending: 1 }]);
  });

  it("calibrates the judge on the gold set, and queues what the judge and the labels disagree on", async () => {
    await api("PUT", "/judges/rubric", CITY_RUBRIC);
    await api("PUT", "/judges/model", { upstream: "judges", model: "passing-judge" });
    await api("POST", "/annotations", { traceId: "booking-3", label: "pass", rationale: "right city" });
    const calibration = await api("POST", "/judges/calibrate", { limit: 10 });
    assert.equal(calibration.status, 200, JSON.stringify(calibration.body));
    // booking-0 (a failing step), booking-2 and booking-3 are annotated; nothing else labels booking-1
    assert.deepEqual(calibration.body.labelledBy, { annotation: 3 });
    const byTrace = Object.fromEntries(
      calibration.body.items.map((i: { traceId: string; label: { failed: boolean } }) => [
        i.traceId,
        i.label.failed,
      ]),
    );
    assert.deepEqual(byTrace, { "booking-0": true, "booking-2": true, "booking-3": false });
    const disagreements = await api("GET", "/review-queues/judge-disagreements");
    assert.deepEqual(disagreements.body.data.map((i: { traceId: string }) => i.traceId).sort(), [
      "booking-0",
      "booking-2",
    ]);
    assert.match(
      disagreements.body.data[0].reason,
      /the judge \(passing-judge, rubric v1\) said passed; annotation said failed/,
    );
    const unlabelled = await api("GET", "/review-queues/unlabelled");
    assert.deepEqual(
      unlabelled.body.data.map((i: { traceId: string }) => i.traceId),
      ["booking-1"],
    );
  });

  it("is worked from the CLI", async () => {
    const arc = (argv: string[]) =>
      runArcCli({ url: server.url, key: server.credentials?.tenantKey as string }, argv);
    const added = await arc([
      "annotations",
      "add",
      "booking-1",
      "--label",
      "pass",
      "--rationale",
      "looked up Oslo",
    ]);
    assert.equal(added.code, 0, added.out);
    assert.match(added.out, /booking-1 {2}pass {2}by user:\S+: looked up Oslo/);
    assert.match((await arc(["annotations", "list", "--trace", "booking-1"])).out, /looked up Oslo/);
    assert.match((await arc(["annotations", "queues"])).out, /judge-disagreements: 2 waiting/);
    assert.doesNotMatch((await arc(["annotations", "queue", "unlabelled"])).out, /booking-1/);
    const refused = await arc(["annotations", "add", "booking-1", "--label", "maybe", "--rationale", "x"]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.out, /label: expected "pass" or "fail"/);
  });
});
