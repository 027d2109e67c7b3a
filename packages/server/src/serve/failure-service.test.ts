import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { clusteringScores, type FailurePattern } from "@arc/core";
import { simulateProductionTraffic, waitUntil } from "@arc/core/testing";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import pg from "pg";
import { loadServerConfig } from "../config/server-config.ts";
import { noPostgresServer } from "../store/test-databases.ts";
import { type RunningServer, startServer } from "./start-server.ts";

/** What the label of each injected mode's main pattern must say: the class and the tool/path or topic at fault. */
const LABELS: Record<string, RegExp> = {
  "wrong_tool: book_table→add_event": /^wrong_tool: book_table→add_event$/,
  "wrong_argument: get_weather.unit": /^wrong_argument: get_weather\.unit$/,
  "wrong_argument: add_event.date": /^wrong_argument: add_event\.date$/,
  "parse_error: unclosed JSON": /^parse_error: json \(expected <s> or <s> after property value/,
  "schema_violation: book_table.people": /^schema_violation: book_table\.people$/,
  "execution_error: convert_currency (YEN)":
    /^execution_error: convert_currency \(unsupported currency yen\)$/,
  "refusal: currency requests": /^refusal: .*(usd|eur|dollars|euros|yen|chf|gbp|cad|convert)/,
  "refusal: booking requests": /^refusal: .*(book|table|reserve)/,
  "truncation: add_event": /^truncation: add_event$/,
  empty_output: /^empty_output$/,
  "wrong_answer: calc": /^wrong_answer: calc$/,
  "parse_error: prose answer": /^parse_error: json \(unexpected token/,
  "tool_loop: lookup_order": /^tool_loop: lookup_order$/,
  "wrong_argument: refund_order.amount": /^wrong_argument: refund_order\.amount$/,
  "wrong_tool: acted before lookup_order": /^wrong_tool: orderdesk\.lookup_order$/,
  timeout: /^timeout/,
  latency_over_budget: /^latency_over_budget$/,
  "user_feedback: thumbs_down": /^user_feedback: thumbs_down$/,
};

// biome-ignore lint/suspicious/noExplicitAny: the test reads JSON answers of many shapes and asserts on them
type Json = any;

/** A store for `arc serve`: its own PGlite under the home, or a fresh database on the PostgreSQL test server. */
interface Store {
  name: string;
  skip: string | false;
  open(): Promise<{ databaseUrl?: string; drop(): Promise<void> }>;
}

const serverUrl = process.env.ARC_TEST_DATABASE_URL;
const stores: Store[] = [
  { name: "PGlite", skip: false, open: async () => ({ drop: async () => {} }) },
  {
    name: "PostgreSQL",
    skip: noPostgresServer(),
    async open() {
      const name = `arc_failures_${randomBytes(5).toString("hex")}`;
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      await admin.query(`create database ${name}`);
      const url = new URL(serverUrl as string);
      url.pathname = `/${name}`;
      return {
        databaseUrl: url.toString(),
        async drop() {
          await admin.query(`drop database if exists ${name} with (force)`);
          await admin.end();
        },
      };
    },
  },
];

for (const store of stores) {
  const TRACES = 3000;
  const traffic = simulateProductionTraffic({
    seed: 21,
    count: TRACES,
    modelVersions: ["base-v1", "base-v2"],
  });

  /** The end-to-end test: production traffic in through HTTP, patterns and datasets out through HTTP. */
  describe(`failure pipeline behind arc serve on ${store.name}`, { skip: store.skip }, () => {
    let database: Awaited<ReturnType<Store["open"]>>;
    let home: string;
    let server: RunningServer;
    let acme: string;
    let globex: string;

    const call = async (key: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const type = res.headers.get("content-type") ?? "";
      const payload =
        type.includes("json") && !type.includes("jsonl")
          ? await res.json()
          : new Uint8Array(await res.arrayBuffer());
      return { status: res.status, body: payload as Json, headers: res.headers };
    };

    before(async () => {
      home = mkdtempSync(join(tmpdir(), "arc-failures-e2e-"));
      database = await store.open();
      server = await startServer(loadServerConfig({}, { home, port: 0, databaseUrl: database.databaseUrl }), {
        failures: { config: { quietMs: 0, pollMs: 20, batchSize: 500 } },
      });
      acme = server.credentials?.tenantKey as string;
      const admin = server.credentials?.adminKey as string;
      await call(admin, "POST", "/v1/admin/tenants", { name: "globex" });
      globex = (await call(admin, "POST", "/v1/admin/tenants/globex/keys", {})).body.key;
      for (let i = 0; i < traffic.length; i += 100) {
        const batch = traffic.slice(i, i + 100);
        const sent = await call(acme, "POST", "/v1/traces", { traces: batch.map((s) => s.trace) });
        assert.equal(sent.status, 200);
        const feedback = batch.flatMap((s) => s.feedback);
        if (feedback.length) assert.equal((await call(acme, "POST", "/v1/feedback", feedback)).status, 200);
      }
      await waitUntil(
        async () => {
          const { body } = await call(acme, "GET", "/v1/patterns?limit=1");
          const judged = Object.values(body.verdicts as Record<string, number>).reduce((a, b) => a + b, 0);
          return body.pending === 0 && judged === TRACES;
        },
        `all ${TRACES} traces to be judged`,
        { timeoutMs: 120_000, intervalMs: 100 },
      );
    });
    after(async () => {
      await server?.close();
      await database?.drop();
      rmSync(home, { recursive: true, force: true });
    });

    it("judges every ingested trace once and recovers the injected modes with purity and completeness >= 0.9, labels naming them", async () => {
      const rows = await server.db.query<{ trace_id: string; pattern_id: string | null; revision: number }>(
        "select trace_id, pattern_id, revision from verdicts",
      );
      assert.equal(rows.length, TRACES);
      const byTrace = new Map(rows.map((r) => [r.trace_id, r.pattern_id]));
      const pairs = traffic
        .filter((s) => s.injected)
        .map((s) => ({
          predicted: byTrace.get(s.trace.id as string) ?? "(missed)",
          truth: s.injected as string,
        }));
      const scores = clusteringScores(pairs);
      console.log(
        `purity ${scores.purity.toFixed(4)}, completeness ${scores.completeness.toFixed(4)}, ${scores.clusters} patterns`,
      );
      assert.ok(scores.purity >= 0.9, `purity ${scores.purity}`);
      assert.ok(scores.completeness >= 0.9, `completeness ${scores.completeness}`);
      const { body } = await call(acme, "GET", "/v1/patterns?limit=1000");
      const patterns = body.data as FailurePattern[];
      for (const [mode, label] of Object.entries(LABELS)) {
        const counts = new Map<string, number>();
        for (const p of pairs)
          if (p.truth === mode) counts.set(p.predicted, (counts.get(p.predicted) ?? 0) + 1);
        const main = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
        assert.match(patterns.find((p) => p.id === main)?.label ?? "(no pattern)", label, mode);
      }
    });

    it("lists patterns with counts per model version and day, and examples that lead back to traces", async () => {
      const { body } = await call(acme, "GET", "/v1/patterns");
      const [top] = body.data as FailurePattern[];
      assert.ok(top.count > 0);
      assert.equal(
        Object.values(top.countsByModelVersion).reduce((a, b) => a + b, 0),
        top.count,
      );
      assert.ok(top.examples.length > 0);
      const trace = await call(acme, "GET", `/v1/traces/${encodeURIComponent(top.examples[0].traceId)}`);
      assert.equal(trace.status, 200);
      const all = (await call(acme, "GET", "/v1/patterns?limit=1000")).body.data as FailurePattern[];
      const onV2 = all.filter((p) => (p.countsByModelVersion["base-v2"] ?? 0) > 0).map((p) => p.id);
      assert.ok(onV2.length > 0, "the traffic has failures of base-v2");
      const v2 = await call(acme, "GET", "/v1/patterns?modelVersion=base-v2&limit=1000");
      assert.deepEqual((v2.body.data as FailurePattern[]).map((p) => p.id).sort(), onV2.sort());
      assert.deepEqual((await call(acme, "GET", "/v1/patterns?modelVersion=base-v9")).body.data, []);
      const shown = await call(acme, "GET", `/v1/patterns/${top.id}`);
      assert.equal(shown.body.id, top.id);
      assert.equal(shown.body.recentTraces.length, Math.min(20, top.count));
    });

    it("gives a trace's verdict with every detector's evidence", async () => {
      const failed = traffic.find((s) => s.injected === "wrong_argument: get_weather.unit");
      const verdict = await call(acme, "GET", `/v1/verdicts?traceId=${failed?.trace.id}`);
      assert.equal(verdict.status, 200);
      assert.equal(verdict.body.status, "failed");
      assert.equal(verdict.body.failureClass, "wrong_argument");
      assert.match(verdict.body.judgement.primary.evidence.message, /unit/);
      assert.equal((await call(acme, "GET", "/v1/verdicts")).status, 400);
    });

    it("stores detector settings per tenant and refuses unknown detectors by name", async () => {
      const put = await call(globex, "PUT", "/v1/detectors", {
        disabled: ["latency"],
        latencyBudgetMs: 5000,
      });
      assert.equal(put.status, 200);
      assert.deepEqual(put.body.config.disabled, ["latency"]);
      assert.equal(put.body.detectors.find((d: { id: string }) => d.id === "latency").enabled, false);
      assert.deepEqual((await call(acme, "GET", "/v1/detectors")).body.config.disabled, []);
      const bad = await call(acme, "PUT", "/v1/detectors", { disabled: ["no-such-detector"] });
      assert.equal(bad.status, 404);
      assert.match(bad.body.error.message, /no-such-detector/);
      const wrong = await call(acme, "PUT", "/v1/detectors", { latencyBudgetMs: -1 });
      assert.equal(wrong.status, 400);
      assert.match(wrong.body.error.message, /latencyBudgetMs/);
    });

    it("synthesizes an EvalSet and a PromptPool that do not overlap, deterministic for a seed, with lineage", async () => {
      const evalSet = await call(acme, "POST", "/v1/datasets", {
        kind: "eval",
        seed: 3,
        perPattern: 5,
        generalSize: 20,
      });
      assert.equal(evalSet.status, 201);
      assert.match(evalSet.body.version, /^sha256:/);
      assert.ok(evalSet.body.sourceTraceIds.length > 0);
      const again = await call(acme, "POST", "/v1/datasets", {
        kind: "eval",
        seed: 3,
        perPattern: 5,
        generalSize: 20,
      });
      assert.equal(again.status, 200, "the same request over the same data is the same dataset");
      assert.equal(again.body.id, evalSet.body.id);
      const pool = await call(acme, "POST", "/v1/datasets", { kind: "prompts", seed: 3, size: 200 });
      assert.equal(pool.status, 201);
      const evalRows = (await call(acme, "GET", `/v1/datasets/${evalSet.body.id}`)).body.rows as {
        question: string;
      }[];
      const poolRows = (await call(acme, "GET", `/v1/datasets/${pool.body.id}`)).body.rows as {
        question: string;
        meta: { sourceTraceIds: string[]; source: string };
      }[];
      const held = new Set(evalRows.map((r) => r.question));
      assert.ok(!poolRows.some((r) => held.has(r.question)), "no eval question is trained on");
      assert.ok(
        poolRows.filter((r) => r.meta.source === "failure").every((r) => r.meta.sourceTraceIds.length > 0),
      );
      const listed = await call(acme, "GET", "/v1/datasets?kind=eval");
      assert.deepEqual(
        listed.body.data.map((d: { id: string }) => d.id),
        [evalSet.body.id],
      );
    });

    it("exports datasets as JSONL, chat JSONL and VERL parquet an independent reader reads back", async () => {
      const [pool] = (await call(acme, "GET", "/v1/datasets?kind=prompts")).body.data;
      const stored = (await call(acme, "GET", `/v1/datasets/${pool.id}`)).body;
      const jsonl = await call(acme, "GET", `/v1/datasets/${pool.id}/export?format=jsonl`);
      const lines = new TextDecoder()
        .decode(jsonl.body)
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l));
      assert.equal(lines.length, stored.rowCount);
      assert.equal(lines[0].question, stored.rows[0].question);
      const chat = await call(acme, "GET", `/v1/datasets/${pool.id}/export?format=chat`);
      const first = JSON.parse(new TextDecoder().decode(chat.body).split("\n")[0]);
      assert.equal(first.messages.at(-1).role, "assistant");
      const parquet = await call(acme, "GET", `/v1/datasets/${pool.id}/export?format=verl-parquet`);
      assert.match(parquet.headers.get("content-disposition") ?? "", /\.verl\.parquet/);
      const table = tableFromIPC(readParquet(parquet.body).intoIPCStream());
      assert.equal(table.numRows, stored.rowCount);
      const row = JSON.parse(JSON.stringify(table.get(0)?.toJSON()));
      assert.deepEqual(JSON.parse(row.reward_model.ground_truth), stored.rows[0].solution);
      const wrong = await call(acme, "GET", `/v1/datasets/${pool.id}/export?format=preferences`);
      assert.equal(wrong.status, 400);
      assert.match(
        wrong.body.error.message,
        /expected one of jsonl, chat, verl-parquet for a prompts dataset/,
      );
    });

    it("builds preference pairs from human corrections left as feedback, each leading back to its trace", async () => {
      const failed = traffic.filter((s) => s.injected === "wrong_argument: get_weather.unit").slice(0, 6);
      const corrections = new Map(failed.map((s) => [s.trace.id as string, JSON.stringify(s.task.solution)]));
      const feedback = failed.map((s, i) => ({
        id: `fix-${i}`,
        traceId: s.trace.id,
        label: "wrong",
        correction: corrections.get(s.trace.id as string),
      }));
      assert.equal((await call(acme, "POST", "/v1/feedback", feedback)).status, 200);
      const verdict = (await call(acme, "GET", `/v1/verdicts?traceId=${failed[0].trace.id}`)).body;
      const set = await call(acme, "POST", "/v1/datasets", {
        kind: "preferences",
        fromPatterns: [verdict.patternId],
      });
      assert.equal(set.status, 201);
      const rows = (await call(acme, "GET", `/v1/datasets/${set.body.id}`)).body.rows as {
        chosen: string;
        meta: { sourceTraceIds: string[]; chosenSource: string; chosenVerified: boolean };
      }[];
      assert.ok(rows.length > 0, `pairs made: ${JSON.stringify(set.body.stats)}`);
      for (const row of rows) {
        assert.equal(row.meta.chosenSource, "human");
        assert.equal(row.meta.chosenVerified, true);
        for (const id of row.meta.sourceTraceIds) assert.equal(row.chosen, corrections.get(id));
      }
      const exported = await call(acme, "GET", `/v1/datasets/${set.body.id}/export?format=preferences`);
      const line = JSON.parse(new TextDecoder().decode(exported.body).split("\n")[0]);
      assert.deepEqual(line.chosen, [{ role: "assistant", content: rows[0].chosen }]);
    });

    it("refuses a dataset request naming the field at fault", async () => {
      const unknownPattern = await call(acme, "POST", "/v1/datasets", {
        kind: "eval",
        fromPatterns: ["pat_nope"],
      });
      assert.equal(unknownPattern.status, 400);
      assert.match(unknownPattern.body.error.message, /fromPatterns: no pattern with id "pat_nope"/);
      const badKind = await call(acme, "POST", "/v1/datasets", { kind: "sft" });
      assert.equal(badKind.status, 400);
      assert.match(badKind.body.error.message, /kind/);
      const badRatio = await call(acme, "POST", "/v1/datasets", { kind: "prompts", failureSamplingRatio: 2 });
      assert.match(badRatio.body.error.message, /failureSamplingRatio/);
    });

    it("runs a dataset schedule and records the dataset it made", async () => {
      const put = await call(acme, "PUT", "/v1/dataset-schedules/nightly-eval", {
        everyMs: 1000,
        request: { kind: "eval", seed: 9, perPattern: 2, generalSize: 5 },
      });
      assert.equal(put.status, 200);
      await server.db.query("update dataset_schedules set next_run_at = now()");
      const { runDueSchedules } = await import("../failures/dataset-schedules.ts");
      const ran = await runDueSchedules(server.db);
      const mine = ran.find((r) => r.schedule.name === "nightly-eval");
      assert.ok(mine?.schedule.lastDatasetId, mine?.schedule.lastError ?? "no dataset");
      const made = await call(acme, "GET", `/v1/datasets/${mine.schedule.lastDatasetId}`);
      assert.equal(made.body.createdBy, "schedule:nightly-eval");
      assert.equal((await call(acme, "DELETE", "/v1/dataset-schedules/nightly-eval")).status, 204);
    });

    it("keeps every endpoint to the caller's tenant", async () => {
      const [pattern] = (await call(acme, "GET", "/v1/patterns")).body.data;
      const [dataset] = (await call(acme, "GET", "/v1/datasets")).body.data;
      const traceId = traffic[0].trace.id;
      const other = await call(globex, "GET", "/v1/patterns");
      assert.deepEqual(other.body.data, []);
      assert.deepEqual(other.body.verdicts, {});
      assert.equal((await call(globex, "GET", `/v1/patterns/${pattern.id}`)).status, 404);
      assert.equal((await call(globex, "GET", `/v1/verdicts?traceId=${traceId}`)).status, 404);
      assert.deepEqual((await call(globex, "GET", "/v1/datasets")).body.data, []);
      assert.equal((await call(globex, "GET", `/v1/datasets/${dataset.id}`)).status, 404);
      assert.equal((await call(globex, "GET", `/v1/datasets/${dataset.id}/export?format=jsonl`)).status, 404);
      const made = await call(globex, "POST", "/v1/datasets", { kind: "eval" });
      assert.equal(made.body.rowCount, 0, "another tenant's failures never enter a dataset");
      assert.equal(
        (await call(globex, "POST", "/v1/datasets", { kind: "eval", fromPatterns: [pattern.id] })).status,
        400,
      );
      await call(acme, "PUT", "/v1/dataset-schedules/weekly", {
        everyMs: 604_800_000,
        request: { kind: "eval" },
      });
      assert.deepEqual((await call(globex, "GET", "/v1/dataset-schedules")).body.data, []);
      assert.equal((await call(globex, "DELETE", "/v1/dataset-schedules/weekly")).status, 404);
      assert.equal((await call(acme, "GET", "/v1/dataset-schedules")).body.data.length, 1);
      assert.deepEqual((await call(acme, "GET", "/v1/detectors")).body.config.disabled, []);
      assert.equal((await call("not-a-key", "GET", "/v1/patterns")).status, 401);
    });
  });
}
