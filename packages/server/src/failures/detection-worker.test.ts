import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { DetectionConfig, type DetectorRegistry, failedVerdict, Trace } from "@arc/core";
import { simulateProductionTraffic, waitUntil } from "@arc/core/testing";
import { putJudgeModel, putRubric } from "../judges/judge-store.ts";
import type { Database } from "../store/database.ts";
import { saveDetectorConfig } from "../store/detector-configs.ts";
import { openPostgresDatabase } from "../store/postgres-database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { insertFeedback, insertTraces } from "../store/trace-store.ts";
import { pendingDetections } from "./detection-queue.ts";
import { DetectionWorker } from "./detection-worker.ts";
import { listPatterns } from "./pattern-store.ts";
import { getVerdict, verdictCounts } from "./verdict-store.ts";

const config = { quietMs: 0, batchSize: 100, pollMs: 10, leaseMs: 60_000, maxAttempts: 3 };

/** Runs passes until one finds nothing to judge or release; returns how many traces were judged in all. */
async function drain(worker: DetectionWorker): Promise<number> {
  let judged = 0;
  return waitUntil(
    async () => {
      const pass = await worker.runOnce();
      judged += pass.judged;
      return pass.judged + pass.released === 0 && judged;
    },
    "the detection queue to drain",
    { timeoutMs: 60_000, intervalMs: 0 },
  );
}

const traffic = simulateProductionTraffic({ seed: 7, count: 300 });
const traces = traffic.map((s) => Trace.parse(s.trace));

