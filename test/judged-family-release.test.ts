import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import { listDeployments } from "../packages/server/src/deploy/deployment-store.ts";
import { setReleaseSettings } from "../packages/server/src/deploy/release-settings.ts";
import type { RunningServer } from "../packages/server/src/serve/start-server.ts";
import { listModelVersions, registerModelVersion } from "../packages/server/src/store/model-registry.ts";
import { listValidations } from "../packages/server/src/validate/validate-candidate.ts";
import {
  bookingsAgent,
  type JudgedServer,
  judgedTenant,
  startJudgedServer,
  storeReferenceFreeEvalSet,
} from "./judged-family.ts";

/**
 * A family Arc has no verifier for, released on its judge's word: the validator passes a candidate on the items the
 * tenant's judge decides, and the deployer ramps it through a canary whose live traffic the same judge decides, into
 * production. The server trains nothing here (test/judged-family-loop.test.ts trains).
 */
describe("a family with no verifier: a candidate its judge passes is released", () => {
  let world: JudgedServer;
  let server: RunningServer;

  before(async () => {
    world = await startJudgedServer();
    server = world.server;
  });
  after(async () => {
    await world?.close();
  });

  it("releases a candidate the validator passed on the judge's items: through the canary into production", async () => {
    const { db } = server;
    // the shipped arithmetic base in production (it answers sums, never a booking tool); the toolcall base as candidate
    const { tenantId, key, base } = await judgedTenant(server, "booking-team-3", "arith-base");
    // the gate that refuses a worse candidate is test/judged-family-loop.test.ts's; here it lets any judged candidate
    // through, so that the release path runs whatever the shipped judge (a weak one) makes of the few items it
    // decides. The canary asks for 4 decided samples an arm, not the default's 30
    await setReleaseSettings(db, tenantId, {
      gates: { minFunctional: 0, minNdr: 0, minWinRate: 0, judging: "pointwise" },
      canary: { ramp: [0.5, 1], minSamplesPerStage: 4, minControlSamples: 4 },
    });
    await storeReferenceFreeEvalSet(server, tenantId, key);
    const candidate = await registerModelVersion(db, tenantId, {
      name: "toolcall-base",
      artifactDir: resolve("models/toolcall-base"),
      parentId: base.id,
      actor: "test",
    });
    const validation = await waitUntil(
      async () => (await listValidations(db, tenantId, candidate.id))[0],
      "the validator's decision",
      { timeoutMs: 180_000, intervalMs: 300 },
    );
    const { report } = validation;
    assert.equal(validation.decision, "pass", report.reasons.join("; "));
    assert.ok((report.scores.winRate?.n ?? 0) > 0, "the judge decided items");
    assert.equal(report.checks.find((c) => c.gate === "win_rate")?.passed, true);
    // past the gate: the canary needs live traffic, and production moves to the candidate. The agent calls while at
    // most one of its traces waits for judgement, so the test's load stays small whatever else runs beside it
    const converse = bookingsAgent(server, key);
    await waitUntil(
      async () => {
        const [deployment] = await listDeployments(db, tenantId, 1);
        if (deployment && deployment.status !== "canary") return true;
        const [{ n }] = await db.query<{ n: number }>(
          "select count(*)::int as n from detection_queue where tenant_id = $1",
          [tenantId],
        );
        if (deployment && n < 2) await converse();
        return false;
      },
      "the deployer's decision",
      { timeoutMs: 300_000, intervalMs: 200 },
    );
    const [deployment] = await listDeployments(db, tenantId, 1);
    assert.equal(deployment.status, "promoted", JSON.stringify(deployment.lastStep));
    const [production] = await listModelVersions(db, tenantId, ["promoted"]);
    assert.equal(production.id, candidate.id);
    assert.equal(production.parentId, base.id);
  });
});
