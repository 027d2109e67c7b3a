import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { DetectionConfig, Trace } from "@arc/core";
import { simulateProductionTraffic } from "@arc/core/testing";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { toolcallEvalFixture } from "../deploy/__fixtures__/toolcall-eval-fixture.ts";
import { pendingDetections } from "../failures/detection-queue.ts";
import { DetectionWorker } from "../failures/detection-worker.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import { startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { saveDetectorConfig } from "../store/detector-configs.ts";
import { migrate } from "../store/migrate.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import { insertTraces } from "../store/trace-store.ts";
import { validateCandidate } from "../validate/validate-candidate.ts";
import { putJudgeModel, putRubric } from "./judge-store.ts";
import { tenantJudges } from "./tenant-judge.ts";

const ARC = fileURLToPath(new URL("../../../../bin/arc.mjs", import.meta.url));
const JUDGE_DIR = fileURLToPath(new URL("../../../../models/toolcall-judge", import.meta.url));
const RUBRIC = JSON.parse(readFileSync(`${JUDGE_DIR}/rubric.json`, "utf8"));

const TRACES = 5_000;
/** How long detection runs against the judge before and while a validation runs. */
const DETECTION_MS = 8_000;
/** The validation's bound on its judge calls, all together. */
const JUDGE_WITHIN_MS = 20_000;

/** Reference-free eval rows: no family verifies them, so only the tenant's judge can. */
const QUESTIONS = Array.from({ length: 8 }, (_, i) => `Cancel booking ${100 + i} for tonight.`);

/** `arc engine serve` on the shipped judge, as a user starts it, in a process of its own. */
function serveJudge() {
  const child = spawn(
    process.execPath,
    [ARC, "engine", "serve", "--model", JUDGE_DIR, "--model-id", "toolcall-judge", "--port", "0"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const baseURL = new Promise<string>((resolve, reject) => {
    let seen = "";
    const read = (d: Buffer) => {
      seen += d;
      const m = seen.match(/at (http:\/\/\S+\/v1)/);
      if (m) resolve(m[1]);
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => reject(new Error(`arc engine serve exited with ${code}: ${seen}`)));
  });
  return { child, baseURL };
}

/** The open sockets and resident memory (MiB) of process `pid`, read from /proc. */
function processLoad(pid: number): { sockets: number; rssMiB: number } {
  const fds = readdirSync(`/proc/${pid}/fd`);
  let sockets = 0;
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")) sockets++;
    } catch {
      // closed between the listing and the read
    }
  }
  const rss = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return { sockets, rssMiB: Number(rss?.[1] ?? 0) / 1024 };
}

