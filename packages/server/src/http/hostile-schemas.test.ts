import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SCHEMA_BOUNDS } from "@arc/core";
import { waitUntil } from "@arc/core/testing";
import pg from "pg";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import { noPostgresServer } from "../store/test-databases.ts";

// biome-ignore lint/suspicious/noExplicitAny: the test reads JSON answers of many shapes and asserts on them
type Json = any;

/** 32 `a`s and a `!`: `^(a+)+$` backtracks 2^32 ways on it in a backtracking regex engine. */
const REDOS_TEXT = `${"a".repeat(32)}!`;
const REDOS_SCHEMA = {
  type: "object",
  properties: { code: { type: "string", pattern: "^(a+)+$" } },
  required: ["code"],
};

/** A store for `arc serve`: its own PGlite under the home, or a fresh database on the PostgreSQL test server. */
const stores = [
  { name: "PGlite", skip: false as const, open: async () => ({ drop: async () => {} }) },
  {
    name: "PostgreSQL",
    skip: noPostgresServer(),
    async open(): Promise<{ databaseUrl?: string; drop(): Promise<void> }> {
      const name = `arc_schemas_${randomBytes(5).toString("hex")}`;
      const admin = new pg.Client({ connectionString: process.env.ARC_TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`create database ${name}`);
      const url = new URL(process.env.ARC_TEST_DATABASE_URL as string);
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

/** A trace whose LLM step offered `tool` with `parameters` and called it with `args`. */
function toolTrace(id: string, tool: string, parameters: unknown, args: unknown) {
  const at = new Date().toISOString();
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
          tools: [{ type: "function", function: { name: tool, parameters } }],
          output: {
            content: null,
            toolCalls: [
              { id: "c1", type: "function", function: { name: tool, arguments: JSON.stringify(args) } },
            ],
          },
        },
      },
    ],
  };
}

