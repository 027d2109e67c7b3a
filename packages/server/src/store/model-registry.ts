import { randomBytes } from "node:crypto";
import { ConflictError, InvalidInputError, NotFoundError } from "@arc/core";
import { appendAudit } from "./audit-log.ts";
import type { Queryable } from "./database.ts";
import { lockTenant } from "./tenant-lock.ts";
import { conflictOnDuplicate } from "./unique-violation.ts";

/** Where a model version stands. `candidate → validated|rejected → (approved) → canary → promoted|rolled_back`; `retired` when replaced. */
export type ModelStatus =
  | "candidate"
  | "validated"
  | "rejected"
  | "approved"
  | "canary"
  | "promoted"
  | "rolled_back"
  | "retired";

/** An OpenAI-compatible server that serves a model (vLLM, SGLang, a hosted API, `arc engine serve`). */
export interface UpstreamModel {
  /** The admin's name for the server (ARC_UPSTREAMS) when a tenant registered it over HTTP. */
  name?: string;
  /** Where OpenAI's client base URL would point, e.g. `http://vllm:8000/v1`. */
  baseUrl: string;
  /** The model name to send upstream; for an adapter, its served name (the model version's id). */
  model: string;
  /** Name of the environment variable holding the upstream's API key (the key itself is never stored). */
  apiKeyEnv?: string;
  /**
   * A LoRA adapter on a base model the upstream serves: the gateway loads it on the upstream (vLLM's
   * `/v1/load_lora_adapter`) before the version takes traffic, and unloads it once the version leaves service.
   */
  adapter?: {
    /** The base model the upstream serves, which the adapter was trained on. */
    base: string;
    /** The adapter's folder (PEFT layout) as the upstream sees it. */
    path: string;
  };
}

/** What a model version was made from: enough to trace it back to production traces. */
export interface ModelLineage {
  /** The training run that produced the checkpoint. */
  runId?: string;
  /** Hash of the resolved recipe, so two runs with the same settings can be told apart from different ones. */
  recipeHash?: string;
  /** The datasets trained on, by id and content version. */
  datasets?: { id: string; version: string; kind: string }[];
  /** The failure patterns the datasets were drawn from. */
  patterns?: string[];
  /** How many production traces the datasets came from. */
  sourceTraceCount?: number;
  /** Anything else a producer wants kept with the model (free-form, stored as JSON). */
  [key: string]: unknown;
}

/** A model in a tenant's registry: a checkpoint or an upstream model, its status and where it came from. */
export interface ModelVersion {
  /** `mv_<hex>`, what deployments and traces reference. */
  id: string;
  /** The tenant that owns it; no other tenant can see or serve it. */
  tenantId: string;
  /** Unique per tenant, human-readable, e.g. `support-small-base` or `run_ab12/step-200`. */
  name: string;
  /** Where it stands in the release flow (see `ModelStatus`). */
  status: ModelStatus;
  /** The model this one was trained from. */
  parentId: string | null;
  /** A checkpoint in the Hugging Face layout (embedded engine); null for an upstream-only model. */
  artifactDir: string | null;
  /** An OpenAI-compatible server that serves it instead of the embedded engine; null for a checkpoint. */
  upstream: UpstreamModel | null;
  /** What it was trained from (runs, datasets, patterns). */
  lineage: ModelLineage;
  /** Figures recorded for it (training metrics, validation results), free-form. */
  metrics: Record<string, unknown>;
  /** ISO 8601 date-time. */
  createdAt: string;
  /** ISO 8601 date-time of the last status change. */
  updatedAt: string;
}

function fromRow(r: Record<string, unknown>): ModelVersion {
  return {
    id: r.id as string,
    tenantId: r.tenant_id as string,
    name: r.name as string,
    status: r.status as ModelStatus,
    parentId: (r.parent_id as string | null) ?? null,
    artifactDir: (r.artifact_dir as string | null) ?? null,
    upstream: (r.upstream as UpstreamModel | null) ?? null,
    lineage: r.lineage as ModelLineage,
    metrics: r.metrics as Record<string, unknown>,
    createdAt: new Date(r.created_at as string).toISOString(),
    updatedAt: new Date(r.updated_at as string).toISOString(),
  };
}

/**
 * Takes the tenant's model-registration lock for the rest of transaction `tx`, waiting while another registration of
 * the same tenant holds it (in any process sharing the database). A check of the registry followed by an insert, such
 * as "promoted only when the tenant has no model yet", holds only when both run under it.
 */
