import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import { setReleaseSettings } from "../packages/server/src/deploy/release-settings.ts";
import { pendingDetections } from "../packages/server/src/failures/detection-queue.ts";
import { listRuns } from "../packages/server/src/orchestrator/run-store.ts";
import type { RunningServer } from "../packages/server/src/serve/start-server.ts";
import { registerModelVersion } from "../packages/server/src/store/model-registry.ts";
import { listValidations } from "../packages/server/src/validate/validate-candidate.ts";
import {
  bookingsAgent,
  decidedStatus,
  type JudgedServer,
  judgedTenant,
  startJudgedServer,
  storeReferenceFreeEvalSet,
} from "./judged-family.ts";

/** The orchestrator's overrides of recipes/corrections-dpo.yaml: a shorter run than a production one. */
const TRAINING = [
  "sftWarmUp.steps=10",
  "trainer.steps=4",
  "trainer.promptsPerStep=4",
  "trainer.checkpointEvery=4",
];

/**
 * A family Arc has no verifier for, from production traffic to a validation decision. The tenant's agent calls the
 * shipped toolcall base through the gateway; the tenant's judge (the shipped judge, served as `arc engine serve`
 * serves it, on an upstream the operator allowlisted) flags its failures; the orchestrator trains the family with
 * that judge as the reward; the validator judges the candidate's answers on reference-free items by the win-rate
 * gate, and rejects one the judge finds worse. test/judged-family-release.test.ts releases one it prefers.
 */
describe("a family with no verifier: the tenant's judge detects, rewards and validates", () => {
  let world: JudgedServer;
  let server: RunningServer;

  before(async () => {
    world = await startJudgedServer({
      enabled: true,
      minNewFailures: 12,
      intervalMs: 300,
      pollMs: 300,
      datasetSize: 24,
      recipe: "recipes/corrections-dpo.yaml",
      overrides: TRAINING,
    });
    server = world.server;
  });
  after(async () => {
    await world?.close();
  });

  it("trains on what the judge flags, with the judge's reward, and the validator decides on it by the win-rate gate", async () => {
    const { db } = server;
    const { tenantId, key } = await judgedTenant(server, "booking-team");
    await setReleaseSettings(db, tenantId, {
      gates: { minFunctional: 0, minNdr: 0, judging: "pointwise" },
      canary: { autoStart: false },
    });
    const converse = bookingsAgent(server, key);
    // the agent calls while fewer than 8 of its traces wait for the judge (which is slower than the agent), so it sends
    // about as many calls as the orchestrator needs, not as many as fit before the judge catches up
    await waitUntil(
      async () => {
        if ((await pendingDetections(db, tenantId)) < 8) await converse();
        return (await listRuns(db, tenantId)).length > 0;
      },
      "the orchestrator to start a run on the judge's failures",
      { timeoutMs: 180_000, intervalMs: 50 },
    );
    const run = await waitUntil(
      async () => {
        const [latest] = await listRuns(db, tenantId);
        return ["succeeded", "failed", "cancelled"].includes(latest.status) ? latest : undefined;
      },
      "the run to end",
      { timeoutMs: 300_000, intervalMs: 500 },
    );
    assert.equal(run.status, "succeeded", run.error ?? "");
    assert.ok(run.overrides.includes("reward.kind=judge"), run.overrides.join(" "));
    assert.ok(run.overrides.includes("reward.judge.model=toolcall-judge"), run.overrides.join(" "));
    assert.ok((run.metrics.judgeCalls as number) > 0, JSON.stringify(run.metrics));
    assert.ok(run.candidateId);

    const validation = await waitUntil(
      async () => (await listValidations(db, tenantId, run.candidateId as string))[0],
      "the validator's decision",
      { timeoutMs: 180_000, intervalMs: 300 },
    );
    const { report } = validation;
    const judged = report.slices.filter((s) => s.kind === "pattern");
    assert.ok(judged.length > 0, "the pattern slices were judged");
    for (const slice of judged) assert.deepEqual(Object.keys(slice.judgedBy), ["judge:toolcall-judge"]);
    console.log(
      `the judged family's candidate: ${validation.decision}: ${report.reasons.join("; ") || "every gate passed"}`,
    );
    const winRateGate = report.checks.find((c) => c.gate === "win_rate");
    assert.ok(winRateGate, report.reasons.join("; "));
    assert.equal(validation.decision, winRateGate.passed ? "pass" : "fail", report.reasons.join("; "));
    assert.equal(
      await decidedStatus(server, tenantId, run.candidateId),
      validation.decision === "pass" ? "validated" : "rejected",
    );
  });

  it("rejects a candidate that is worse under the judge, with the judged items in the validation report", async () => {
    const { db } = server;
    const { tenantId, key } = await judgedTenant(server, "booking-team-2");
    await setReleaseSettings(db, tenantId, { gates: { minFunctional: 0, minNdr: 0, judging: "pointwise" } });
    const requests = await storeReferenceFreeEvalSet(server, tenantId, key);
    // the shipped arithmetic base: it answers sums, never a booking tool
    const worse = await registerModelVersion(db, tenantId, {
      name: "arith-base",
      artifactDir: resolve("models/arith-base"),
      actor: "test",
    });
    const validation = await waitUntil(
      async () => (await listValidations(db, tenantId, worse.id))[0],
      "the validator's decision",
      { timeoutMs: 180_000, intervalMs: 300 },
    );
    const { report } = validation;
    assert.equal(validation.decision, "fail", report.reasons.join("; "));
    const winRate = report.scores.winRate;
    assert.ok(winRate && winRate.n > 0 && winRate.losses > winRate.wins, JSON.stringify(winRate));
    assert.equal(report.checks.find((c) => c.gate === "win_rate")?.passed, false);
    const slice = report.slices.find((s) => s.slice === "pat-bookings");
    assert.deepEqual(slice?.judgedBy, { "judge:toolcall-judge": winRate.n });
    assert.equal((slice?.n ?? 0) + (report.unjudged ?? 0), requests.length);
    assert.ok((slice?.candidateFailureRate ?? 0) > (slice?.baselineFailureRate ?? 1), JSON.stringify(slice));
    assert.equal(await decidedStatus(server, tenantId, worse.id), "rejected");
  });
});
