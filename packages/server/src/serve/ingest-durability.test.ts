import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { openPostgresDatabase } from "../store/postgres-database.ts";
import { noPostgresServer } from "../store/test-databases.ts";

const arc = join(import.meta.dirname, "../../../../bin/arc.mjs");
const ROUNDS = 3;
const WRITERS = 4;
const BATCH = 25;
/** Batches acknowledged in a round before the server is killed, with every writer still sending. */
const ACKED_BEFORE_KILL = 8;

interface Server {
  child: ChildProcess;
  url: string;
  key: string;
}

/** Starts `arc serve` on a free port over `home` (and `databaseUrl` when given); resolves once it listens. */
function startArc(home: string, databaseUrl: string | undefined): Promise<Server> {
  const { DATABASE_URL: _, ...env } = process.env;
  const child = spawn(process.execPath, [arc, "serve", "--port", "0", "--home", home], {
    env: databaseUrl ? { ...env, DATABASE_URL: databaseUrl } : env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const take = (d: Buffer) => {
      out += d;
      const url = /listening at (http:\/\/\S+)/.exec(out)?.[1];
      const key = /API key: (\S+)/.exec(out)?.[1];
      if (url && key) resolve({ child, url, key });
    };
    child.stdout.on("data", take);
    child.stderr.on("data", (d) => {
      out += d;
    });
    child.once("exit", (code, signal) => reject(new Error(`arc serve exited (${code ?? signal}): ${out}`)));
  });
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

function trace(id: string) {
  return {
    id,
    name: "durability",
    startedAt: new Date().toISOString(),
    status: "ok",
    steps: [
      {
        id: `${id}-llm`,
        kind: "llm",
        startedAt: new Date().toISOString(),
        llm: {
          modelRequested: "arc-small",
          messages: [{ role: "user", content: `question ${id}` }],
          output: { content: "answer" },
          finishReason: "stop",
        },
      },
    ],
  };
}

/**
 * Runs WRITERS writers that POST batches of BATCH traces until the server dies, and SIGKILLs it once
 * ACKED_BEFORE_KILL batches were acknowledged. Returns the ids of the acknowledged traces and how many batches the
 * kill left unanswered; any answer but 200 fails.
 */
async function ingestUntilKilled(server: Server, round: number) {
  const acknowledged: string[] = [];
  let batches = 0;
  let unanswered = 0;
  let killing: Promise<void> | undefined;
  const writer = async (w: number) => {
    for (let b = 0; ; b++) {
      const ids = Array.from({ length: BATCH }, (_, i) => `r${round}-w${w}-b${b}-t${i}`);
      let status: number;
      let body: string;
      try {
        const res = await fetch(`${server.url}/v1/traces`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
          body: JSON.stringify({ traces: ids.map(trace) }),
        });
        status = res.status;
        body = await res.text();
      } catch {
        unanswered++;
        if (killing) return;
        throw new Error(`writer ${w} lost the server before it was killed`);
      }
      assert.equal(status, 200, `writer ${w}, batch ${b}: ${body}`);
      acknowledged.push(...ids);
      if (++batches === ACKED_BEFORE_KILL) killing = stop(server.child, "SIGKILL");
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  await killing;
  return { acknowledged, unanswered };
}

/** Every trace id the server lists for its tenant, with its step count. */
async function storedTraces(server: Server): Promise<Map<string, number>> {
  const stored = new Map<string, number>();
  let cursor: string | null = null;
  do {
    const query: string = `limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const res = await fetch(`${server.url}/v1/traces?${query}`, {
      headers: { authorization: `Bearer ${server.key}` },
    });
    assert.equal(res.status, 200);
    const page = (await res.json()) as {
      data: { id: string; stepCount: number }[];
      nextCursor: string | null;
    };
    for (const t of page.data) stored.set(t.id, t.stepCount);
    cursor = page.nextCursor;
  } while (cursor);
  return stored;
}

/** A fresh database on the server ARC_TEST_DATABASE_URL names, and how to drop it. */
async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.ARC_TEST_DATABASE_URL as string;
  const name = `arc_durability_${randomBytes(6).toString("hex")}`;
  const admin = await openPostgresDatabase(adminUrl, { maxConnections: 1 });
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.close();
    },
  };
}

const targets = [
  { name: "pglite", skip: false as const },
  {
    name: "postgres",
    skip: noPostgresServer(),
  },
];

for (const target of targets) {
  describe(`arc serve killed with SIGKILL during ingest (${target.name})`, { skip: target.skip }, () => {
    const cleanup: (() => Promise<void>)[] = [];
    after(async () => {
      for (const step of cleanup.reverse()) await step();
    });

    it(`loses none of the traces it acknowledged, over ${ROUNDS} kills with ${WRITERS} writers`, async (t) => {
      const home = await mkdtemp(join(tmpdir(), "arc-durability-"));
      cleanup.push(() => rm(home, { recursive: true, force: true }));
      let databaseUrl: string | undefined;
      if (target.name === "postgres") {
        const db = await freshPostgresDatabase();
        cleanup.push(db.drop);
        databaseUrl = db.url;
      }
      const acknowledged: string[] = [];
      for (let round = 0; round <= ROUNDS; round++) {
        const server = await startArc(home, databaseUrl);
        cleanup.push(() => stop(server.child, "SIGKILL"));
        if (round > 0) {
          const stored = await storedTraces(server);
          const lost = acknowledged.filter((id) => stored.get(id) !== 1);
          assert.deepEqual(
            lost,
            [],
            `after kill ${round}: acknowledged traces missing or without their step`,
          );
        }
        if (round === ROUNDS) {
          await stop(server.child, "SIGTERM");
          break;
        }
        const ingested = await ingestUntilKilled(server, round);
        acknowledged.push(...ingested.acknowledged);
        t.diagnostic(
          `kill ${round + 1}: ${ingested.acknowledged.length} traces acknowledged, ${ingested.unanswered} batches in flight`,
        );
      }
      assert.ok(acknowledged.length >= ROUNDS * ACKED_BEFORE_KILL * BATCH);
    });
  });
}