export async function lockModelRegistrations(tx: Queryable, tenantId: string): Promise<void> {
  await lockTenant(tx, "modelRegistrations", tenantId);
}

/** Whether the tenant has any model version, in any status. */
export async function hasModelVersions(db: Queryable, tenantId: string): Promise<boolean> {
  const rows = await db.query("select 1 from model_versions where tenant_id = $1 limit 1", [tenantId]);
  return rows.length > 0;
}

/** Adds a model version (a run's checkpoint, a base model, or an upstream model) and audits it. */
export async function registerModelVersion(
  db: Queryable,
  tenantId: string,
  input: {
    name: string;
    status?: ModelStatus;
    parentId?: string;
    artifactDir?: string;
    upstream?: UpstreamModel;
    lineage?: ModelLineage;
    metrics?: Record<string, unknown>;
    actor: string;
  },
): Promise<ModelVersion> {
  if (!input.artifactDir && !input.upstream) {
    throw new InvalidInputError("a model version needs artifactDir (a checkpoint) or upstream (a server)", {
      field: "artifactDir",
    });
  }
  const id = `mv_${randomBytes(6).toString("hex")}`;
  const status = input.status ?? "candidate";
  // an adapter is served under the version's id: unique across the tenants that share its upstream
  const upstream = input.upstream?.adapter ? { ...input.upstream, model: id } : input.upstream;
  const rows = await conflictOnDuplicate(
    () =>
      db.query<Record<string, unknown>>(
        `insert into model_versions (tenant_id, id, name, status, parent_id, artifact_dir, upstream, lineage, metrics)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning *`,
        [
          tenantId,
          id,
          input.name,
          status,
          input.parentId ?? null,
          input.artifactDir ?? null,
          upstream ? JSON.stringify(upstream) : null,
          JSON.stringify(input.lineage ?? {}),
          JSON.stringify(input.metrics ?? {}),
        ],
      ),
    `a model named "${input.name}" already exists`,
  );
  await appendAudit(db, {
    tenantId,
    actor: input.actor,
    subjectKind: "model_version",
    subjectId: id,
    action: "register",
    fromState: null,
    toState: status,
    evidence: { name: input.name, parentId: input.parentId ?? null, lineage: input.lineage ?? {} },
  });
  return fromRow(rows[0]);
}

/** One model version of this tenant, by id or name. */
export async function getModelVersion(
  db: Queryable,
  tenantId: string,
  idOrName: string,
): Promise<ModelVersion> {
  const rows = await db.query<Record<string, unknown>>(
    "select * from model_versions where tenant_id = $1 and (id = $2 or name = $2)",
    [tenantId, idOrName],
  );
  if (!rows[0]) throw new NotFoundError(`no model version "${idOrName}"`);
  return fromRow(rows[0]);
}

/** A tenant's model versions, newest first, optionally of some statuses only. */
export async function listModelVersions(
  db: Queryable,
  tenantId: string,
  statuses?: ModelStatus[],
): Promise<ModelVersion[]> {
  const rows = await db.query<Record<string, unknown>>(
    `select * from model_versions where tenant_id = $1 and ($2::text[] is null or status = any($2))
     order by created_at desc, id desc`,
    [tenantId, statuses ?? null],
  );
  return rows.map(fromRow);
}

/**
 * Moves a model version to a new status, only from one of `from` (so two workers cannot both make the same move),
 * merging `metrics`, and audits the move with its evidence.
 */
export async function transitionModelVersion(
  db: Queryable,
  tenantId: string,
  id: string,
  move: {
    from: ModelStatus[];
    to: ModelStatus;
    actor: string;
    action: string;
    evidence?: Record<string, unknown>;
    metrics?: Record<string, unknown>;
  },
): Promise<ModelVersion> {
  const current = await getModelVersion(db, tenantId, id);
  const rows = await db.query<Record<string, unknown>>(
    `update model_versions set status = $3, metrics = metrics || $5::jsonb, updated_at = now()
     where tenant_id = $1 and id = $2 and status = any($4::text[]) returning *`,
    [tenantId, current.id, move.to, move.from, JSON.stringify(move.metrics ?? {})],
  );
  if (!rows[0]) {
    throw new ConflictError(
      `model ${current.name} is ${current.status}; it can become ${move.to} only from ${move.from.join(" or ")}`,
    );
  }
  await appendAudit(db, {
    tenantId,
    actor: move.actor,
    subjectKind: "model_version",
    subjectId: current.id,
    action: move.action,
    fromState: current.status,
    toState: move.to,
    evidence: move.evidence ?? {},
  });
  return fromRow(rows[0]);
}