for (const store of stores) {
  describe(`a tenant's schemas and patterns behind arc serve on ${store.name}`, { skip: store.skip }, () => {
    let database: { databaseUrl?: string; drop(): Promise<void> };
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
      return { status: res.status, body: (await res.json()) as Json };
    };

    /** The verdict of a trace once the detection worker wrote it; /health is timed meanwhile and must stay fast. */
    const verdictOf = async (key: string, traceId: string): Promise<Json> => {
      let verdict: Json;
      const slowest = { ms: 0 };
      await waitUntil(
        async () => {
          const started = performance.now();
          assert.equal((await fetch(`${server.url}/health`)).status, 200);
          slowest.ms = Math.max(slowest.ms, performance.now() - started);
          const res = await call(key, "GET", `/v1/verdicts?traceId=${traceId}`);
          verdict = res.body;
          return res.status === 200;
        },
        `the verdict of ${traceId}`,
        { timeoutMs: 30_000 },
      );
      assert.ok(slowest.ms < 1_000, `/health took ${slowest.ms} ms while ${traceId} was judged`);
      return verdict;
    };

    before(async () => {
      home = mkdtempSync(join(tmpdir(), "arc-schemas-"));
      database = await store.open();
      server = await startServer(loadServerConfig({}, { home, port: 0, databaseUrl: database.databaseUrl }), {
        release: { workers: false },
        failures: { config: { quietMs: 0, pollMs: 20 } },
      });
      acme = server.credentials?.tenantKey as string;
      const admin = server.credentials?.adminKey as string;
      await call(admin, "POST", "/v1/admin/tenants", { name: "globex" });
      globex = (await call(admin, "POST", "/v1/admin/tenants/globex/keys", {})).body.key;
    });
    after(async () => {
      await server?.close();
      await database?.drop();
      rmSync(home, { recursive: true, force: true });
    });

    it("judges a trace whose tool schema has ^(a+)+$ and an argument of 32 a's and ! as a schema violation, at once", async () => {
      const trace = toolTrace("redos-tool", "redeem", REDOS_SCHEMA, { code: REDOS_TEXT });
      assert.equal((await call(acme, "POST", "/v1/traces", { traces: [trace] })).status, 200);
      const verdict = await verdictOf(acme, "redos-tool");
      assert.equal(verdict.failureClass, "schema_violation");
      assert.equal(verdict.judgement.primary.path, "redeem.arguments/code");
    });

    it("registers a family with ^(a+)+$ and judges and rewards its answers at once", async () => {
      const family = { tools: [{ name: "redeem", parameters: REDOS_SCHEMA }] };
      assert.equal((await call(acme, "PUT", "/v1/task-families/codes", family)).status, 201);
      const answer = JSON.stringify({ tool: "redeem", args: { code: REDOS_TEXT } });
      const solution = { tool: "redeem", args: { code: "aaaa" } };
      const at = new Date().toISOString();
      const trace = {
        id: "redos-family",
        env: "codes",
        startedAt: at,
        metadata: { solution },
        steps: [{ id: "s1", kind: "llm", startedAt: at, llm: { messages: [], output: { content: answer } } }],
      };
      assert.equal((await call(acme, "POST", "/v1/traces", { traces: [trace] })).status, 200);
      const verdict = await verdictOf(acme, "redos-family");
      assert.deepEqual([verdict.detectorId, verdict.failureClass], ["verifier", "schema_violation"]);

      const started = performance.now();
      const rewards = await call(acme, "POST", "/v1/rewards", {
        kind: "verifier",
        items: Array.from({ length: 64 }, () => ({ env: "codes", question: "redeem", answer, solution })),
      });
      const ms = performance.now() - started;
      assert.equal(rewards.status, 200, JSON.stringify(rewards.body));
      assert.deepEqual(rewards.body.data[0], { score: 0, passed: false, judgedBy: "verifier:codes" });
      assert.ok(ms < 5_000, `64 rewards took ${ms} ms`);
    });

    it("refuses a family whose schema is out of its bounds with a 400 naming the field and the bound", async () => {
      const refusal = async (parameters: unknown) => {
        const res = await call(acme, "PUT", "/v1/task-families/bounded", {
          tools: [{ name: "redeem", parameters }],
        });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        return res.body.error as { field: string; message: string };
      };
      const lookahead = await refusal({
        type: "object",
        properties: { code: { type: "string", pattern: "^(?!x)" } },
      });
      assert.equal(lookahead.field, "tools.0.parameters.properties.code.pattern");
      assert.match(
        lookahead.message,
        /not in the RE2 syntax Arc runs patterns in \(no backreferences or lookaround\)/,
      );
      const pattern = "a".repeat(SCHEMA_BOUNDS.maxPatternLength + 1);
      const long = await refusal({ type: "object", properties: { code: { type: "string", pattern } } });
      assert.equal(long.field, "tools.0.parameters.properties.code.pattern");
      assert.match(long.message, /is 1001 characters; the bound on a pattern is 1000/);
      let deep: Record<string, unknown> = { type: "string" };
      for (let i = 0; i < SCHEMA_BOUNDS.maxSchemaDepth / 2; i++)
        deep = { type: "object", properties: { x: deep } };
      assert.match((await refusal(deep)).message, /nested deeper than 32 levels, the bound on a schema/);
      const big = await refusal({ type: "object", description: "d".repeat(SCHEMA_BOUNDS.maxSchemaBytes) });
      assert.equal(big.field, "tools.0.parameters");
      assert.match(big.message, /bytes as JSON; the bound on a schema is 65536/);
      assert.equal((await call(acme, "GET", "/v1/task-families")).body.data.length, 4, "none was stored");
    });

    it("keeps one tenant's $id from another: B's $ref never shows A's enum, B's own $id is checked", async () => {
      const id = "https://tenant.example/schemas/lookup";
      const secret = { $id: id, type: "object", properties: { v: { type: "string", enum: ["A-SECRET"] } } };
      await call(acme, "POST", "/v1/traces", { traces: [toolTrace("a-id", "lookup", secret, { v: "x" })] });
      const a = await verdictOf(acme, "a-id");
      assert.deepEqual(a.judgement.primary.evidence.expected, { allowedValues: ["A-SECRET"] });

      await call(globex, "POST", "/v1/traces", {
        traces: [toolTrace("b-ref", "lookup", { $ref: id }, { v: "x" })],
      });
      const ref = await verdictOf(globex, "b-ref");
      assert.doesNotMatch(JSON.stringify(ref), /A-SECRET/);
      const unknown = ref.judgement.verdicts.find((v: Json) => v.detectorId === "tool_schema");
      assert.equal(unknown.status, "unknown");
      assert.match(
        unknown.evidence.message,
        /could not be checked against its schema: can't resolve reference/,
      );

      const own = { $id: id, type: "object", properties: { v: { type: "string", enum: ["B-OK"] } } };
      await call(globex, "POST", "/v1/traces", {
        traces: [toolTrace("b-own", "lookup", own, { v: "A-SECRET" })],
      });
      const mine = await verdictOf(globex, "b-own");
      assert.equal(mine.failureClass, "schema_violation");
      assert.deepEqual(mine.judgement.primary.evidence.expected, { allowedValues: ["B-OK"] });
    });

    it("stores a trace whose tool schema's check is exponential and says why its schema was not checked", async () => {
      const $defs: Record<string, unknown> = { l24: { type: "string" } };
      for (let i = 0; i < 24; i++) {
        $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
      }
      const trace = toolTrace("exponential", "lookup", { $defs, $ref: "#/$defs/l0" }, { v: 1 });
      assert.equal((await call(acme, "POST", "/v1/traces", { traces: [trace] })).status, 200);
      const verdict = await verdictOf(acme, "exponential");
      assert.equal(verdict.status, "unknown");
      const schema = verdict.judgement.verdicts.find((v: Json) => v.detectorId === "tool_schema");
      assert.match(
        schema.evidence.message,
        /could not be checked against its schema: .*took more than \d+ ms/,
      );
    });
  });
}
