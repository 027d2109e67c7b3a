// Trace list benchmark: with 1,000,000 traces of one tenant in PostgreSQL (one LLM step each, two in three judged,
// one in ten failed and assigned to one of 40 patterns), the server time of `GET /v1/traces` — the route's handler,
// query parsing, SQL and JSON, called in-process — for the dashboard's first page and a filtered search, and a few
// other filters beside them. The traces are bulk-loaded with generate_series into a fresh database, dropped after.
// Usage: ARC_TEST_DATABASE_URL=postgres://... node --import tsx bench/dashboard.bench.ts [--traces 1000000] [--runs 40]
// Writes bench/results/dashboard.json.
import { parseArgs } from "node:util";
import { Hono } from "hono";
import type { AuthVariables } from "../packages/server/src/http/auth-middleware.ts";
import { traceRoutes } from "../packages/server/src/http/routes/trace-routes.ts";
import { ServerMetrics } from "../packages/server/src/metrics/metrics-registry.ts";
import type { Database } from "../packages/server/src/store/database.ts";
import { migrate } from "../packages/server/src/store/migrate.ts";
import { openPostgresDatabase } from "../packages/server/src/store/postgres-database.ts";
import { createTenant } from "../packages/server/src/store/tenants.ts";
import { withFreshPostgresDatabase } from "./fresh-postgres-database.ts";
import { writeBenchResults } from "./results-file.ts";

/** The words a trace's text starts with, one per trace in turn: each is in 1 trace of 20. */
const TOPICS = [
  "refund",
  "booking",
  "weather",
  "invoice",
  "password",
  "shipping",
  "upgrade",
  "cancel",
  "address",
  "warranty",
  "coupon",
  "delivery",
  "login",
  "subscription",
  "receipt",
  "exchange",
  "complaint",
  "balance",
  "transfer",
  "schedule",
];

/** Loads `n` traces (and their steps, verdicts and failures) for `tenant` with set-based SQL; triggers are off. */
export async function loadBenchTraces(db: Database, tenant: string, n: number): Promise<void> {
  const topics = `(array[${TOPICS.map((t) => `'${t}'`).join(",")}])`;
  await db.transaction(async (tx) => {
    // the detection queue's triggers would queue every trace for a worker this bench does not run
    await tx.query("set local session_replication_role = replica");
    await tx.query(
      `insert into traces (tenant_id, id, name, started_at, ended_at, user_id, session_id, env, status, input,
                           output, tags, models, search_text)
       select $1, 'tr_' || i, 'support-agent', now() - i * interval '2 second',
              now() - i * interval '2 second' + (200 + i % 5000) * interval '1 millisecond',
              'user-' || (i % 5000), 'session-' || (i / 4),
              (array['toolcall', 'sql', 'math'])[1 + i % 3], 'ok',
              to_jsonb(${topics}[1 + i % 20] || ' question number ' || i),
              to_jsonb('answer to question ' || i),
              case when i % 50 = 0 then array['vip'] else '{}'::text[] end, array['arc'],
              ${topics}[1 + i % 20] || ' question number ' || i || E'\\nanswer to question ' || i
       from generate_series(1, $2::int) i`,
      [tenant, n],
    );
    await tx.query(
      `insert into steps (tenant_id, trace_id, id, kind, started_at, ended_at, latency_ms, model_requested,
                          model_served, model_version, prompt_tokens, completion_tokens, total_tokens)
       select $1, 'tr_' || i, 's1', 'llm', now() - i * interval '2 second', now() - i * interval '2 second',
              200 + i % 5000, 'arc', 'toolcall-base', 'mv_' || (i % 3), 100 + i % 700, 50 + i % 200,
              150 + i % 700 + i % 200
       from generate_series(1, $2::int) i`,
      [tenant, n],
    );
    await tx.query(
      `insert into verdicts (tenant_id, trace_id, status, failure_class, pattern_id, model_version, judgement)
       select $1, 'tr_' || i, case when i % 10 = 0 then 'failed' else 'passed' end,
              case when i % 10 = 0 then 'wrong_argument' end, case when i % 10 = 0 then 'pat_' || (i % 40) end,
              'mv_' || (i % 3), '{}'
       from generate_series(1, $2::int) i where i % 3 <> 2`,
      [tenant, n],
    );
    await tx.query(
      `insert into failures (tenant_id, trace_id, pattern_id, failure_class, model_version, started_at)
       select $1, 'tr_' || i, 'pat_' || (i % 40), 'wrong_argument', 'mv_' || (i % 3), now() - i * interval '2 second'
       from generate_series(1, $2::int) i where i % 3 <> 2 and i % 10 = 0`,
      [tenant, n],
    );
  });
  await db.query("analyze traces; analyze steps; analyze verdicts; analyze failures");
}

