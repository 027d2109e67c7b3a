import { type CanaryPolicy, ConflictError, decideCanaryStep } from "@arc/core";
import type { RoutingTable } from "../gateway/routing-table.ts";
import type { Database } from "../store/database.ts";
import { listModelVersions, type ModelVersion } from "../store/model-registry.ts";
import {
  activeDeployment,
  advanceCanary,
  type Deployment,
  finishCanary,
  getDeployment,
  noteCanaryStep,
  startCanary,
} from "./deployment-store.ts";
import { observeDeploymentTraces, stageCounts } from "./live-evidence.ts";
import { getReleaseSettings } from "./release-settings.ts";
import type { VerdictSource } from "./verdict-source.ts";

/** A transition the deployer made: `start_canary`, `advance`, `promote`, `rollback` or `keep_production`, and why. */
export interface DeploymentEvent {
  tenantId: string;
  deploymentId: string;
  candidateId: string;
  controlId: string;
  action: string;
  reason: string;
}

/** What the deployer needs. */
export interface DeployerDeps {
  db: Database;
  verdicts: VerdictSource;
  /** The gateway's routing table in this process, told about every transition so it applies at once. */
  routing?: RoutingTable;
  /**
   * Makes a candidate ready to serve before its canary starts (loads its checkpoint, or its adapter on its upstream);
   * when it throws, the canary does not start and the next tick tries again.
   */
  prepare?: (candidate: ModelVersion) => Promise<void>;
  /** Called with each transition the deployer makes (progress output, tests). */
  onTransition?: (event: DeploymentEvent) => void;
}

const actor = "system:deployer";

/** The decision rule in words, written with each ending so the audit trail says how the canary was decided. */
function canaryRule(policy: CanaryPolicy): string {
  return (
    `truncated SPRT per stage (alpha ${policy.alpha}, beta ${policy.beta}, minimum detectable increase ` +
    `${policy.minDetectableIncrease}): worse and failing more often than the control -> rollback; not worse with ` +
    `${policy.minSamplesPerStage} canary and ${policy.minControlSamples} control samples -> next stage or promote; ` +
    `undecided at ${policy.maxSamplesPerStage} canary samples or ${policy.maxStageMinutes} minutes -> rollback if ` +
    `the canary fails at least ${policy.minDetectableIncrease / 2} more often than the control, else keep production`
  );
}

/**
 * Drives canaries from the state in Postgres, so any process (or the same one after a crash) picks up where the last
 * left off: starts a canary for a model the validator passed (or a person approved, when the tenant requires it),
 * judges the canary's and the control's gateway traces, and advances, promotes, rolls back or keeps production by the
 * truncated sequential test (`decideCanaryStep`).
 */
export class Deployer {
  constructor(private readonly deps: DeployerDeps) {}

  /** One pass over every tenant: start canaries that are due, then step the running ones. */
  async tick(): Promise<void> {
    const tenants = await this.deps.db.query<{ id: string }>("select id from tenants order by id");
    // one tenant's failure (an adapter its upstream refuses) does not hold back the others' deployments
    const failures: unknown[] = [];
    for (const { id } of tenants)
      await this.tickTenant(id).catch((error: Error) =>
        failures.push(new Error(`tenant ${id}: ${error.message}`, { cause: error })),
      );
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1)
      throw new AggregateError(failures, `${failures.length} tenants' deployments failed`);
  }

  /** One pass for one tenant. */
  async tickTenant(tenantId: string): Promise<void> {
    const running = await activeDeployment(this.deps.db, tenantId);
    if (running) {
      await this.step(running);
      return;
    }
    await this.startDue(tenantId);
  }

  /** Makes a candidate ready to serve (its checkpoint or adapter loaded), as before any canary of it starts. */
  async prepare(candidate: ModelVersion): Promise<void> {
    await this.deps.prepare?.(candidate);
  }

  /** Promotes the running canary now (a person's decision; the evidence so far is recorded with it). */
  promote(
    tenantId: string,
    deploymentId: string,
    by: string,
    reason = "promoted by hand",
  ): Promise<Deployment> {
    return this.finishByHand(tenantId, deploymentId, by, reason, "promoted");
  }

  /** Rolls the running canary back now: all traffic returns to the production model. */
  rollback(
    tenantId: string,
    deploymentId: string,
    by: string,
    reason = "rolled back by hand",
  ): Promise<Deployment> {
    return this.finishByHand(tenantId, deploymentId, by, reason, "rolled_back");
  }

  private async finishByHand(
    tenantId: string,
    deploymentId: string,
    by: string,
    reason: string,
    to: "promoted" | "rolled_back",
  ): Promise<Deployment> {
    const dep = await getDeployment(this.deps.db, tenantId, deploymentId);
    const counts = await stageCounts(this.deps.db, dep, dep.stage);
    const done = await finishCanary(this.deps.db, tenantId, deploymentId, {
      to,
      actor: by,
      reason,
      evidence: counts,
    });
    this.changed(done, to === "promoted" ? "promote" : "rollback", reason);
    return done;
  }

  private async startDue(tenantId: string): Promise<void> {
    const settings = await getReleaseSettings(this.deps.db, tenantId);
    if (!settings.canary.autoStart) return;
    const ready = await listModelVersions(
      this.deps.db,
      tenantId,
      settings.gates.requireApproval ? ["approved"] : ["validated", "approved"],
    );
    const next = ready.at(-1);
    if (!next) return;
    const [production] = await listModelVersions(this.deps.db, tenantId, ["promoted"]);
    if (!production) return;
    await this.prepare(next);
    try {
      const dep = await startCanary(this.deps.db, tenantId, {
        candidate: next.id,
        actor,
        policy: settings.canary,
        evidence: { trigger: next.status === "approved" ? "approved" : "validated" },
      });
      this.changed(dep, "start_canary", `canary of ${next.name} at ${dep.share * 100}%`);
    } catch (error) {
      // another decider started a canary, or moved this candidate, first
      if (!(error instanceof ConflictError)) throw error;
    }
  }

  private async step(dep: Deployment): Promise<void> {
    await observeDeploymentTraces(this.deps.db, dep, this.deps.verdicts);
    const counts = await stageCounts(this.deps.db, dep, dep.stage);
    const stageMinutes = (Date.now() - Date.parse(dep.stageStartedAt)) / 60_000;
    const step = decideCanaryStep({ stage: dep.stage, stageMinutes, ...counts }, dep.policy);
    const evidence = { ...step.evidence, deployment: dep.id };
    if (step.action === "hold") {
      await noteCanaryStep(this.deps.db, dep.tenantId, dep.id, {
        action: "hold",
        reason: step.reason,
        evidence,
      });
      return;
    }
    if (step.action === "advance") {
      await advanceCanary(this.deps.db, dep.tenantId, dep.id, {
        fromStage: dep.stage,
        share: step.share,
        actor,
        reason: step.reason,
        evidence,
      });
    } else {
      await finishCanary(this.deps.db, dep.tenantId, dep.id, {
        to: step.action === "promote" ? "promoted" : "rolled_back",
        action: step.action,
        actor,
        reason: step.reason,
        evidence: { ...evidence, rule: canaryRule(dep.policy) },
      });
    }
    this.changed(dep, step.action, step.reason);
  }

  private changed(dep: Deployment, action: string, reason: string): void {
    this.deps.routing?.invalidate(dep.tenantId);
    this.deps.onTransition?.({
      tenantId: dep.tenantId,
      deploymentId: dep.id,
      candidateId: dep.candidateId,
      controlId: dep.controlId,
      action,
      reason,
    });
  }
}
