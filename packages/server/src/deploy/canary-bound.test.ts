import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { listAudit } from "../store/audit-log.ts";
import type { Database } from "../store/database.ts";
import { getModelVersion, registerModelVersion } from "../store/model-registry.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { Deployer } from "./deployer.ts";
import { getDeployment, startCanary } from "./deployment-store.ts";

/** Stores `n` more live judgements of one arm at stage 0, as the deployer's observations of gateway traces. */
async function observe(
  db: Database,
  tenantId: string,
  deploymentId: string,
  arm: string,
  n: number,
  failed: number,
) {
  const [{ seen }] = await db.query<{ seen: number }>(
    "select count(*)::int as seen from deployment_observations where deployment_id = $1 and arm = $2",
    [deploymentId, arm],
  );
  for (let i = seen; i < seen + n; i++)
    await db.query(
      `insert into deployment_observations (tenant_id, deployment_id, trace_id, arm, stage, status)
       values ($1, $2, $3, $4, 0, $5)`,
      [tenantId, deploymentId, `${arm}-${i}`, arm, i - seen < failed ? "failed" : "passed"],
    );
}

for (const dbUnderTest of databasesUnderTest()) {
  describe(`a canary at its bound (${dbUnderTest.name})`, { skip: dbUnderTest.skip }, () => {
    let db: Database;
    before(async () => {
      db = await dbUnderTest.open();
    });
    after(async () => {
      await db.close();
    });

    it("keeps production when both arms fail every request, and writes the rule to the audit trail", async () => {
      const tenant = await createTenant(db, "bound");
      await registerModelVersion(db, tenant.id, {
        name: "production",
        status: "promoted",
        artifactDir: "/m/p",
        actor: "t",
      });
      const candidate = await registerModelVersion(db, tenant.id, {
        name: "candidate",
        status: "validated",
        artifactDir: "/m/c",
        actor: "t",
      });
      const dep = await startCanary(db, tenant.id, {
        candidate: candidate.id,
        actor: "t",
        policy: { maxSamplesPerStage: 40, minSamplesPerStage: 30 },
      });
      await observe(db, tenant.id, dep.id, "control", 60, 60);
      await observe(db, tenant.id, dep.id, "canary", 39, 39);
      const deployer = new Deployer({
        db,
        verdicts: { judge: async (_t, traces) => traces.map(() => null) },
      });
      await deployer.tickTenant(tenant.id);
      assert.equal((await getDeployment(db, tenant.id, dep.id)).status, "canary", "ended before its bound");

      await observe(db, tenant.id, dep.id, "canary", 1, 1);
      await deployer.tickTenant(tenant.id);
      const ended = await getDeployment(db, tenant.id, dep.id);
      assert.equal(ended.status, "rolled_back");
      assert.equal(ended.share, 0);
      assert.equal(ended.lastStep?.action, "keep_production");
      assert.equal((await getModelVersion(db, tenant.id, candidate.id)).status, "rolled_back");
      assert.equal((await getModelVersion(db, tenant.id, "production")).status, "promoted");
      const audit = await listAudit(db, tenant.id, { kind: "deployment", id: dep.id });
      const end = audit.find((a) => a.action === "keep_production");
      assert.ok(end, `no keep_production in the audit: ${audit.map((a) => a.action).join(", ")}`);
      assert.match(String(end.evidence.reason), /bound of 40 canary samples without a difference shown/);
      assert.match(String(end.evidence.rule), /undecided at 40 canary samples or 1440 minutes/);
      assert.equal(end.evidence.truncated, "samples");
    });
  });
}
