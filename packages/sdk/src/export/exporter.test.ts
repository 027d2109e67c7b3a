import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { CollectorTestServer, freePort } from "../test-doubles/collector-test-server.ts";
import type { WireTrace } from "../wire/wire-types.ts";
import { Exporter, type ExporterOptions } from "./exporter.ts";

const collectors: CollectorTestServer[] = [];
after(async () => {
  await Promise.all(collectors.map((c) => c.close()));
});

async function collector(port = 0): Promise<CollectorTestServer> {
  const c = await CollectorTestServer.start(port);
  collectors.push(c);
  return c;
}

function exporter(baseUrl: string, overrides: Partial<ExporterOptions> = {}): Exporter {
  return new Exporter({
    baseUrl,
    apiKey: "tenant-key",
    fetch: globalThis.fetch,
    maxBatchSize: 10,
    maxBatchBytes: 1_000_000,
    flushIntervalMs: 20,
    maxQueueSize: 1000,
    maxRetries: 3,
    initialBackoffMs: 10,
    maxBackoffMs: 40,
    requestTimeoutMs: 2000,
    warn: () => {},
    ...overrides,
  });
}

function trace(id: string): WireTrace {
  return { id, startedAt: "2026-01-01T00:00:00.000Z", status: "ok", steps: [] };
}

