import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import { OpenAITestServer } from "@arc/sdk/test-doubles";
import { loadServerConfig } from "../config/server-config.ts";
import { startCanary } from "../deploy/deployment-store.ts";
import { createApp } from "../http/app.ts";
import { Authenticator } from "../http/authenticator.ts";
import { ServerMetrics } from "../metrics/metrics-registry.ts";
import { createRun, reportProgress } from "../orchestrator/run-store.ts";
import { type ModelVersion, registerModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import { findTenant } from "../store/tenants.ts";
import { type RunningServer, startServer } from "./start-server.ts";

/** The value of one series (`name{labels}`) in a `/metrics` text, or undefined when it is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("arc serve's /metrics", () => {
  let home: string;
  let provider: OpenAITestServer;
  let server: RunningServer;
  let tenantId: string;
  let production: ModelVersion;
  /** The whole page, the per-tenant series included: what an admin key scrapes. */
  const scrape = async () =>
    (
      await fetch(`${server.url}/metrics`, {
        headers: { authorization: `Bearer ${server.credentials?.adminKey}` },
      })
    ).text();
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/v1${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.credentials?.tenantKey}`,
        "content-type": "application/json",
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const chat = async (headers: Record<string, string> = {}) => {
    const res = await post(
      "/chat/completions",
      { model: "prod", messages: [{ role: "user", content: "hi" }] },
      headers,
    );
    assert.equal(res.status, 200, await res.text());
  };

  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-metrics-"));
    provider = await OpenAITestServer.start();
    server = await startServer(loadServerConfig({ ARC_GATEWAY_MODEL_POOL_SIZE: "3" }, { home, port: 0 }), {
      release: { workers: false },
      failures: { config: { quietMs: 0, pollMs: 20 } },
    });
    tenantId = (await findTenant(server.db, server.credentials?.tenant as string))?.id as string;
    production = await registerModelVersion(server.db, tenantId, {
      name: "prod",
      status: "promoted",
      upstream: { baseUrl: provider.url, model: "m" },
      actor: "test",
    });
  });
  after(async () => {
    await server?.close();
    await provider?.close();
    await rm(home, { recursive: true, force: true });
  });

  it("shows the gateway's model pool: its bound from ARC_GATEWAY_MODEL_POOL_SIZE and what it holds", async () => {
    const text = await scrape();
    assert.match(text, /^# TYPE arc_gateway_models_loaded gauge$/m);
    assert.match(text, /^arc_gateway_models_loaded_max 3$/m);
    assert.match(text, /^# TYPE arc_gateway_model_evictions_total counter$/m);
    assert.match(text, /^# TYPE arc_gateway_adapter_load_seconds histogram$/m);
  });

  it("shows the process metrics (CPU, memory, event-loop lag, heap, GC) and the gateway's trace queue", async () => {
    const res = await fetch(`${server.url}/metrics`);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const series of [
      "process_cpu_user_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
      "arc_gateway_trace_queue_depth",
    ]) {
      assert.ok((sample(text, series) ?? -1) >= 0, `${series} in\n${text}`);
    }
    assert.match(text, /^# TYPE nodejs_gc_duration_seconds histogram$/m);
  });

  it("counts the requests it is answering, a slow upload included, and forgets one its client dropped", async () => {
    assert.equal(sample(await scrape(), "arc_http_requests_in_flight"), 1, "the scrape itself");
    const upload = request(`${server.url}/v1/traces`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.credentials?.tenantKey}`,
        "content-type": "application/json",
        "content-length": "1000",
      },
    });
    upload.on("error", () => {});
    upload.write("[");
    await waitUntil(async () => sample(await scrape(), "arc_http_requests_in_flight") === 2, "2 in flight");
    upload.destroy();
    await waitUntil(async () => sample(await scrape(), "arc_http_requests_in_flight") === 1, "1 in flight");
  });

  it("counts the prompt and completion tokens of gateway calls by tenant and model", async () => {
    const series = (kind: string) =>
      `arc_gateway_tokens_total{tenant="${tenantId}",model="prod",kind="${kind}"}`;
    const before = await scrape();
    provider.reply = () => ({ usage: { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 } });
    await chat();
    await chat();
    const text = await scrape();
    assert.equal(sample(text, series("prompt")), (sample(before, series("prompt")) ?? 0) + 26);
    assert.equal(sample(text, series("completion")), (sample(before, series("completion")) ?? 0) + 10);
  });

  it("shows the share of each model version's judged gateway calls that failed in the last hour", async () => {
    const series = `arc_failure_rate{tenant="${tenantId}",model_version="${production.id}"}`;
    for (const id of ["fr-pass", "fr-fail-1", "fr-fail-2"]) await chat({ "x-arc-trace-id": id });
    await server.release.gateway.flush();
    const feedback = [
      { id: "fb-pass", traceId: "fr-pass", score: 1 },
      { id: "fb-fail-1", traceId: "fr-fail-1", score: -1 },
      { id: "fb-fail-2", traceId: "fr-fail-2", score: -1 },
    ];
    assert.equal((await post("/feedback", feedback)).status, 200);
    // calls nobody judged (no feedback, no verifier) are not in the rate
    await waitUntil(async () => sample(await scrape(), series) === 2 / 3, "2 of the 3 judged calls failed", {
      timeoutMs: 5_000,
    });
  });

  it("shows a tenant's running canary: its share of traffic and its stage, by deployment and candidate", async () => {
    const candidate = await registerModelVersion(server.db, tenantId, {
      name: "cand",
      status: "validated",
      upstream: { baseUrl: provider.url, model: "m" },
      actor: "test",
    });
    assert.doesNotMatch(await scrape(), /^arc_canary_share\{/m);
    const deployment = await startCanary(server.db, tenantId, {
      candidate: candidate.id,
      actor: "test",
      policy: { ramp: [0.25, 1] },
    });
    const text = await scrape();
    const labels = `{tenant="${tenantId}",deployment="${deployment.id}",candidate="${candidate.id}"}`;
    assert.equal(sample(text, `arc_canary_share${labels}`), 0.25);
    assert.equal(sample(text, `arc_canary_stage${labels}`), 0);
  });

  it("shows a running training run's last step, and its reward once it reported one", async () => {
    // a run another server trains: its row is all this server reads
    const owner = "another-server";
    const run = await createRun(server.db, tenantId, {
      trigger: "test",
      recipePath: "recipes/toolcall-dpo.yaml",
      runsDir: join(home, "runs"),
      status: "running",
      owner,
    });
    const labels = `{tenant="${tenantId}",run="${run.id}"}`;
    const started = await scrape();
    assert.equal(sample(started, `arc_training_step${labels}`), 0);
    assert.equal(sample(started, `arc_training_reward${labels}`), undefined);
    await reportProgress(server.db, tenantId, run.id, owner, {
      step: 3,
      totalSteps: 10,
      metrics: { reward: 0.75 },
    });
    const text = await scrape();
    assert.equal(sample(text, `arc_training_step${labels}`), 3);
    assert.equal(sample(text, `arc_training_reward${labels}`), 0.75);
  });
});

