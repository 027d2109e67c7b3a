/**
 * `arc serve` as `startServer` composes it (every route; the gateway on an answer-book model, and for a third tenant
 * on a tiny real model that compiles the grammars it is sent; the failure pipeline; runs) on a fresh database, run as
 * a child process by the hostile-input fuzz suite so that a request that wedges, crashes or pollutes the server
 * cannot take the test runner with it. Usage: `node --import tsx hostile-input-server.ts <pglite|postgres>`; over
 * the IPC channel it sends `{ready}` once listening, then answers `{id, op}` messages. Background loops stay off
 * (validator, deployer, detection, orchestrator): the suite runs detection passes itself, and nothing it queues is
 * ever trained.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { configForSize, EmbeddedInferenceEngine, initWeights, writeHfCheckpoint } from "@arc/engine";
import { loadServerConfig } from "../../config/server-config.ts";
import { AnswerBookEngine } from "../../deploy/__fixtures__/answer-book-engine.ts";
import { startCanary } from "../../deploy/deployment-store.ts";
import { DetectionWorker } from "../../failures/detection-worker.ts";
import { ModelPool } from "../../gateway/model-pool.ts";
import { createApiKey } from "../../store/keys.ts";
import { registerModelVersion, transitionModelVersion } from "../../store/model-registry.ts";
import { openPostgresDatabase } from "../../store/postgres-database.ts";
import { createTenant, findTenant } from "../../store/tenants.ts";
import { insertTraces } from "../../store/trace-store.ts";
import { startServer } from "../start-server.ts";

/** What the child tells the suite once it listens. */
export interface HostileServerReady {
  url: string;
  adminKey: string;
  /** The tenant the suite fuzzes (the `default` tenant of the first start). */
  tenant: { id: string; name: string; key: string };
  bystander: { id: string; name: string; key: string };
  /** A tenant whose production model is a real (tiny, untrained) embedded model: it compiles the grammars it is sent. */
  engineTenant: { id: string; name: string; key: string };
  /** Ids the fixture made, for path parameters that exist. */
  fixture: {
    traceId: string;
    stepId: string;
    production: string;
    candidate: string;
    deployment: string;
    run: string;
    /** A checkpoint folder (its config.json) under the tenant's artifacts, as a registration names it. */
    checkpoint: string;
  };
  /** Every route the app registered, as Hono lists them. */
  routes: { method: string; path: string }[];
  tables: string[];
  /** Server paths no error may show: its home and the repository it runs from. */
  paths: string[];
  /** Its PostgreSQL schema, for the suite to drop if it has to kill the server. */
  schema?: string;
}

/** Ids of the fuzzed tenant's things, as they stand now (of each kind, the 20 most recent). */
export interface HostileServerIds {
  models: { id: string; status: string }[];
  deployments: string[];
  runs: string[];
  traces: string[];
  datasets: string[];
  patterns: string[];
  schedules: string[];
  families: string[];
  /** Keys the suite made (the fixture's own keys are never listed, so no case revokes them). */
  keys: string[];
}

/** What `{op: "state"}` answers: rows per table, and what was added to the built-in prototypes (then removed). */
export interface HostileServerState {
  counts: Record<string, number>;
  polluted: string[];
}

const database = process.argv[2];
const send = (message: unknown) => process.send?.(message);

const prototypes = { Object: Object.prototype, Array: Array.prototype, String: String.prototype };
const baseline = new Map(Object.entries(prototypes).map(([n, p]) => [n, new Set(Reflect.ownKeys(p))]));

/** Names added to the built-in prototypes since start; removes them so the server can go on being probed. */
function pollution(): string[] {
  const found: string[] = [];
  for (const [name, proto] of Object.entries(prototypes)) {
    for (const key of Reflect.ownKeys(proto)) {
      if (baseline.get(name)?.has(key)) continue;
      found.push(`${name}.prototype.${String(key)}`);
      delete (proto as unknown as Record<PropertyKey, unknown>)[key];
    }
  }
  if (found.length === 0 && ({} as Record<string, unknown>).polluted !== undefined)
    found.push("({}).polluted");
  return found;
}