describe("Exporter", () => {
  it("posts batches of traces with the tenant key once the interval passes", async () => {
    const c = await collector();
    const e = exporter(c.url);
    e.enqueueTrace(trace("a"));
    e.enqueueTrace(trace("b"));
    await c.waitFor(() => c.traces().length === 2);
    await e.flush(1000);
    assert.equal(c.requests.length, 1);
    assert.equal(c.requests[0]!.path, "/v1/traces");
    assert.equal(c.requests[0]!.headers.authorization, "Bearer tenant-key");
    assert.equal(c.requests[0]!.headers["content-type"], "application/json");
    assert.deepEqual(c.requests[0]!.body, { traces: [trace("a"), trace("b")] });
    assert.deepEqual(e.stats(), { sent: 2, dropped: 0, failed: 0, retried: 0, pending: 0 });
  });

  it("splits what it holds into batches of at most maxBatchSize", async () => {
    const c = await collector();
    const e = exporter(c.url, { maxBatchSize: 4, flushIntervalMs: 60_000 });
    for (let i = 0; i < 10; i++) e.enqueueTrace(trace(`t${i}`));
    assert.equal(await e.flush(5000), true);
    assert.deepEqual(
      c.requests.map((r) => (r.body as { traces: unknown[] }).traces.length),
      [4, 4, 2],
    );
    assert.deepEqual(
      c.traces().map((t) => t.id),
      Array.from({ length: 10 }, (_, i) => `t${i}`),
    );
  });

  it("never puts the same trace id twice in one batch", async () => {
    const c = await collector();
    const e = exporter(c.url, { flushIntervalMs: 60_000 });
    e.enqueueTrace(trace("same"));
    e.enqueueTrace(trace("same"));
    await e.flush(5000);
    assert.equal(c.requests.length, 2);
  });

  it("retries 5xx answers with backoff until the server accepts", async () => {
    const c = await collector();
    let failures = 2;
    c.reply = () =>
      failures-- > 0 ? { status: 500, body: { error: { message: "boom" } } } : { status: 200 };
    const e = exporter(c.url);
    e.enqueueTrace(trace("x"));
    await c.waitFor(() => c.traces().length === 1);
    await e.flush(1000);
    assert.deepEqual(
      c.requests.map((r) => r.status),
      [500, 500, 200],
    );
    assert.deepEqual(e.stats(), { sent: 1, dropped: 0, failed: 0, retried: 2, pending: 0 });
  });

  it("gives up on a batch after maxRetries counted failures", async () => {
    const c = await collector();
    c.reply = () => ({ status: 500 });
    const e = exporter(c.url, { maxRetries: 2 });
    e.enqueueTrace(trace("x"));
    assert.equal(await e.flush(5000), true);
    assert.equal(c.requests.length, 3);
    assert.deepEqual(e.stats(), { sent: 0, dropped: 0, failed: 1, retried: 3, pending: 0 });
  });

  it("does not retry a 4xx, and isolates the one trace the server rejects in a batch", async () => {
    const c = await collector();
    c.reply = (r) =>
      (r.body as { traces: WireTrace[] }).traces.some((t) => t.id === "bad")
        ? { status: 400, body: { error: { message: "bad trace", field: "traces.0.startedAt" } } }
        : { status: 202 };
    const warnings: string[] = [];
    const e = exporter(c.url, { flushIntervalMs: 60_000, warn: (m) => warnings.push(m) });
    for (const id of ["a", "b", "bad", "c"]) e.enqueueTrace(trace(id));
    assert.equal(await e.flush(5000), true);
    assert.deepEqual(
      c
        .traces()
        .map((t) => t.id)
        .sort(),
      ["a", "b", "c"],
    );
    const badRequests = c.requests.filter((r) => r.status === 400);
    assert.equal(badRequests.filter((r) => (r.body as { traces: unknown[] }).traces.length === 1).length, 1);
    assert.deepEqual(e.stats(), { sent: 3, dropped: 0, failed: 1, retried: 0, pending: 0 });
    assert.match(warnings.join("\n"), /answered 400: .*bad trace.*not retried/);
  });

  it("drops a batch refused for its key (401) without retrying", async () => {
    const c = await collector();
    c.reply = () => ({ status: 401, body: { error: { message: "unknown api key" } } });
    const e = exporter(c.url);
    e.enqueueTrace(trace("a"));
    assert.equal(await e.flush(5000), true);
    assert.equal(c.requests.length, 1);
    assert.equal(e.stats().failed, 1);
  });

  it("retries 429 after the server's Retry-After without counting it against maxRetries", async () => {
    const c = await collector();
    let limited = 4;
    c.reply = () => (limited-- > 0 ? { status: 429, headers: { "retry-after": "0" } } : { status: 200 });
    const e = exporter(c.url, { maxRetries: 1 });
    e.enqueueTrace(trace("a"));
    assert.equal(await e.flush(5000), true);
    assert.equal(e.stats().sent, 1);
    assert.equal(e.stats().failed, 0);
  });

  it("keeps traces while Arc is down and delivers them when it comes back", async () => {
    const port = await freePort();
    const e = exporter(`http://127.0.0.1:${port}`);
    for (let i = 0; i < 5; i++) e.enqueueTrace(trace(`t${i}`));
    assert.equal(await e.flush(300), false, "nothing can be delivered while the port is closed");
    assert.equal(e.stats().pending, 5);
    assert.ok(e.stats().retried >= 1);
    const c = await collector(port);
    await c.waitFor(() => c.traces().length === 5);
    assert.deepEqual(
      c.traces().map((t) => t.id),
      ["t0", "t1", "t2", "t3", "t4"],
    );
    assert.equal(e.stats().failed, 0);
  });

  it("holds at most maxQueueSize items while down, dropping and counting the oldest", async () => {
    const port = await freePort();
    const e = exporter(`http://127.0.0.1:${port}`, { maxQueueSize: 4, maxBatchSize: 2 });
    for (let i = 0; i < 10; i++) e.enqueueTrace(trace(`t${i}`));
    await e.flush(200);
    const c = await collector(port);
    await e.flush(5000);
    const ids = c.traces().map((t) => t.id);
    assert.ok(ids.length <= 4, `delivered ${ids.length}`);
    assert.deepEqual(ids, ids.toSorted());
    assert.ok(ids.includes("t9"), "the newest survive");
    const stats = e.stats();
    assert.equal(stats.sent + stats.dropped, 10);
    assert.ok(stats.dropped >= 6);
  });

  it("posts feedback one record per request to /v1/feedback", async () => {
    const c = await collector();
    const e = exporter(c.url);
    const fb = { id: "f1", traceId: "t1", score: 1 };
    e.enqueueTrace(trace("t1"));
    e.enqueueFeedback(fb);
    assert.equal(await e.flush(5000), true);
    assert.deepEqual(
      c.requests.map((r) => r.path),
      ["/v1/traces", "/v1/feedback"],
    );
    assert.deepEqual(c.feedback(), [fb]);
  });

  it("flushes what it holds on shutdown and counts later items as dropped", async () => {
    const c = await collector();
    const e = exporter(c.url, { flushIntervalMs: 60_000 });
    e.enqueueTrace(trace("a"));
    assert.equal(await e.shutdown(5000), true);
    assert.equal(c.traces().length, 1);
    e.enqueueTrace(trace("late"));
    assert.deepEqual(e.stats(), { sent: 1, dropped: 1, failed: 0, retried: 0, pending: 0 });
  });

  it("treats a fetch that throws synchronously as a network failure", async () => {
    const e = exporter("http://127.0.0.1:1", {
      fetch: () => {
        throw new Error("no network");
      },
      maxRetries: 0,
    });
    e.enqueueTrace(trace("a"));
    await e.flush(100);
    assert.ok(e.stats().retried >= 1);
    assert.equal(e.stats().pending, 1);
  });

  it("gives up on a request that hangs past requestTimeoutMs, even with a fetch that ignores its signal", async () => {
    const e = exporter("http://127.0.0.1:1", {
      fetch: () => new Promise(() => {}),
      requestTimeoutMs: 50,
      maxRetries: 0,
    });
    e.enqueueTrace(trace("a"));
    assert.equal(await e.flush(2000), true);
    assert.deepEqual(e.stats(), { sent: 0, dropped: 0, failed: 1, retried: 1, pending: 0 });
  });
});
