import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import { OpenAITestServer } from "@arc/sdk/test-doubles";
import { openPostgresDatabase } from "../store/postgres-database.ts";
import { noPostgresServer } from "../store/test-databases.ts";

const arc = join(import.meta.dirname, "../../../../bin/arc.mjs");
/** The bound on /health's and another tenant's gateway call's p99 while the attack runs (issue 58). */
const P99_BOUND_MS = 500;
/** Batches of attack traces, sent one after another, and traces of each kind in a batch. */
const BATCHES = 4;
const PER_KIND = 6;
/** 32 `a`s and a `!`: `^(a+)+$` backtracks 2^32 ways on it in a backtracking regex engine. */
const REDOS_TEXT = `${"a".repeat(32)}!`;
const REDOS_SCHEMA = {
  type: "object",
  properties: { code: { type: "string", pattern: "^(a+)+$" } },
  required: ["code"],
};

interface ArcServe {
  child: ChildProcess;
  url: string;
  key: string;
  adminKey: string;
}

/** Starts `arc serve` on a free port over `home`, with `env` added; resolves once it listens. */
function startArc(home: string, env: Record<string, string>): Promise<ArcServe> {
  const { DATABASE_URL: _, ...inherited } = process.env;
  const child = spawn(process.execPath, [arc, "serve", "--port", "0", "--home", home], {
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const take = (d: Buffer) => {
      out += d;
      const url = /listening at (http:\/\/\S+)/.exec(out)?.[1];
      const key = /API key: (\S+)/.exec(out)?.[1];
      const adminKey = /admin key: +(\S+)/.exec(out)?.[1];
      if (url && key && adminKey) resolve({ child, url, key, adminKey });
    };
    child.stdout.on("data", take);
    child.stderr.on("data", (d) => {
      out += d;
    });
    child.once("exit", (code, signal) => reject(new Error(`arc serve exited (${code ?? signal}): ${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

function p99(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

/** A trace whose LLM step offered `lookup` with `parameters` and called it with `args`. */
function toolTrace(id: string, parameters: unknown, args: unknown) {
  const at = new Date().toISOString();
  const call = { id: "c1", type: "function", function: { name: "lookup", arguments: JSON.stringify(args) } };
  return {
    id,
    startedAt: at,
    steps: [
      {
        id: "s1",
        kind: "llm",
        startedAt: at,
        llm: {
          messages: [{ role: "user", content: "go" }],
          tools: [{ type: "function", function: { name: "lookup", parameters } }],
          output: { content: null, toolCalls: [call] },
        },
      },
    ],
  };
}

/** A trace of the `codes` family whose answer redeems `code`. */
function familyTrace(id: string, code: string) {
  const at = new Date().toISOString();
  const answer = JSON.stringify({ tool: "redeem", args: { code } });
  return {
    id,
    env: "codes",
    startedAt: at,
    metadata: { solution: { tool: "redeem", args: { code: "aaaa" } } },
    steps: [{ id: "s1", kind: "llm", startedAt: at, llm: { messages: [], output: { content: answer } } }],
  };
}

/** 24 `$defs`, each `anyOf` two `$ref`s to the next: 2^24 paths over the same value in Ajv. */
function exponentialSchema(): Record<string, unknown> {
  const $defs: Record<string, unknown> = { l24: { type: "string" } };
  for (let i = 0; i < 24; i++) {
    $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
  }
  return { $defs, $ref: "#/$defs/l0" };
}

const targets = [
  { name: "PGlite", skip: false as const },
  { name: "PostgreSQL", skip: noPostgresServer() },
];

for (const target of targets) {
  describe(`arc serve while a tenant sends hostile schemas and patterns (${target.name})`, {
    skip: target.skip,
  }, () => {
    const cleanup: (() => Promise<void>)[] = [];
    after(async () => {
      for (const step of cleanup.reverse()) await step();
    });

    it(`answers /health and another tenant's gateway call within ${P99_BOUND_MS} ms (p99) throughout`, async (t) => {
      const home = await mkdtemp(join(tmpdir(), "arc-hostile-schemas-"));
      cleanup.push(() => rm(home, { recursive: true, force: true }));
      // TEST DOUBLE of a hosted model: the other tenant's production model answers through it
      const provider = await OpenAITestServer.start();
      cleanup.push(() => provider.close());
      const env: Record<string, string> = {
        ARC_UPSTREAMS: JSON.stringify({ hosted: { baseUrl: provider.url } }),
      };
      if (target.name === "PostgreSQL") {
        const name = `arc_hostile_${randomBytes(5).toString("hex")}`;
        const admin = await openPostgresDatabase(process.env.ARC_TEST_DATABASE_URL as string, {
          maxConnections: 1,
        });
        await admin.query(`create database ${name}`);
        cleanup.push(async () => {
          await admin.query(`drop database if exists ${name} with (force)`);
          await admin.close();
        });
        const url = new URL(process.env.ARC_TEST_DATABASE_URL as string);
        url.pathname = `/${name}`;
        env.DATABASE_URL = url.toString();
      }
      const server = await startArc(home, env);
      cleanup.push(() => stop(server.child));

      const send = (key: string, method: string, path: string, body?: unknown) =>
        fetch(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      await send(server.adminKey, "POST", "/v1/admin/tenants", { name: "globex" });
      const globex = (await (await send(server.adminKey, "POST", "/v1/admin/tenants/globex/keys", {})).json())
        .key;
      const registered = await send(globex, "POST", "/v1/model-versions", {
        name: "prod",
        status: "promoted",
        upstream: { name: "hosted", model: "m" },
      });
      assert.equal(registered.status, 201, await registered.text());
      const chat = () =>
        send(globex, "POST", "/v1/chat/completions", {
          model: "prod",
          messages: [{ role: "user", content: "hi" }],
        });
      assert.equal((await chat()).status, 200);
      const family = { tools: [{ name: "redeem", parameters: REDOS_SCHEMA }] };
      assert.equal((await send(server.key, "PUT", "/v1/task-families/codes", family)).status, 201);

      let attacking = true;
      const health: number[] = [];
      const gateway: number[] = [];
      const probe = async (samples: number[], request: () => Promise<Response>) => {
        while (attacking) {
          const started = performance.now();
          const res = await request();
          await res.arrayBuffer();
          samples.push(performance.now() - started);
          assert.equal(res.status, 200);
        }
      };
      const probes = [probe(health, () => fetch(`${server.url}/health`)), probe(gateway, chat)];

      const attack: string[] = [];
      try {
        for (let b = 0; b < BATCHES; b++) {
          const traces = Array.from({ length: PER_KIND }, (_, i) => [
            toolTrace(`redos-${b}-${i}`, REDOS_SCHEMA, { code: REDOS_TEXT }),
            familyTrace(`family-${b}-${i}`, REDOS_TEXT),
            toolTrace(`exponential-${b}-${i}`, exponentialSchema(), { v: 1 }),
          ]).flat();
          const res = await send(server.key, "POST", "/v1/traces", { traces });
          assert.equal(res.status, 200, await res.text());
          attack.push(...traces.map((trace) => trace.id));
        }
        // the attack lasts until every one of its traces is judged (asked one at a time: the asking is load too)
        let judged = 0;
        await waitUntil(
          async () => {
            while (judged < attack.length) {
              const res = await send(server.key, "GET", `/v1/verdicts?traceId=${attack[judged]}`);
              await res.arrayBuffer();
              if (res.status !== 200) return false;
              judged++;
            }
            return true;
          },
          "the attack's verdicts",
          { timeoutMs: 120_000, intervalMs: 200 },
        );
      } finally {
        attacking = false;
        await Promise.all(probes);
      }
      const redos = await (await send(server.key, "GET", "/v1/verdicts?traceId=redos-0-0")).json();
      assert.equal(redos.failureClass, "schema_violation");
      const familyVerdict = await (await send(server.key, "GET", "/v1/verdicts?traceId=family-0-0")).json();
      assert.equal(familyVerdict.failureClass, "schema_violation");

      t.diagnostic(
        `${attack.length} attack traces; /health p99 ${p99(health).toFixed(0)} ms over ${health.length} calls, ` +
          `gateway p99 ${p99(gateway).toFixed(0)} ms over ${gateway.length} calls`,
      );
      assert.ok(health.length >= 20 && gateway.length >= 20, "too few probes to have a p99");
      assert.ok(p99(health) < P99_BOUND_MS, `/health p99 ${p99(health)} ms`);
      assert.ok(p99(gateway) < P99_BOUND_MS, `gateway p99 ${p99(gateway)} ms`);
    });
  });
}
