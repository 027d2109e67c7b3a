// Ingest throughput: steps/s that `arc serve` commits through POST /v1/traces, batches of 100 steps, with the
// server in its own process (as in production, where agents run elsewhere) and a few requests in flight.
// `npm run bench` measures it among the backbone's figures; `node --import tsx bench/ingest-throughput.ts` alone.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { withFreshPostgresDatabase } from "./fresh-postgres-database.ts";

/** Options of `measureIngest`. */
export interface IngestOptions {
  /** A PostgreSQL server; absent means the embedded PGlite. */
  databaseUrl?: string;
  /** Requests of 100 steps each per measured round. Default 200 (20,000 steps). */
  batches?: number;
  /** Requests in flight at once. Default 8. */
  concurrency?: number;
  /** Measured rounds; the median is reported. Default 3. */
  rounds?: number;
  /** Run the failure-detection worker in the server process, as `arc serve` does by default. Default true. */
  detection?: boolean;
}

const tracesPerBatch = 25;
const stepsPerTrace = 4;

function batchBody(round: number, batch: number): string {
  const startedAt = new Date(Date.UTC(2026, 0, 1, 0, 0, batch % 60)).toISOString();
  const traces = Array.from({ length: tracesPerBatch }, (_, t) => {
    const id = `r${round}-b${batch}-t${t}`;
    return {
      id,
      name: "order-desk",
      startedAt,
      userId: `user-${t % 50}`,
      env: "toolcall",
      status: "ok",
      steps: Array.from({ length: stepsPerTrace }, (_, s) =>
        s % 2 === 0
          ? {
              id: `${id}-s${s}`,
              kind: "llm",
              startedAt,
              latencyMs: 120 + s,
              llm: {
                modelRequested: "arc-small",
                modelServed: "arc-small",
                messages: [
                  {
                    role: "system",
                    content: "You are the order desk. Use the tools to look up and act on orders.",
                  },
                  { role: "user", content: `Where is my order ${batch * 100 + t}? It was due on Monday.` },
                ],
                params: { temperature: 0.2, max_tokens: 128 },
                output: {
                  content: null,
                  toolCalls: [
                    {
                      id: `call_${s}`,
                      type: "function",
                      function: { name: "lookup_order", arguments: `{"order_id":"${batch * 100 + t}"}` },
                    },
                  ],
                },
                finishReason: "tool_calls",
                usage: { promptTokens: 48, completionTokens: 12, totalTokens: 60 },
              },
            }
          : {
              id: `${id}-s${s}`,
              kind: "tool",
              name: "lookup_order",
              startedAt,
              input: { order_id: String(batch * 100 + t) },
              output: { status: "shipped", eta: "2026-01-03" },
            },
      ),
    };
  });
  return JSON.stringify({ traces });
}

async function startServerProcess(
  home: string,
  databaseUrl: string | undefined,
  detection: boolean,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["bin/arc.mjs", "serve", "--port", "0", "--home", home], {
    env: { ...process.env, DATABASE_URL: databaseUrl ?? "", ARC_DETECT_WORKER: detection ? "1" : "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening at (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once("exit", (code) =>
      reject(new Error(`arc serve exited with ${code} before listening:\n${out}`)),
    );
  });
  return { url, child };
}

async function round(url: string, key: string, roundIndex: number, batches: number, concurrency: number) {
  const bodies = Array.from({ length: batches }, (_, b) => batchBody(roundIndex, b));
  let next = 0;
  let steps = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const res = await fetch(`${url}/v1/traces`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body,
        });
        if (!res.ok) throw new Error(`ingest failed: ${res.status} ${await res.text()}`);
        steps += ((await res.json()) as { inserted: { steps: number } }).inserted.steps;
      }
    }),
  );
  return steps / ((performance.now() - started) / 1000);
}

/** Median steps/s over `rounds` rounds (after one warm-up round), each with fresh trace ids. */
export async function measureIngest(
  options: IngestOptions = {},
): Promise<{ stepsPerSecond: number; rounds: number[] }> {
  const { batches = 200, concurrency = 8, rounds = 3, detection = true } = options;
  const home = mkdtempSync(join(tmpdir(), "arc-bench-ingest-"));
  const { url, child } = await startServerProcess(home, options.databaseUrl, detection);
  try {
    const key = JSON.parse(readFileSync(join(home, "credentials.json"), "utf8")).tenantKey as string;
    await round(url, key, 0, Math.min(batches, 50), concurrency);
    const measured: number[] = [];
    for (let r = 1; r <= rounds; r++) measured.push(await round(url, key, r, batches, concurrency));
    const sorted = [...measured].sort((a, b) => a - b);
    return { stepsPerSecond: sorted[Math.floor(sorted.length / 2)], rounds: measured };
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    rmSync(home, { recursive: true, force: true });
  }
}

/** Median steps/s and the rounds behind it. */
type IngestThroughput = Awaited<ReturnType<typeof measureIngest>>;

/**
 * Measures and prints ingest into PGlite and, when ARC_TEST_DATABASE_URL names one, into a PostgreSQL server: each
 * with the failure-detection worker in the server process (as `arc serve` runs by default) and without it.
 */
export async function runIngestBench(): Promise<{
  pglite: IngestThroughput;
  pgliteAlone: IngestThroughput;
  postgres: { withDetection: IngestThroughput; alone: IngestThroughput } | null;
}> {
  const rounds = (r: IngestThroughput) => r.rounds.map(Math.round).join(", ");
  const pglite = await measureIngest();
  const pgliteAlone = await measureIngest({ detection: false });
  console.log(
    `ingest into PGlite: ${Math.round(pglite.stepsPerSecond)} steps/s with failure detection running in the same process ` +
      `(rounds ${rounds(pglite)}), ${Math.round(pgliteAlone.stepsPerSecond)} steps/s with ARC_DETECT_WORKER=0 ` +
      `(rounds ${rounds(pgliteAlone)}); medians, batches of 100 steps, 8 in flight   target >= 8,000`,
  );
  const postgresWithDetection = await withFreshPostgresDatabase("arc_bench_ingest", (url) =>
    measureIngest({ databaseUrl: url }),
  );
  const postgresAlone = await withFreshPostgresDatabase("arc_bench_ingest", (url) =>
    measureIngest({ databaseUrl: url, detection: false }),
  );
  const postgres =
    postgresWithDetection && postgresAlone
      ? { withDetection: postgresWithDetection, alone: postgresAlone }
      : null;
  if (postgres) {
    console.log(
      `ingest into PostgreSQL: ${Math.round(postgres.withDetection.stepsPerSecond)} steps/s with detection in the same ` +
        `process (rounds ${rounds(postgres.withDetection)}), ${Math.round(postgres.alone.stepsPerSecond)} steps/s as an ` +
        `ingest-only process (rounds ${rounds(postgres.alone)})   target >= 25,000`,
    );
  }
  return { pglite, pgliteAlone, postgres };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await runIngestBench();
