import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import OpenAI from "openai";
import type { FaultInjection } from "../gateway/fault-injecting-engine.ts";
import type { ModelPool } from "../gateway/model-pool.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import { listAudit } from "../store/audit-log.ts";
import type { Database } from "../store/database.ts";
import { getModelVersion, registerModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { StoredEvalSets } from "../validate/eval-set-source.ts";
import { validateCandidate } from "../validate/validate-candidate.ts";
import { toolcallEvalFixture } from "./__fixtures__/toolcall-eval-fixture.ts";
import { toolcallModelPool, toolcallVerdicts } from "./__fixtures__/toolcall-models.ts";
import { activeDeployment, listDeployments } from "./deployment-store.ts";
import { setReleaseSettings } from "./release-settings.ts";

const fx = toolcallEvalFixture("fixture");
const traffic = [...fx.generalQuestions, ...fx.patternQuestions];

/** One request of the simulated agent; returns the status and the model version that answered. */
async function ask(
  client: OpenAI,
  i: number,
): Promise<{ status: number; version: string | null; content: string }> {
  const { data, response } = await client.chat.completions
    .create(
      { model: "arc", messages: [{ role: "user", content: traffic[i % traffic.length] }] },
      { headers: { "x-arc-session": `conv-${i}`, "x-arc-env": "toolcall" } },
    )
    .withResponse();
  return {
    status: response.status,
    version: response.headers.get("x-arc-model-version"),
    content: data.choices[0].message.content ?? "",
  };
}

/**
 * Registers the production model and a candidate, validates the candidate offline (no fault injection there), and
 * only then starts the server's workers: a validator tick running alongside would judge the candidate too (through
 * the fault-injecting pool) and race this validation for its status.
 */
async function validatedCandidate(server: ReleaseTestServer, db: Database, name: string): Promise<string> {
  const tenantId = server.tenantId;
  const evalSets = new StoredEvalSets(db);
  await evalSets.put(tenantId, toolcallEvalFixture(tenantId).evalSet);
  await registerModelVersion(db, tenantId, {
    name: "production",
    status: "promoted",
    artifactDir: "/models/wrong-pattern",
    actor: "test",
  });
  const c = await registerModelVersion(db, tenantId, { name, artifactDir: "/models/right", actor: "test" });
  const offline = await validateCandidate(
    { db, pool: toolcallModelPool(fx), evalSets },
    tenantId,
    c.id,
    "test",
  );
  assert.equal(offline.validation.decision, "pass", offline.validation.report.reasons.join("; "));
  server.release.start();
  return c.id;
}

for (const dbUnderTest of databasesUnderTest()) {
  describe(`deployer (${dbUnderTest.name})`, { skip: dbUnderTest.skip }, () => {
    let db: Database;
    before(async () => {
      db = await dbUnderTest.open();
    });
    after(async () => {
      await db.close();
    });

    it("rolls back a candidate that passed offline but fails live, answers every request, and sends traffic back to the production model", async () => {
      const faults: Record<string, FaultInjection> = {};
      const pool: ModelPool = toolcallModelPool(fx, { faultInjection: faults });
      const server: ReleaseTestServer = await startReleaseTestServer(db, {
        pool,
        verdicts: toolcallVerdicts(fx),
        workers: true,
        startWorkers: false,
        validatorIntervalMs: 60_000,
        deployerIntervalMs: 30,
      });
      faults[`${server.tenantId}/faulty`] = { mode: "wrong_output", rate: 1, seed: 1 };
      try {
        const candidateId = await validatedCandidate(server, db, "faulty");
        const dep = await waitUntil(() => activeDeployment(db, server.tenantId), "the canary to start", {
          timeoutMs: 20_000,
        });
        assert.equal(dep.share, 0.1);
        const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 });
        const answers: Awaited<ReturnType<typeof ask>>[] = [];
        let i = 0;
        while ((await getModelVersion(db, server.tenantId, candidateId)).status === "canary" && i < 2_000) {
          answers.push(...(await Promise.all(Array.from({ length: 8 }, () => ask(client, i++)))));
        }
        assert.equal((await getModelVersion(db, server.tenantId, candidateId)).status, "rolled_back");
        assert.ok(
          answers.every((a) => a.status === 200),
          "a request failed during the canary",
        );
        assert.ok(
          answers.some((a) => a.version === candidateId),
          "the canary served nothing",
        );
        const production = await getModelVersion(db, server.tenantId, "production");
        assert.equal(production.status, "promoted");
        const afterwards = await Promise.all(Array.from({ length: 40 }, () => ask(client, i++)));
        assert.ok(afterwards.every((a) => a.status === 200 && a.version === production.id));

        const [done] = await listDeployments(db, server.tenantId);
        assert.equal(done.status, "rolled_back");
        const audit = await listAudit(db, server.tenantId, { kind: "deployment", id: done.id });
        const rollback = audit.find((a) => a.action === "rollback");
        assert.equal(rollback?.actor, "system:deployer");
        assert.match(String(rollback?.evidence.reason), /canary significantly worse/);
        const evidence = rollback?.evidence as {
          canary: { n: number; failures: number };
          control: { n: number; failures: number };
        };
        assert.equal(
          evidence.canary.failures,
          evidence.canary.n,
          "fault injection fails every canary answer",
        );
        assert.ok(evidence.control.failures < evidence.control.n / 2);
      } finally {
        await server.close();
      }
    });

    it("ramps a candidate that is not worse through 10% and 50% and promotes it, retiring the old model", async () => {
      const server = await startReleaseTestServer(db, {
        pool: toolcallModelPool(fx),
        verdicts: toolcallVerdicts(fx),
        workers: true,
        startWorkers: false,
        validatorIntervalMs: 60_000,
        deployerIntervalMs: 30,
      });
      try {
        await setReleaseSettings(db, server.tenantId, {
          canary: { minSamplesPerStage: 10, minControlSamples: 10, minDetectableIncrease: 0.3 },
        });
        const candidateId = await validatedCandidate(server, db, "good");
        const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 });
        let i = 0;
        while ((await getModelVersion(db, server.tenantId, candidateId)).status !== "promoted" && i < 3_000) {
          await Promise.all(Array.from({ length: 8 }, () => ask(client, i++)));
        }
        assert.equal((await getModelVersion(db, server.tenantId, candidateId)).status, "promoted");
        assert.equal((await getModelVersion(db, server.tenantId, "production")).status, "retired");
        const [dep] = await listDeployments(db, server.tenantId);
        const actions = (await listAudit(db, server.tenantId, { kind: "deployment", id: dep.id })).map(
          (a) => `${a.action}:${a.toState}`,
        );
        assert.deepEqual(actions, ["start_canary:canary", "advance:canary@1", "promote:promoted"]);
        const after = await ask(client, i);
        assert.equal(after.version, candidateId);
      } finally {
        await server.close();
      }
    });

    it("lets a person roll back a running canary through the API, recorded with their key as actor", async () => {
      const server = await startReleaseTestServer(db, {
        pool: toolcallModelPool(fx),
        verdicts: toolcallVerdicts(fx),
      });
      try {
        await setReleaseSettings(db, server.tenantId, { canary: { autoStart: false } });
        const candidateId = await validatedCandidate(server, db, "manual");
        const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" };
        const started = await fetch(`${server.url}/v1/deployments`, {
          method: "POST",
          headers,
          body: JSON.stringify({ candidate: "manual" }),
        });
        assert.equal(started.status, 201);
        const dep = (await started.json()) as { id: string };
        const res = await fetch(`${server.url}/v1/deployments/${dep.id}/rollback`, {
          method: "POST",
          headers,
          body: JSON.stringify({ reason: "on-call said so" }),
        });
        assert.equal(res.status, 200);
        assert.equal((await getModelVersion(db, server.tenantId, candidateId)).status, "rolled_back");
        const again = await fetch(`${server.url}/v1/deployments/${dep.id}/promote`, {
          method: "POST",
          headers,
        });
        assert.equal(again.status, 400);
        assert.match(
          ((await again.json()) as { error: { message: string } }).error.message,
          /is rolled_back; only a running canary/,
        );
        const audit = await listAudit(db, server.tenantId, { kind: "deployment", id: dep.id });
        assert.match(audit.at(-1)?.actor ?? "", /^user:/);
        assert.equal(audit.at(-1)?.evidence.reason, "on-call said so");
      } finally {
        await server.close();
      }
    });
  });
}
