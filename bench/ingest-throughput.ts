// Ingest throughput: steps/s that `arc serve` commits through POST /v1/traces, batches of 100 steps, with the
// server in its own process (as in production, where agents run elsewhere) and a few requests in flight.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

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
