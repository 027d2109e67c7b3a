import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, mock } from "node:test";
import { waitUntil } from "@arc/core/testing";
import { main } from "../cli/main.ts";
import { loadServerConfig } from "../config/server-config.ts";
import { SUPPORT_FAMILY_SPEC } from "../families/__fixtures__/support-family.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import { registerModelVersion } from "../store/model-registry.ts";

const { env: _env, ...SPEC } = SUPPORT_FAMILY_SPEC;

describe("a tenant trains its own task family from the CLI and the API", () => {
  let server: RunningServer;
  let key: string;

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function arc(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const log = mock.method(console, "log", () => {});
    const error = mock.method(console, "error", () => {});
    try {
      const code = await main([...argv, "--url", server.url, "--key", key]);
      const text = (m: typeof log) => m.mock.calls.map((c) => c.arguments.join(" ")).join("\n");
      return { code, out: text(log), err: text(error) };
    } finally {
      log.mock.restore();
      error.mock.restore();
    }
  }

  before(async () => {
    const home = await mkdtemp(join(tmpdir(), "arc-family-run-"));
    server = await startServer(loadServerConfig({}, { home, port: 0 }), {
      orchestrator: { intervalMs: 100, pollMs: 100, datasetSize: 16 },
    });
    key = server.credentials?.tenantKey as string;
    const [tenant] = await server.db.query<{ id: string }>("select id from tenants");
    await registerModelVersion(server.db, tenant.id, {
      name: "base",
      status: "promoted",
      artifactDir: join(home, "base"),
      actor: "test",
    });
  });
  after(() => server?.close());

  it("queues `arc runs start data.env=<its family>`, and the run gets past the override check to its data", async () => {
    assert.equal((await api("PUT", "/task-families/support", SPEC)).status, 201);
    const started = await arc([
      "runs",
      "start",
      "toolcall-dpo",
      "data.env=support",
      "trainer.steps=2",
      "--json",
    ]);
    assert.equal(started.code, 0, started.err);
    const run = JSON.parse(started.out) as { id: string; overrides: string[] };
    assert.ok(run.overrides.includes("data.env=support"));
    // no support failure is stored yet: the run fails for that reason, not for its overrides
    const ended = await waitUntil(
      async () => {
        const { run: shown } = (await (await api("GET", `/runs/${run.id}`)).json()) as {
          run: { status: string; error: string | null };
        };
        return shown.status === "failed" || shown.status === "succeeded" ? shown : null;
      },
      "the run to end",
      { timeoutMs: 20_000 },
    );
    assert.equal(ended.status, "failed");
    assert.match(String(ended.error), /no verifiable support failure to train on/);
    assert.doesNotMatch(String(ended.error), /not a key a run request may override/);
  });

  it("refuses a family the tenant never registered, naming it and the families it may train", async () => {
    const res = await api("POST", "/runs", { recipe: "toolcall-dpo", overrides: ["data.env=billing"] });
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: { message: string } };
    assert.match(error.message, /data\.env=billing names no task family of yours; register it first/);
    assert.match(error.message, /PUT \/v1\/task-families\/<env>/);
    assert.doesNotMatch(error.message, /arc families add/);
    assert.match(error.message, /support/);
    const cli = await arc(["runs", "start", "data.env=billing"]);
    assert.equal(cli.code, 2);
    assert.match(cli.err, /data\.env=billing names no task family of yours/);
  });

  it("still refuses a path the trainer would open, naming the key", async () => {
    const res = await api("POST", "/runs", {
      recipe: "toolcall-dpo",
      overrides: ["data.prompts=/etc/passwd"],
    });
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: { message: string } };
    assert.match(error.message, /"data\.prompts" is not a key a run request may override/);
    assert.match(error.message, /and data\.env \(a task family of yours to train\)$/);
  });
});