describe("/metrics when the database cannot answer", () => {
  it("renders the process metrics and counters, leaves out the gauges read from the database, and logs each once", async (t) => {
    const db = await openPgliteDatabase("memory://");
    await db.close();
    const metrics = new ServerMetrics();
    metrics.watch({ db, gatewayTraceQueue: () => 4, requestsInFlight: () => 0 });
    const adminKey = "arc_admin_metrics_test_key";
    const app = createApp({
      db,
      authenticator: new Authenticator(db, adminKey),
      metrics,
      maxBodyBytes: 1024,
    });
    const logged = t.mock.method(console, "error", () => {});
    const res = await app.request("/metrics", { headers: { authorization: `Bearer ${adminKey}` } });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok((sample(text, "process_cpu_user_seconds_total") ?? -1) >= 0);
    assert.equal(sample(text, "arc_gateway_trace_queue_depth"), 4);
    assert.match(text, /^# TYPE arc_failure_rate gauge$/m);
    assert.doesNotMatch(text, /^arc_(detection_queue_depth|runs_queued|failure_rate|canary_|training_)/m);
    assert.equal(
      (await app.request("/metrics", { headers: { authorization: `Bearer ${adminKey}` } })).status,
      200,
    );
    const failed = logged.mock.calls.map((c) => String(c.arguments[0]).match(/\/metrics: (\w+)/)?.[1]);
    assert.deepEqual(failed.sort(), [
      "arc_canary_share",
      "arc_canary_stage",
      "arc_detection_queue_depth",
      "arc_failure_rate",
      "arc_runs_queued",
      "arc_training_reward",
      "arc_training_step",
    ]);
  });
});