// 5,000 traces wait for one real judge (`arc engine serve` on models/toolcall-judge) while a validation needs it
// too. The judge's queue keeps what reaches the server bounded, detection is refused past it and its traces come
// back spread over the retry window, and the validation, ahead in the queue, ends within its bound.
describe("one arc engine serve judge under 5,000 waiting traces", () => {
  let db: Database;
  let judge: ReturnType<typeof serveJudge>;
  let baseURL: string;
  const pool = new ModelPool({
    loadEngine: async (artifactDir) =>
      new AnswerBookEngine(
        new Map(
          QUESTIONS.map((q) => [
            q,
            `${artifactDir.endsWith("/cancels") ? "Cancelled" : "Kept"} booking ${q.match(/\d+/)?.[0]}.`,
          ]),
        ),
        "I'm sorry, I can't help with that.",
      ),
  });

  before(async () => {
    judge = serveJudge();
    db = await openPgliteDatabase("memory://");
    await migrate(db);
    baseURL = await judge.baseURL;
  });
  after(async () => {
    judge.child.kill("SIGTERM");
    await db?.close();
  });

  it("answers /v1/models within 1 s throughout, holds bounded load, and validation ends counting the unjudged", async () => {
    const local = await startReleaseTestServer(db, { pool, startWorkers: false });
    const tenant = local.tenantId;
    const upstreams = { judge: { baseUrl: baseURL } };
    await putRubric(db, tenant, RUBRIC);
    await putJudgeModel(
      db,
      tenant,
      { upstream: "judge", model: "toolcall-judge", callsPerMinute: 100_000, tokensPerMinute: 100_000_000 },
      upstreams,
    );
    // the tenant's explicit choice to trust its judge uncalibrated: the load, not the trust gate, is under test
    await saveDetectorConfig(db, tenant, DetectionConfig.parse({ judgeMinKappa: null }));
    const traces = simulateProductionTraffic({ seed: 63, count: TRACES }).map((s) => Trace.parse(s.trace));
    for (let i = 0; i < traces.length; i += 500) await insertTraces(db, tenant, traces.slice(i, i + 500));
    assert.equal(await pendingDetections(db, tenant), TRACES);

    const idle: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await (await fetch(`${baseURL}/models`)).text();
      idle.push(Math.round(performance.now() - started));
    }
    const probes: number[] = [];
    const loads: { sockets: number; rssMiB: number }[] = [];
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const started = performance.now();
        const res = await fetch(`${baseURL}/models`, { signal: AbortSignal.timeout(5_000) });
        await res.text();
        probes.push(performance.now() - started);
        loads.push(processLoad(judge.child.pid as number));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const errors: unknown[] = [];
    const worker = new DetectionWorker(db, {
      config: { quietMs: 0, batchSize: 200, pollMs: 10, leaseMs: 120_000 },
      judgeUpstreams: upstreams,
      judgeRetryMs: 60_000,
      onError: (error) => errors.push(error),
    });
    const heapBefore = process.memoryUsage().heapUsed;
    worker.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, DETECTION_MS / 2));
      // the validation runs while detection keeps the judge busy
      const evalSet = {
        ...toolcallEvalFixture(tenant).evalSet,
        version: "sha256:judge-load",
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
      await registerModelVersion(db, tenant, {
        name: "production",
        status: "promoted",
        artifactDir: "/models/refuses",
        actor: "test",
      });
      await registerModelVersion(db, tenant, {
        name: "candidate",
        artifactDir: "/models/cancels",
        actor: "test",
      });
      const started = performance.now();
      const { validation } = await validateCandidate(
        {
          ...local.release.validatorDeps,
          judgeUpstreams: upstreams,
          judge: { judgeWithinMs: JUDGE_WITHIN_MS },
        },
        tenant,
        "candidate",
        "test",
      );
      const took = performance.now() - started;
      assert.ok(took < JUDGE_WITHIN_MS + 5_000, `validation ended within its bound (${took.toFixed(0)} ms)`);
      const judged = validation.report.slices.find((s) => s.slice === "pat-cancel")?.judgedBy ?? {};
      const decided = judged["judge:toolcall-judge"] ?? 0;
      assert.equal(
        validation.report.unjudged,
        QUESTIONS.length - decided,
        "every row not decided is counted",
      );
      console.log(`validation: ${decided} of ${QUESTIONS.length} rows judged in ${took.toFixed(0)} ms`);
      await new Promise((resolve) => setTimeout(resolve, DETECTION_MS / 2));
    } finally {
      await worker.stop();
      probing = false;
      await probe;
      await local.close();
    }
    const heapGrowthMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    const queue = (await tenantJudges(db, tenant, upstreams))?.queue;
    assert.ok(queue);
    const stats = queue.stats();
    const slowest = Math.max(...probes);
    const rss = loads.map((l) => l.rssMiB);
    console.log(
      JSON.stringify({
        idleModelsMs: idle,
        probes: probes.length,
        slowestModelsMs: Math.round(slowest),
        queue: stats,
        judgeSockets: Math.max(...loads.map((l) => l.sockets)),
        judgeRssMiB: [Math.round(Math.min(...rss)), Math.round(Math.max(...rss))],
        heapGrowthMiB: Math.round(heapGrowthMiB),
      }),
    );
    assert.ok(
      probes.length >= DETECTION_MS / 1_500,
      `the judge was probed throughout (${probes.length} probes)`,
    );
    assert.ok(
      slowest < 1_000,
      `GET /v1/models answered within 1 s each time (slowest ${slowest.toFixed(0)} ms)`,
    );
    assert.ok(
      stats.peakInFlight <= queue.limits.concurrency,
      "no more calls in flight than the queue's concurrency",
    );
    assert.ok(stats.refused > 0, "detection was refused once the queue was full (back-pressure)");
    // detection waits at most maxWaiting; the validation's own calls (two per row) wait ahead of them
    assert.ok(stats.peakWaiting <= queue.limits.maxWaiting + 2 * QUESTIONS.length);
    // per slot the call in flight and one kept alive or closing, besides the listening socket, the probe's and a few
    // others: never one per waiting trace
    const sockets = Math.max(...loads.map((l) => l.sockets));
    assert.ok(
      sockets <= 2 * queue.limits.concurrency + 8,
      `the judge holds a bounded number of sockets (${sockets})`,
    );
    // the judge's memory grows as its prefix cache fills (at most 128 MiB of keys and values) and its heap and tensor
    // pools warm up (206 MiB in all on a quiet machine), and no further: never with the traces waiting for it
    const grewMiB = Math.max(...rss) - rss[0];
    assert.ok(
      grewMiB < 128 + 128,
      `the judge's memory stayed bounded (${rss[0].toFixed(0)} MiB at first, ${Math.max(...rss).toFixed(0)} at most)`,
    );
    assert.ok(heapGrowthMiB < 256, `Arc's heap stayed bounded (${heapGrowthMiB.toFixed(0)} MiB more)`);
    assert.deepEqual(errors, []);
    // nothing is lost: every trace has a verdict or waits; the ones the judge could not take come back spread out
    const [row] = await db.query<{ waiting: number; rejudge: number; spreadMs: number }>(
      `select count(*)::int as waiting, count(*) filter (where reason = 'rejudge')::int as rejudge,
              coalesce(extract(epoch from max(enqueued_at) filter (where reason = 'rejudge') -
                                          min(enqueued_at) filter (where reason = 'rejudge')) * 1000, 0)::float8 as "spreadMs"
         from detection_queue where tenant_id = $1`,
      [tenant],
    );
    const [verdicts] = await db.query<{ n: number }>(
      "select count(*)::int as n from verdicts where tenant_id = $1",
      [tenant],
    );
    console.log(JSON.stringify({ ...row, verdicts: verdicts.n }));
    assert.ok(row.rejudge > 100, `traces the judge could not take wait to be judged again (${row.rejudge})`);
    assert.ok(
      row.spreadMs > 30_000,
      `their next tries are spread over the retry window, not one instant (${row.spreadMs} ms)`,
    );
  });
});
