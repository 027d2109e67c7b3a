/**
 * Tenants' model versions as LoRA adapters on one shared base upstream (`arc engine serve --enable-lora`, vLLM's
 * adapter routes): each tenant runs a canary between two adapters at once; one is promoted and the other rolled back
 * while traffic flows, and every answer must come from the version its trace names, of its own tenant.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import {
  AdapterPool,
  configForSize,
  EmbeddedInferenceEngine,
  initWeights,
  type RunningEngineServer,
  readHfCheckpoint,
  startEngineServer,
  writeHfCheckpoint,
} from "@arc/engine";
import OpenAI from "openai";
import { writeRandomAdapter } from "../gateway/__fixtures__/random-adapter.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import { histogramTotals } from "../metrics/__fixtures__/metric-values.ts";
import { ServerMetrics } from "../metrics/metrics-registry.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { createApiKey } from "../store/keys.ts";
import { transitionModelVersion } from "../store/model-registry.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";

const messages = [{ role: "user" as const, content: "Which tool answers this?" }];

interface Tenant {
  id: string;
  client: OpenAI;
  /** Model version id by name (`prod`, `cand`). */
  versions: Record<string, string>;
}

describe("adapter versions of two tenants on one upstream", () => {
  let home: string;
  let db: Database;
  let upstream: RunningEngineServer;
  let server: ReleaseTestServer;
  const metrics = new ServerMetrics().modelPool;
  const tenants: Tenant[] = [];
  /** Each version's greedy answer, asked of the upstream directly by its adapter's name. */
  const expected = new Map<string, string>();

  const adapterNames = async () => {
    const listed = (await (await fetch(`${upstream.baseURL}/models`)).json()) as { data: { id: string }[] };
    return listed.data.map((m) => m.id).filter((id) => id !== "base");
  };

  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-adapter-canary-"));
    const base = join(home, "base");
    const config = configForSize("tiny");
    await writeHfCheckpoint(base, config, initWeights(config, 5));
    const adapters = new AdapterPool(
      async () => (await readHfCheckpoint(base)).tensors,
      async (tensors) => {
        const engine = await EmbeddedInferenceEngine.load(base);
        await engine.setWeights(0, { kind: "tensors", tensors });
        return engine;
      },
      2,
    );
    upstream = await startEngineServer(await EmbeddedInferenceEngine.load(base), {
      modelId: "base",
      adapters,
    });
    db = await databasesUnderTest()[0].open();
    server = await startReleaseTestServer(db, {
      registration: { home, upstreams: { shared: { baseUrl: upstream.baseURL } } },
      pool: new ModelPool({ retireDrainMs: 0, metrics }),
      startWorkers: false,
    });
    const second = await createTenant(db, "globex");
    const ids = [
      { id: server.tenantId, key: server.key },
      { id: second.id, key: (await createApiKey(db, { role: "tenant", tenantId: second.id })).key },
    ];
    for (const [t, { id, key }] of ids.entries()) {
      const tenant: Tenant = {
        id,
        client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0, timeout: 15_000 }),
        versions: {},
      };
      for (const [i, name] of ["prod", "cand"].entries()) {
        await writeRandomAdapter(base, join(home, "artifacts", id, name), 100 + 10 * t + i);
        const res = await fetch(`${server.url}/v1/model-versions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({
            name,
            status: name === "prod" ? "promoted" : "candidate",
            upstream: { name: "shared", model: "base", adapter: name },
          }),
        });
        assert.equal(res.status, 201, await res.clone().text());
        const model = (await res.json()) as { id: string; upstream: { model: string } };
        assert.equal(model.upstream.model, model.id, "an adapter is served under its version's id");
        tenant.versions[name] = model.id;
      }
      tenants.push(tenant);
    }
  });

  after(async () => {
    await server?.close();
    await upstream?.close();
    await db?.close();
    await rm(home, { recursive: true, force: true });
  });

  /** Asks the tenant's gateway; returns the version that answered (the trace's) and its answer. */
  const ask = async (tenant: Tenant, i: number) => {
    const { data, response } = await tenant.client.chat.completions
      .create(
        { model: i % 2 ? "cand" : "prod", messages, max_tokens: 12, temperature: 0 },
        { headers: { "x-arc-session": `s-${i}` } },
      )
      .withResponse();
    return {
      version: response.headers.get("x-arc-model-version") ?? "",
      content: data.choices[0].message.content,
    };
  };
  /** `count` requests of each tenant at once; each answer checked against its version's own. */
  const traffic = async (count: number, from: number) => {
    const answers = await Promise.all(
      tenants.flatMap((tenant) =>
        Array.from({ length: count }, async (_, i) => ({ tenant, ...(await ask(tenant, from + i)) })),
      ),
    );
    for (const { tenant, version, content } of answers) {
      assert.ok(
        Object.values(tenant.versions).includes(version),
        `${version} is not one of ${tenant.id}'s versions`,
      );
      assert.equal(content, expected.get(version), `${tenant.id}'s answer comes from ${version}'s adapter`);
    }
    return answers;
  };

  it("loads each canary's adapter, serves both tenants' canaries, and promotes one while rolling back the other", async () => {
    for (const tenant of tenants) {
      await transitionModelVersion(db, tenant.id, tenant.versions.cand, {
        from: ["candidate"],
        to: "validated",
        actor: "test",
        action: "validate",
      });
      await server.release.deployer.tickTenant(tenant.id);
    }
    const candidates = tenants.map((t) => t.versions.cand);
    assert.deepEqual(
      (await adapterNames()).sort(),
      [...candidates].sort(),
      "each canary's adapter is loaded before its canary starts",
    );
    const direct = new OpenAI({
      baseURL: upstream.baseURL,
      apiKey: "unused",
      maxRetries: 0,
      timeout: 15_000,
    });
    for (const tenant of tenants)
      for (const [name, id] of Object.entries(tenant.versions)) {
        // the production adapters are loaded here first, so the gateway finds them already loaded
        if (!(await adapterNames()).includes(id)) {
          const res = await fetch(`${upstream.baseURL}/load_lora_adapter`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ lora_name: id, lora_path: join(home, "artifacts", tenant.id, name) }),
          });
          assert.equal(res.status, 200, await res.text());
        }
        const answer = await direct.chat.completions.create({
          model: id,
          messages,
          max_tokens: 12,
          temperature: 0,
        });
        expected.set(id, answer.choices[0].message.content ?? "");
      }
    assert.equal(new Set(expected.values()).size, 4, "the four adapters answer differently");

    await traffic(12, 0);
    const deployments = await Promise.all(
      tenants.map(async (t) => {
        const rows = await db.query<{ id: string }>(
          "select id from deployments where tenant_id = $1 and status = 'canary'",
          [t.id],
        );
        return rows[0].id;
      }),
    );
    const during = traffic(16, 100);
    await server.release.deployer.promote(tenants[0].id, deployments[0], "user:test");
    await server.release.deployer.rollback(tenants[1].id, deployments[1], "user:test");
    await during;
    const settled = await traffic(8, 200);
    for (const { tenant, version } of settled)
      assert.equal(
        version,
        tenant === tenants[0] ? tenants[0].versions.cand : tenants[1].versions.prod,
        "after the decisions each tenant is served by the version kept",
      );
    await waitUntil(
      async () =>
        (await adapterNames()).sort().join() ===
        [tenants[0].versions.cand, tenants[1].versions.prod].sort().join(),
      "the promoted tenant's old adapter and the rolled-back candidate unloaded from the upstream",
    );
    // each of the four loaded by the gateway; a call that chose a version just before the decision may load it again
    assert.ok(
      (await histogramTotals(metrics.adapterLoads)).count >= 4,
      "the gateway loaded every adapter it served",
    );
  });
});
