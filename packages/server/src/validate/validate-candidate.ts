import { randomBytes } from "node:crypto";
import {
  builtinSafetySlice,
  decideValidation,
  type GeneralItem,
  InvalidInputError,
  type SafetyItem,
  type ValidationReport,
} from "@arc/core";
import { getReleaseSettings } from "../deploy/release-settings.ts";
import { tenantTaskFamilies } from "../families/task-family-store.ts";
import type { ModelPool } from "../gateway/model-pool.ts";
import { judgeTrust } from "../judges/judge-trust.ts";
import { type JudgeUpstreams, tenantJudges } from "../judges/tenant-judge.ts";
import type { Database, Queryable } from "../store/database.ts";
import {
  getModelVersion,
  listModelVersions,
  type ModelVersion,
  transitionModelVersion,
} from "../store/model-registry.ts";
import type { EvalSetSource } from "./eval-set-source.ts";
import { shippedGeneralSlice } from "./general-slice.ts";
import { isJudgeable, isVerifiable, type JudgeOptions, judgeModels } from "./judge-models.ts";

/** What validation needs: the store, the models, the EvalSets and the safety slice. */
export interface ValidatorDeps {
  db: Database;
  pool: ModelPool;
  evalSets: EvalSetSource;
  /** The safety slice (default: the built-in one). */
  safety?: SafetyItem[];
  /** The general slice, for the capability-retention gate (default: the shipped one). */
  general?: GeneralItem[];
  judge?: JudgeOptions;
  /** The upstreams a tenant's judge may run on, for eval rows no verifier can judge (none: those are not judged). */
  judgeUpstreams?: JudgeUpstreams;
}

/** A stored validation: which candidate against which production model, on which EvalSets, and the report. */
export interface Validation {
  id: string;
  candidateId: string;
  baselineId: string;
  decision: "pass" | "fail";
  evalSetVersions: string[];
  report: ValidationReport;
  createdAt: string;
}

function fromRow(r: Record<string, unknown>): Validation {
  return {
    id: r.id as string,
    candidateId: r.candidate_id as string,
    baselineId: r.baseline_id as string,
    decision: r.decision as Validation["decision"],
    evalSetVersions: r.eval_set_versions as string[],
    report: r.report as ValidationReport,
    createdAt: new Date(r.created_at as string).toISOString(),
  };
}

/**
 * The tenant's judge for the eval rows no verifier can judge, once it is trusted (`judgeTrust`); undefined when the
 * tenant has none or it is untrusted, and refused, saying why, when it is untrusted and no row has a verifier.
 */
async function trustedRubricJudge(
  deps: ValidatorDeps,
  tenantId: string,
  settings: Awaited<ReturnType<typeof getReleaseSettings>>,
  verifiable: number,
  rows: number,
): Promise<JudgeOptions["rubricJudge"]> {
  const judges = await tenantJudges(deps.db, tenantId, deps.judgeUpstreams ?? {});
  if (!judges) return undefined;
  const trust = await judgeTrust(deps.db, tenantId);
  // an untrusted judge gates no validation: its rows are then counted as unjudged
  if (!trust.trusted) {
    if (verifiable === 0)
      throw new InvalidInputError(
        `no eval row can be judged: all ${rows} need the tenant's judge, which is not trusted yet: ${trust.reason}`,
      );
    return undefined;
  }
  return {
    detector: judges.detector,
    model: judges.model,
    ...(settings.gates.judging === "pairwise" ? { pairwise: judges.group } : {}),
  };
}

/**
 * Judges a candidate against the tenant's production model on its newest EvalSet plus the safety and general slices, stores the
 * report, and moves the candidate to `validated` (gates passed) or `rejected` (with the reasons as evidence).
 */
