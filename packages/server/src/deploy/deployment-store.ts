import { randomBytes } from "node:crypto";
import {
  CanaryPolicy,
  type CanaryPolicyInput,
  ConflictError,
  InvalidInputError,
  NotFoundError,
} from "@arc/core";
import { appendAudit } from "../store/audit-log.ts";
import type { Database, Queryable } from "../store/database.ts";
import { getModelVersion, listModelVersions, transitionModelVersion } from "../store/model-registry.ts";
import { conflictOnDuplicate } from "../store/unique-violation.ts";

/** A deployment: the gateway's routing state for one candidate against the production model. */
export interface Deployment {
  id: string;
  tenantId: string;
  candidateId: string;
  controlId: string;
  status: "canary" | "promoted" | "rolled_back";
  /** Index into `policy.ramp`. */
  stage: number;
  /** Canary's share of the tenant's traffic now. */
  share: number;
  stageStartedAt: string;
  policy: CanaryPolicy;
  /** The deployer's last decision (action, reason, evidence), for `arc deploy status`. */
  lastStep: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

function fromRow(r: Record<string, unknown>): Deployment {
  return {
    id: r.id as string,
    tenantId: r.tenant_id as string,
    candidateId: r.candidate_id as string,
    controlId: r.control_id as string,
    status: r.status as Deployment["status"],
    stage: Number(r.stage),
    share: Number(r.share),
    stageStartedAt: new Date(r.stage_started_at as string).toISOString(),
    // parsed, so a deployment stored before a policy field existed gets its default
    policy: CanaryPolicy.parse(r.policy),
    lastStep: (r.last_step as Record<string, unknown> | null) ?? null,
    createdAt: new Date(r.created_at as string).toISOString(),
    updatedAt: new Date(r.updated_at as string).toISOString(),
  };
}

/** The tenant's running canary, or null. */
export async function activeDeployment(db: Queryable, tenantId: string): Promise<Deployment | null> {
  const rows = await db.query("select * from deployments where tenant_id = $1 and status = 'canary'", [
    tenantId,
  ]);
  return rows[0] ? fromRow(rows[0]) : null;
}

/** Every tenant's running canary (at most one each). */
export async function activeDeployments(db: Queryable): Promise<Deployment[]> {
  const rows = await db.query("select * from deployments where status = 'canary' order by tenant_id");
  return rows.map(fromRow);
}

/** A tenant's deployments, newest first. */
export async function listDeployments(db: Queryable, tenantId: string, limit = 20): Promise<Deployment[]> {
  const rows = await db.query(
    "select * from deployments where tenant_id = $1 order by created_at desc, id desc limit $2",
    [tenantId, limit],
  );
  return rows.map(fromRow);
}

/** One deployment by id. */
export async function getDeployment(db: Queryable, tenantId: string, id: string): Promise<Deployment> {
  const rows = await db.query("select * from deployments where tenant_id = $1 and id = $2", [tenantId, id]);
  if (!rows[0]) throw new NotFoundError(`no deployment "${id}"`);
  return fromRow(rows[0]);
}

/**
 * Starts a canary of a validated (or approved) model against the tenant's production model at the ramp's first
 * share, and audits it. One canary per tenant at a time (a unique index holds it even across processes).
 */
export async function startCanary(
  db: Database,
  tenantId: string,
  input: { candidate: string; actor: string; policy?: CanaryPolicyInput; evidence?: Record<string, unknown> },
): Promise<Deployment> {
  const policy = CanaryPolicy.parse(input.policy ?? {});
  return db.transaction(async (tx) => {
    const candidate = await getModelVersion(tx, tenantId, input.candidate);
    const [control] = await listModelVersions(tx, tenantId, ["promoted"]);
    if (!control) {
      throw new InvalidInputError("no production model to compare against: promote a base model first", {
        field: "candidate",
      });
    }
    if (await activeDeployment(tx, tenantId)) {
      throw new ConflictError("a canary is already running for this tenant: promote or roll it back first");
    }
    await transitionModelVersion(tx, tenantId, candidate.id, {
      from: ["validated", "approved"],
      to: "canary",
      actor: input.actor,
      action: "start_canary",
      evidence: { control: control.id, share: policy.ramp[0], ...input.evidence },
    });
    const id = `dep_${randomBytes(6).toString("hex")}`;
    const rows = await conflictOnDuplicate(
      () =>
        tx.query(
          `insert into deployments (tenant_id, id, candidate_id, control_id, status, stage, share, policy)
           values ($1, $2, $3, $4, 'canary', 0, $5, $6) returning *`,
          [tenantId, id, candidate.id, control.id, policy.ramp[0], JSON.stringify(policy)],
        ),
      "a canary is already running for this tenant: promote or roll it back first",
    );
    await appendAudit(tx, {
      tenantId,
      actor: input.actor,
      subjectKind: "deployment",
      subjectId: id,
      action: "start_canary",
      fromState: null,
      toState: "canary",
      evidence: {
        candidate: candidate.id,
        control: control.id,
        share: policy.ramp[0],
        policy,
        ...input.evidence,
      },
    });
    return fromRow(rows[0]);
  });
}

/** Moves a running canary to the next ramp share (only from `fromStage`, so two deciders cannot both move it). */
export async function advanceCanary(
  db: Database,
  tenantId: string,
  id: string,
  move: {
    fromStage: number;
    share: number;
    actor: string;
    reason: string;
    evidence: Record<string, unknown>;
  },
): Promise<Deployment> {
  return db.transaction(async (tx) => {
    const rows = await tx.query(
      `update deployments set stage = stage + 1, share = $4, stage_started_at = now(), updated_at = now(),
              last_step = $5
       where tenant_id = $1 and id = $2 and status = 'canary' and stage = $3 returning *`,
      [
        tenantId,
        id,
        move.fromStage,
        move.share,
        JSON.stringify({ action: "advance", reason: move.reason, evidence: move.evidence }),
      ],
    );
    if (!rows[0])
      throw new InvalidInputError(`deployment ${id} is no longer at stage ${move.fromStage} of a canary`);
    await appendAudit(tx, {
      tenantId,
      actor: move.actor,
      subjectKind: "deployment",
      subjectId: id,
      action: "advance",
      fromState: `canary@${move.fromStage}`,
      toState: `canary@${move.fromStage + 1}`,
      evidence: { reason: move.reason, share: move.share, ...move.evidence },
    });
    return fromRow(rows[0]);
  });
}

/**
 * Ends a canary: `promoted` makes the candidate the production model (the old one is retired); `rolled_back` sends
 * all traffic back to the control, audited as `rollback` or, when the stage's bound ended it without a difference
 * shown, as `keep_production`. Audited on the deployment and on each model version it moves.
 */
export async function finishCanary(
  db: Database,
  tenantId: string,
  id: string,
  end: {
    to: "promoted" | "rolled_back";
    actor: string;
    reason: string;
    evidence?: Record<string, unknown>;
    /** The audited action; by default `promote` or `rollback` after `to`. */
    action?: "promote" | "rollback" | "keep_production";
  },
): Promise<Deployment> {
  const action = end.action ?? (end.to === "promoted" ? "promote" : "rollback");
  return db.transaction(async (tx) => {
    const current = await getDeployment(tx, tenantId, id);
    const rows = await tx.query(
      `update deployments set status = $3, share = $4, updated_at = now(), last_step = $5
       where tenant_id = $1 and id = $2 and status = 'canary' returning *`,
      [
        tenantId,
        id,
        end.to,
        end.to === "promoted" ? 1 : 0,
        JSON.stringify({
          action,
          reason: end.reason,
          evidence: end.evidence ?? {},
        }),
      ],
    );
    if (!rows[0]) {
      throw new InvalidInputError(
        `deployment ${id} is ${current.status}; only a running canary can be ${end.to.replace("_", " ")}`,
        {
          field: "status",
        },
      );
    }
    const evidence = { reason: end.reason, deployment: id, ...end.evidence };
    await transitionModelVersion(tx, tenantId, current.candidateId, {
      from: ["canary"],
      to: end.to,
      actor: end.actor,
      action,
      evidence,
    });
    if (end.to === "promoted") {
      await transitionModelVersion(tx, tenantId, current.controlId, {
        from: ["promoted"],
        to: "retired",
        actor: end.actor,
        action: "retire",
        evidence: { replacedBy: current.candidateId, deployment: id },
      });
    }
    await appendAudit(tx, {
      tenantId,
      actor: end.actor,
      subjectKind: "deployment",
      subjectId: id,
      action,
      fromState: `canary@${current.stage}`,
      toState: end.to,
      evidence,
    });
    return fromRow(rows[0]);
  });
}

/** Stores the deployer's latest "hold" decision so status shows what the canary is waiting for. */
export async function noteCanaryStep(
  db: Queryable,
  tenantId: string,
  id: string,
  step: Record<string, unknown>,
): Promise<void> {
  await db.query(
    "update deployments set last_step = $3 where tenant_id = $1 and id = $2 and status = 'canary'",
    [tenantId, id, JSON.stringify(step)],
  );
}