/** A schema of its own on the PostgreSQL server (dropped on close), or the embedded PGlite under the home. */
async function databaseUrl(): Promise<{ url?: string; schema?: string; drop(): Promise<void> }> {
  if (database === "pglite") return { drop: async () => {} };
  const server = process.env.ARC_TEST_DATABASE_URL;
  if (database !== "postgres" || !server) throw new Error(`no database "${database}" to serve on`);
  const schema = `arc_fuzz_${randomBytes(6).toString("hex")}`;
  const admin = await openPostgresDatabase(server, { maxConnections: 1 });
  await admin.query(`create schema ${schema}`);
  const url = new URL(server);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return {
    url: url.toString(),
    schema,
    async drop() {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.close();
    },
  };
}

const home = mkdtempSync(join(tmpdir(), "arc-hostile-"));
const store = await databaseUrl();
/** A small model with random weights, so that a grammar a request asks for is compiled and followed for real. */
const tinyModel = join(home, "models", "tiny");
const tinyConfig = configForSize("tiny");
await writeHfCheckpoint(tinyModel, tinyConfig, initWeights(tinyConfig, 1));
const server = await startServer(
  loadServerConfig({}, { home, port: 0, databaseUrl: store.url, maxBodyBytes: 1024 * 1024 }),
  {
    release: {
      workers: false,
      pool: new ModelPool({
        loadEngine: async (dir) =>
          dir === tinyModel
            ? EmbeddedInferenceEngine.load(dir)
            : new AnswerBookEngine(new Map(), "It shipped on Monday."),
      }),
      traceRecorder: { flushMs: 10, retryDelayMs: 1 },
    },
    failures: { env: {}, config: { enabled: false } },
    orchestrator: { intervalMs: 2_000_000_000 },
  },
);
const { db } = server;
const detection = new DetectionWorker(db, { config: { quietMs: 0 } });

const credentials = server.credentials;
if (!credentials) throw new Error("the first start made no credentials");
const made = await findTenant(db, credentials.tenant);
if (!made) throw new Error(`no tenant "${credentials.tenant}"`);
const tenant = { id: made.id, name: made.name, key: credentials.tenantKey };
const other = await createTenant(db, "globex");
const bystander = {
  id: other.id,
  name: other.name,
  key: (await createApiKey(db, { role: "tenant", tenantId: other.id })).key,
};
const third = await createTenant(db, "initech");
const engineTenant = {
  id: third.id,
  name: third.name,
  key: (await createApiKey(db, { role: "tenant", tenantId: third.id })).key,
};
await registerModelVersion(db, third.id, {
  name: "tiny",
  status: "promoted",
  artifactDir: tinyModel,
  actor: "fixture",
});
/** The keys the fixture made: no case may revoke them. */
const ownKeys = (await db.query<{ id: string }>("select id from api_keys")).map((r) => r.id);
const artifacts = (name: string) => join(home, "artifacts", tenant.id, name);
mkdirSync(artifacts("checkpoint"), { recursive: true });
writeFileSync(join(artifacts("checkpoint"), "config.json"), "{}\n");
const production = await registerModelVersion(db, tenant.id, {
  name: "prod",
  status: "promoted",
  artifactDir: artifacts("prod"),
  actor: "fixture",
});
const validated = await registerModelVersion(db, tenant.id, {
  name: "validated",
  artifactDir: artifacts("validated"),
  actor: "fixture",
});
await transitionModelVersion(db, tenant.id, validated.id, {
  from: ["candidate"],
  to: "validated",
  actor: "fixture",
  action: "validate",
});
const deployment = await startCanary(db, tenant.id, { candidate: validated.id, actor: "fixture" });
const candidate = await registerModelVersion(db, tenant.id, {
  name: "cand",
  artifactDir: artifacts("cand"),
  actor: "fixture",
});
await insertTraces(db, tenant.id, [
  {
    id: "fixture-trace",
    name: "lookup-order",
    startedAt: "2026-05-01T10:00:00Z",
    status: "ok",
    steps: [{ id: "fixture-step", kind: "custom", startedAt: "2026-05-01T10:00:00Z" }],
  },
]);
const queued = await fetch(`${server.url}/v1/runs`, {
  method: "POST",
  headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
  body: JSON.stringify({ recipe: "toolcall-dpo", overrides: [] }),
});
if (queued.status !== 201) throw new Error(`could not queue a run: ${queued.status} ${await queued.text()}`);
const run = (await queued.json()) as { id: string };
const tables = (
  await db.query<{ table_name: string }>(
    "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1",
  )
).map((r) => r.table_name);
const countSql = `select ${tables.map((t) => `(select count(*)::int from ${t}) as "${t}"`).join(", ")}`;
/** The 20 most recent ids of one kind of the fuzzed tenant's things, as a JSON array named `name`. */
const recent = (name: string, table: string, id = "id", order = "created_at", where = "") =>
  `(select coalesce(json_agg(id), '[]'::json) from (select ${id} as id from ${table} where tenant_id = $1 ${where}
     order by ${order} desc limit 20) recent) as "${name}"`;