export async function validateCandidate(
  deps: ValidatorDeps,
  tenantId: string,
  candidateIdOrName: string,
  actor: string,
): Promise<{ validation: Validation; model: ModelVersion }> {
  const candidate = await getModelVersion(deps.db, tenantId, candidateIdOrName);
  if (candidate.status !== "candidate") {
    throw new InvalidInputError(
      `model ${candidate.name} is ${candidate.status}; only a candidate is validated`,
      {
        field: "status",
      },
    );
  }
  const [baseline] = await listModelVersions(deps.db, tenantId, ["promoted"]);
  if (!baseline) {
    throw new InvalidInputError(
      "no production model to compare against: register a base model as promoted first",
    );
  }
  const sets = await deps.evalSets.evalSetsFor(tenantId);
  const rows = sets.flatMap((s) => s.rows);
  if (rows.length === 0) {
    throw new InvalidInputError("no EvalSet for this tenant: add one (POST /v1/eval-sets) before validating");
  }
  const families = await tenantTaskFamilies(deps.db, tenantId);
  const verifiable = rows.filter((row) => isVerifiable(row, families));
  const judgeable = rows.filter((row) => isJudgeable(row, families));
  const settings = await getReleaseSettings(deps.db, tenantId);
  const rubricJudge =
    judgeable.length > 0
      ? await trustedRubricJudge(deps, tenantId, settings, verifiable.length, rows.length)
      : undefined;
  if (verifiable.length === 0 && !rubricJudge) {
    throw new InvalidInputError(
      `no eval row can be judged: all ${rows.length} are reference-free or belong to no family with a verifier, and the tenant has no judge (PUT /v1/judges/rubric and /v1/judges/model)`,
    );
  }
  const [b, c] = await Promise.all([deps.pool.backend(baseline), deps.pool.backend(candidate)]);
  const items = await judgeModels(
    b,
    c,
    rubricJudge ? [...verifiable, ...judgeable] : verifiable,
    deps.safety ?? builtinSafetySlice(),
    { ...deps.judge, families, rubricJudge, general: deps.general ?? shippedGeneralSlice() },
  );
  const decided = items.filter((item) => item.kind === "pattern" || item.kind === "general").length;
  if (decided === 0 && rubricJudge) {
    throw new InvalidInputError(
      `the judge (${rubricJudge.model}) decided none of the ${judgeable.length} reference-free eval rows yet (its budget, an outage or unreadable replies): validate again once it answers`,
    );
  }
  const report = { ...decideValidation(items, settings.gates), unjudged: rows.length - decided };
  const id = `val_${randomBytes(6).toString("hex")}`;
  const inserted = await deps.db.query(
    `insert into validations (tenant_id, id, candidate_id, baseline_id, decision, eval_set_versions, report)
     values ($1, $2, $3, $4, $5, $6, $7) returning *`,
    [
      tenantId,
      id,
      candidate.id,
      baseline.id,
      report.decision,
      sets.map((s) => s.version),
      JSON.stringify(report),
    ],
  );
  const pass = report.decision === "pass";
  const model = await transitionModelVersion(deps.db, tenantId, candidate.id, {
    from: ["candidate"],
    to: pass ? "validated" : "rejected",
    actor,
    action: pass ? "validate" : "reject",
    evidence: {
      validation: id,
      baseline: baseline.id,
      reasons: report.reasons,
      awaitingApproval: pass && settings.gates.requireApproval,
    },
    metrics: {
      validation: {
        id,
        decision: report.decision,
        functional: report.scores.functional,
        ndr: report.scores.ndr,
        generalNdr: report.scores.general?.ndr ?? null,
        baselineFunctional: report.scores.baselineFunctional,
      },
    },
  });
  // a rejected candidate will not serve: its backend is closed (its adapter unloaded from its upstream)
  if (!pass) deps.pool.retire(model);
  return { validation: fromRow(inserted[0]), model };
}

/** A tenant's validations of one model, newest first. */
export async function listValidations(
  db: Queryable,
  tenantId: string,
  modelId: string,
): Promise<Validation[]> {
  const rows = await db.query(
    "select * from validations where tenant_id = $1 and candidate_id = $2 order by created_at desc",
    [tenantId, modelId],
  );
  return rows.map(fromRow);
}

/** A person's approval of a validated model, for tenants whose gates say `requireApproval`. */
export async function approveModel(
  db: Queryable,
  tenantId: string,
  idOrName: string,
  actor: string,
): Promise<ModelVersion> {
  const model = await getModelVersion(db, tenantId, idOrName);
  return transitionModelVersion(db, tenantId, model.id, {
    from: ["validated"],
    to: "approved",
    actor,
    action: "approve",
    evidence: { validation: (model.metrics.validation as { id?: string } | undefined)?.id ?? null },
  });
}