for (const target of databasesUnderTest()) {
  describe(`detection worker on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;

    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "acme")).id;
    });
    after(() => db?.close());

    it("queues a trace in the ingest transaction and judges it only after its quiet period", async () => {
      const [first] = traces;
      await insertTraces(db, tenant, [first]);
      assert.equal(await pendingDetections(db, tenant), 1);
      const patient = new DetectionWorker(db, { config: { ...config, quietMs: 60_000 } });
      assert.equal((await patient.runOnce()).judged, 0);
      assert.equal(await getVerdict(db, tenant, first.id), null);
      assert.equal(await drain(new DetectionWorker(db, { config })), 1);
      const verdict = await getVerdict(db, tenant, first.id);
      assert.equal(verdict?.revision, 1);
      assert.equal(await pendingDetections(db, tenant), 0);
    });

    it("writes a trace's queue row once when its trace and steps are stored together", async () => {
      const other = (await createTenant(db, "queued-once")).id;
      const updates = await db.transaction(async (tx) => {
        // PGlite's view also counts earlier transactions whose counts it has not flushed: a difference holds on both
        const queueUpdates = async () =>
          Number(
            (
              await tx.query<{ n: string }>(
                "select n_tup_upd as n from pg_stat_xact_user_tables where relname = 'detection_queue'",
              )
            )[0].n,
          );
        const before = await queueUpdates();
        await insertTraces(tx, other, traces.slice(0, 3));
        return (await queueUpdates()) - before;
      });
      assert.ok(traces.slice(0, 3).every((t) => t.steps.length > 0));
      assert.equal(updates, 0, "the steps' trigger leaves the rows their traces queued as they are");
      assert.equal(await pendingDetections(db, other), 3);
      await db.query("delete from detection_queue where tenant_id = $1", [other]);
    });

    it("judges every trace once and clusters the failures into patterns named after their modes", async () => {
      await insertTraces(db, tenant, traces.slice(1, 150));
      const worker = new DetectionWorker(db, { config });
      assert.equal(await drain(worker), 149);
      await insertTraces(db, tenant, traces.slice(0, 150));
      assert.equal(await drain(worker), 0, "re-sent traces with no new steps are not judged again");
      const counts = await verdictCounts(db, tenant);
      assert.equal((counts.failed ?? 0) + (counts.passed ?? 0) + (counts.unknown ?? 0), 150);
      const patterns = await listPatterns(db, tenant);
      const members = patterns.reduce((n, p) => n + p.count, 0);
      assert.equal(members, counts.failed);
      const loop = traffic.slice(0, 150).find((s) => s.injected === "tool_loop: lookup_order");
      assert.ok(loop, "the fixture has a tool loop");
      const verdict = await getVerdict(db, tenant, loop.trace.id as string);
      const pattern = patterns.find((p) => p.id === verdict?.patternId);
      assert.match(pattern?.label ?? "", /^tool_loop: lookup_order/);
    });

    it("keeps pattern ids and counts when a new worker (a restarted server) continues from the stored state", async () => {
      const before = new Map((await listPatterns(db, tenant)).map((p) => [p.id, p.count]));
      await insertTraces(db, tenant, traces.slice(150));
      assert.equal(await drain(new DetectionWorker(db, { config })), 150);
      const afterwards = await listPatterns(db, tenant);
      for (const [id, count] of before) {
        const now = afterwards.find((p) => p.id === id);
        assert.ok(now && now.count >= count, `pattern ${id} keeps its id and grows`);
      }
      const counts = await verdictCounts(db, tenant);
      assert.equal(
        afterwards.reduce((n, p) => n + p.count, 0),
        counts.failed,
      );
    });

    it("judges a passed trace again when negative feedback arrives, and it joins a user feedback pattern", async () => {
      const passed = traffic.find((s, i) => i < 300 && s.injected === null);
      assert.ok(passed);
      const id = passed.trace.id as string;
      assert.equal((await getVerdict(db, tenant, id))?.status, "passed");
      await insertFeedback(db, tenant, { id: "fb-late", traceId: id, label: "thumbs_down" });
      assert.equal(await drain(new DetectionWorker(db, { config })), 1);
      const verdict = await getVerdict(db, tenant, id);
      assert.equal(verdict?.status, "failed");
      assert.equal(verdict?.failureClass, "user_feedback");
      assert.equal(verdict?.revision, 2);
      assert.ok(verdict?.patternId);
    });

    it("judges a trace again when late steps arrive but keeps it in the pattern it first joined", async () => {
      const failed = traffic.find((s) => s.injected === "tool_loop: lookup_order");
      assert.ok(failed);
      const id = failed.trace.id as string;
      const first = await getVerdict(db, tenant, id);
      const total = (await listPatterns(db, tenant)).reduce((n, p) => n + p.count, 0);
      const trace = traces.find((t) => t.id === id) as Trace;
      const late = { ...trace.steps[0], id: `${id}-late`, startedAt: trace.endedAt ?? trace.startedAt };
      await insertTraces(db, tenant, [{ ...trace, steps: [late] }]);
      assert.equal(await drain(new DetectionWorker(db, { config })), 1);
      const second = await getVerdict(db, tenant, id);
      assert.equal(second?.revision, (first?.revision ?? 0) + 1);
      assert.equal(second?.patternId, first?.patternId);
      assert.equal(
        (await listPatterns(db, tenant)).reduce((n, p) => n + p.count, 0),
        total,
      );
    });

    it("looks less often the longer it finds nothing, without claiming, and judges a new trace at its next look", async () => {
      await drain(new DetectionWorker(db, { config }));
      const queueQueries: string[] = [];
      const counted = new Proxy(db, {
        get(target, key) {
          if (key === "query")
            return (sql: string, params?: unknown[]) => {
              if (sql.includes("set lease_until = now()")) queueQueries.push("claim");
              else if (sql.includes("select exists")) queueQueries.push("look");
              return target.query(sql, params);
            };
          const value = Reflect.get(target, key);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const worker = new DetectionWorker(counted, { config: { ...config, pollMs: 10, idlePollMs: 160 } });
      worker.start();
      try {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        // waits of 10, 20, 40, 80 and then 160 ms: about 9 looks in a second, where a fixed 10 ms would make 100
        assert.ok(queueQueries.length >= 3 && queueQueries.length <= 15, `${queueQueries.length} looks`);
        assert.deepEqual(
          queueQueries.filter((q) => q === "claim"),
          [],
          "no claims while nothing is due",
        );
        const [trace] = simulateProductionTraffic({ seed: 8, count: 1 }).map((s) => Trace.parse(s.trace));
        await insertTraces(db, tenant, [trace]);
        const started = Date.now();
        await waitUntil(() => getVerdict(db, tenant, trace.id), "the new trace's verdict", {
          intervalMs: 10,
        });
        assert.ok(Date.now() - started < 1_000, `judged after ${Date.now() - started} ms`);
        assert.ok(queueQueries.includes("claim"), "a claim once the trace is due");
      } finally {
        await worker.stop();
      }
    });

    it("rests after each pass while the server is busy, so detection takes at most busyShare of the time", async () => {
      await drain(new DetectionWorker(db, { config }));
      const passes: { start: number; end: number; judged: number }[] = [];
      /** A worker that notes when each of its passes ran. */
      class TimedWorker extends DetectionWorker {
        override async runOnce() {
          const start = performance.now();
          const pass = await super.runOnce();
          passes.push({ start, end: performance.now(), judged: pass.judged });
          return pass;
        }
      }
      const fresh = simulateProductionTraffic({ seed: 9, count: 60 }).map((s) => Trace.parse(s.trace));
      await insertTraces(db, tenant, fresh);
      const worker = new TimedWorker(db, {
        config: { ...config, batchSize: 20, busyShare: 0.5, idlePollMs: 5_000 },
        busy: () => true,
      });
      worker.start();
      try {
        await waitUntil(
          () => passes.filter((p) => p.judged > 0).length >= 3 && passes.length >= 4,
          "4 passes",
          {
            intervalMs: 10,
          },
        );
      } finally {
        await worker.stop();
      }
      // a full batch would be followed at once by the next pass; busy at share 0.5, each rests as long as it ran
      for (const [i, pass] of passes.slice(0, 3).entries()) {
        assert.equal(pass.judged, 20);
        const rest = passes[i + 1].start - pass.end;
        assert.ok(
          rest >= pass.end - pass.start - 2,
          `pass ${i} ran ${pass.end - pass.start} ms, rested ${rest} ms`,
        );
      }
    });
  });
}

describe("detection worker errors", () => {
  it("judges a trace `unknown` with the error after maxAttempts failed attempts, while other tenants go on", async () => {
    const target = databasesUnderTest()[0];
    const db = await target.open();
    try {
      const broken = (await createTenant(db, "broken")).id;
      const fine = (await createTenant(db, "fine")).id;
      const setup = (_: unknown, tenantId: string) => {
        if (tenantId === broken) throw new Error("verifier service unreachable");
      };
      const errors: unknown[] = [];
      const worker = new DetectionWorker(db, {
        config: { ...config, maxAttempts: 2 },
        setupRegistry: setup,
        onError: (e) => errors.push(e),
      });
      await insertTraces(db, broken, [traces[0]]);
      await insertTraces(db, fine, [traces[1]]);
      const first = await worker.runOnce();
      assert.deepEqual(first, { judged: 1, assigned: first.assigned, released: 1 });
      assert.equal(await getVerdict(db, broken, traces[0].id), null);
      assert.equal((await worker.runOnce()).released, 1);
      assert.equal((await worker.runOnce()).judged, 1);
      const verdict = await getVerdict(db, broken, traces[0].id);
      assert.equal(verdict?.status, "unknown");
      assert.match(
        verdict?.judgement.verdicts[0].evidence.message ?? "",
        /failed 2 times; last error: verifier service unreachable/,
      );
      assert.equal(errors.length, 2);
      assert.equal(await pendingDetections(db, broken), 0);
    } finally {
      await db.close();
    }
  });
});

const postgres = databasesUnderTest().find((d) => d.name === "postgres");
describe("detection workers in several processes", { skip: postgres?.skip }, () => {
  it("judge every trace exactly once when two workers share one PostgreSQL server", async () => {
    const db = await (postgres as NonNullable<typeof postgres>).open();
    const [{ schema }] = await db.query<{ schema: string }>("select current_schema() as schema");
    const second = await openPostgresDatabase(process.env.ARC_TEST_DATABASE_URL as string, { schema });
    try {
      const tenant = (await createTenant(db, "acme")).id;
      await insertTraces(db, tenant, traces);
      const small = { ...config, batchSize: 20 };
      const [a, b] = await Promise.all([
        drain(new DetectionWorker(db, { config: small })),
        drain(new DetectionWorker(second, { config: small })),
      ]);
      assert.equal(a + b, traces.length);
      assert.ok(a > 0 && b > 0, `both workers took work (${a} and ${b})`);
      const revisions = await db.query<{ n: number }>(
        "select count(*)::int as n from verdicts where tenant_id = $1 and revision = 1",
        [tenant],
      );
      assert.equal(revisions[0].n, traces.length);
      const counts = await verdictCounts(db, tenant);
      const patterns = await listPatterns(db, tenant);
      assert.equal(
        patterns.reduce((n, p) => n + p.count, 0),
        counts.failed,
      );
    } finally {
      await second.close();
      await db.close();
    }
  });
});

describe("detection worker and asynchronous judges", () => {
  it("awaits a tenant's slow async detector without holding back another tenant's traces", async () => {
    const target = databasesUnderTest()[0];
    const db = await target.open();
    try {
      const slow = (await createTenant(db, "slow-judge")).id;
      const quick = (await createTenant(db, "quick")).id;
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => {
        answer = resolve;
      });
      const setup = (registry: DetectorRegistry, tenantId: string) => {
        if (tenantId !== slow) return;
        registry.register({
          id: "slow_judge",
          description: "a model that takes its time",
          detect: async (trace) => {
            await answered;
            return [
              failedVerdict(trace.id, "slow_judge", {
                class: "wrong_answer",
                severity: "high",
                message: "judged late",
              }),
            ];
          },
        });
      };
      const worker = new DetectionWorker(db, { config, setupRegistry: setup });
      await insertTraces(db, slow, [traces[0]]);
      await insertTraces(db, quick, [traces[1]]);
      const pass = worker.runOnce();
      await waitUntil(
        () => getVerdict(db, quick, traces[1].id),
        "the quick tenant's verdict while the slow judge thinks",
      );
      assert.equal(await getVerdict(db, slow, traces[0].id), null);
      answer();
      assert.equal((await pass).judged, 2);
      const late = await getVerdict(db, slow, traces[0].id);
      assert.ok(late?.judgement.verdicts.some((v) => v.detectorId === "slow_judge" && v.failed));
    } finally {
      await db.close();
    }
  });

  it("judges a large batch in slices of about 10 ms, letting the event loop turn between slices", async () => {
    const target = databasesUnderTest()[0];
    const db = await target.open();
    let turn = 0;
    let spinning = true;
    const spin = () => {
      turn++;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    try {
      const tenant = (await createTenant(db, "sliced")).id;
      const turnsJudgedIn = new Set<number>();
      const setup = (registry: DetectorRegistry) => {
        registry.register({
          id: "turn_noter",
          description: "takes 1 ms of synchronous work and notes the event-loop turn it judges in",
          detect: () => {
            const until = performance.now() + 1;
            while (performance.now() < until);
            turnsJudgedIn.add(turn);
            return [];
          },
        });
      };
      const batch = simulateProductionTraffic({ seed: 10, count: 64 }).map((s) => Trace.parse(s.trace));
      await insertTraces(db, tenant, batch);
      const worker = new DetectionWorker(db, { config, setupRegistry: setup });
      assert.equal((await worker.runOnce()).judged, 64);
      // 64 ms of judging in slices of 10 ms: at least 4 turns even where a slice overruns
      assert.ok(turnsJudgedIn.size >= 4, `64 traces judged in ${turnsJudgedIn.size} turns`);
    } finally {
      spinning = false;
      await db.close();
    }
  });

  it("judges again, after its retry delay, a trace the tenant's judge could not judge", async () => {
    const target = databasesUnderTest()[0];
    const db = await target.open();
    // TEST DOUBLE of a judge model's endpoint: down for its first call (its first try and the judge queue's two
    // retries), then a well-formed verdict
    let requests = 0;
    const endpoint = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        requests++;
        if (requests <= 3) {
          res.writeHead(503, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { message: "overloaded" } }));
          return;
        }
        const verdict = {
          failed: true,
          class: "wrong_value",
          severity: "high",
          evidence: "Bergen",
          confidence: 0.9,
        };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ choices: [{ message: { content: JSON.stringify(verdict) } }] }));
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
    try {
      const tenant = (await createTenant(db, "judged")).id;
      await putRubric(db, tenant, {
        criteria: ["Use the values the user gave."],
        classes: [{ name: "wrong_value", description: "an argument differs", severity: "high" }],
      });
      const upstreams = {
        judges: { baseUrl: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1` },
      };
      await putJudgeModel(db, tenant, { upstream: "judges", model: "judge-1" }, upstreams);
      await saveDetectorConfig(db, tenant, DetectionConfig.parse({ judgeMinKappa: null }));
      const worker = new DetectionWorker(db, { config, judgeUpstreams: upstreams, judgeRetryMs: 2_000 });
      const trace = Trace.parse({
        id: "judged-later",
        startedAt: "2026-11-27T10:00:00.000Z",
        steps: [
          {
            id: "s1",
            kind: "llm",
            startedAt: "2026-11-27T10:00:00.000Z",
            endedAt: "2026-11-27T10:00:01.000Z",
            llm: {
              messages: [{ role: "user", content: "Weather in Oslo?" }],
              output: { content: '{"tool":"get_weather","args":{"city":"Bergen"}}' },
              finishReason: "stop",
            },
          },
        ],
      });
      await insertTraces(db, tenant, [trace]);
      assert.equal((await worker.runOnce()).judged, 1);
      const first = await getVerdict(db, tenant, trace.id);
      const unjudged = first?.judgement.verdicts.find((v) => v.detectorId === "judge");
      assert.equal(unjudged?.status, "unknown");
      assert.match(unjudged?.evidence.message ?? "", /HTTP 503/);
      assert.equal(requests, 3, "a 503 is tried again twice before the trace waits");
      assert.equal(await pendingDetections(db, tenant), 1, "queued again");
      assert.equal((await worker.runOnce()).judged, 0, "not before its retry delay");
      await waitUntil(async () => (await worker.runOnce()).judged === 1, "the retry");
      const second = await getVerdict(db, tenant, trace.id);
      assert.equal(second?.judgement.verdicts.find((v) => v.detectorId === "judge")?.status, "failed");
      assert.equal(second?.failureClass, "rubric_violation");
      assert.equal(await pendingDetections(db, tenant), 0);
    } finally {
      endpoint.close();
      await db.close();
    }
  });
});