/** The p-th percentile (0-100) of `values`, nearest rank. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function main() {
  const { values } = parseArgs({
    options: { traces: { type: "string", default: "1000000" }, runs: { type: "string", default: "40" } },
  });
  const n = Number(values.traces);
  const runs = Number(values.runs);
  const measured = await withFreshPostgresDatabase("arc_bench_dashboard", async (url) => {
    const db = await openPostgresDatabase(url, { maxConnections: 4 });
    try {
      await migrate(db);
      const tenant = (await createTenant(db, "bench")).id;
      const loadStart = performance.now();
      await loadBenchTraces(db, tenant, n);
      const loadSeconds = (performance.now() - loadStart) / 1000;
      console.log(`loaded ${n} traces in ${loadSeconds.toFixed(1)} s`);

      const app = new Hono<{ Variables: AuthVariables }>();
      app.use(async (c, next) => {
        c.set("tenantId", tenant);
        await next();
      });
      app.route("/v1", traceRoutes({ db, metrics: new ServerMetrics(), maxBodyBytes: 1 << 20 }));
      const get = async (query: string) => {
        const response = await app.request(`/v1/traces?${query}`);
        if (!response.ok)
          throw new Error(`GET /v1/traces?${query}: ${response.status} ${await response.text()}`);
        return (await response.json()) as { data: unknown[]; nextCursor: string | null };
      };
      // a cursor 2,000 pages deep, as a reader paging on would hold
      const deep = await get("limit=500&to=" + new Date(Date.now() - 2 * 100_000 * 1000).toISOString());
      const cases: Record<string, string> = {
        first_page: "limit=50",
        filtered_search: "limit=50&q=refund&verdict=failed",
        deep_cursor_page: `limit=50&cursor=${encodeURIComponent(deep.nextCursor ?? "")}`,
        user: "limit=50&user=user-42",
        session_in_order: "limit=50&session=session-1234&order=asc",
        pattern: "limit=50&pattern=pat_10",
        model_version_failed: "limit=50&modelVersion=mv_1&verdict=failed",
        tokens_and_latency: "limit=50&minTokens=900&minLatencyMs=5000",
        rare_text: "limit=50&q=question%20number%20777777",
      };
      const figures: Record<string, { p50_ms: number; p95_ms: number; rows: number }> = {};
      for (const [name, query] of Object.entries(cases)) {
        const times: number[] = [];
        let rows = 0;
        for (let i = 0; i < runs + 3; i++) {
          const start = performance.now();
          rows = (await get(query)).data.length;
          if (i >= 3) times.push(performance.now() - start);
        }
        figures[name] = {
          p50_ms: Number(percentile(times, 50).toFixed(1)),
          p95_ms: Number(percentile(times, 95).toFixed(1)),
          rows,
        };
        console.log(`${name}: p50 ${figures[name].p50_ms} ms, p95 ${figures[name].p95_ms} ms (${rows} rows)`);
      }
      return { loadSeconds, figures };
    } finally {
      await db.close();
    }
  });
  if (!measured) process.exit(1);
  const { figures, loadSeconds } = measured;
  const path = writeBenchResults("dashboard", {
    first_page_p95_ms: figures.first_page.p95_ms,
    filtered_search_p95_ms: figures.filtered_search.p95_ms,
    target_p95_ms: 500,
    meets_target: figures.first_page.p95_ms < 500 && figures.filtered_search.p95_ms < 500,
    traces: n,
    runs,
    load_seconds: Number(loadSeconds.toFixed(1)),
    queries: figures,
  });
  console.log(`wrote ${path}`);
}

if (process.argv[1]?.endsWith("dashboard.bench.ts")) await main();