const idsSql = `select
  (select coalesce(json_agg(m), '[]'::json) from (select id, status from model_versions where tenant_id = $1
     order by created_at desc limit 50) m) as models,
  ${recent("deployments", "deployments")}, ${recent("runs", "runs")},
  ${recent("traces", "traces", "id", "started_at")}, ${recent("datasets", "datasets")},
  ${recent("patterns", "patterns", "id", "last_seen")},
  ${recent("schedules", "dataset_schedules", "name", "name")}, ${recent("families", "task_families", "env")},
  ${recent("keys", "api_keys", "id", "created_at", `and id <> all('{${ownKeys.join(",")}}')`)}`;

const ops: Record<string, (args: { sql?: string; params?: unknown[] }) => Promise<unknown>> = {
  async state(): Promise<HostileServerState> {
    const [counts] = await db.query<Record<string, number>>(countSql);
    return { counts, polluted: pollution() };
  },
  async ids(): Promise<HostileServerIds> {
    const [ids] = await db.query(idsSql, [tenant.id]);
    return ids as unknown as HostileServerIds;
  },
  sql: ({ sql, params }) => db.query(String(sql), params),
  detect: () => detection.runOnce(),
  /** Detection passes until none judges anything (at most 100): every queued trace is judged. */
  async detectAll() {
    let passes = 0;
    while (passes < 100 && (await detection.runOnce()).judged > 0) passes++;
    return { passes };
  },
  async flush() {
    await server.release.gateway.flush();
    const { stored, lost, dropped } = server.release.gateway.recorder;
    return { stored, lost, dropped };
  },
  async close() {
    await server.close();
    await store.drop();
    rmSync(home, { recursive: true, force: true });
    setImmediate(() => process.exit(0));
  },
};

process.on("message", (message: { id: number; op: string; sql?: string; params?: unknown[] }) => {
  const op = ops[message.op];
  if (!op) {
    send({ id: message.id, ok: false, error: `no op "${message.op}"` });
    return;
  }
  op(message).then(
    (result) => send({ id: message.id, ok: true, result }),
    (error: Error) => send({ id: message.id, ok: false, error: String(error?.stack ?? error) }),
  );
});
process.on("disconnect", () => process.exit(0));

send({
  ready: {
    url: server.url,
    adminKey: credentials.adminKey,
    tenant,
    bystander,
    engineTenant,
    fixture: {
      traceId: "fixture-trace",
      stepId: "fixture-step",
      production: production.id,
      candidate: candidate.id,
      deployment: deployment.id,
      run: run.id,
      checkpoint: "checkpoint",
    },
    routes: server.app.routes.map((r) => ({ method: r.method, path: r.path })),
    tables,
    paths: [home, fileURLToPath(new URL("../../../../../", import.meta.url)).replace(/\/$/, "")],
    schema: store.schema,
  } satisfies HostileServerReady,
});
