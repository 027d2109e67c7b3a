import { ChatMessage, ForbiddenError, InvalidInputError, toInvalidInputError } from "@arc/core";
import { Hono } from "hono";
import { z } from "zod";
import {
  type RegistrationPolicy,
  resolveCheckpointDir,
  resolveUpstream,
} from "../../deploy/registration-policy.ts";
import { getReleaseSettings, setReleaseSettings } from "../../deploy/release-settings.ts";
import { listAudit } from "../../store/audit-log.ts";
import {
  getModelVersion,
  hasModelVersions,
  listModelVersions,
  lockModelRegistrations,
  type ModelStatus,
  registerModelVersion,
} from "../../store/model-registry.ts";
import type { StoredEvalSets } from "../../validate/eval-set-source.ts";
import {
  approveModel,
  listValidations,
  type ValidatorDeps,
  validateCandidate,
} from "../../validate/validate-candidate.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

/** A model's lineage as `ModelLineage` types it (what the dashboard and the release path read); other keys are kept. */
const Lineage = z
  .object({
    runId: z.string().min(1).optional(),
    recipeHash: z.string().optional(),
    datasets: z
      .array(z.object({ id: z.string().min(1), version: z.string(), kind: z.string() }).passthrough())
      .optional(),
    patterns: z.array(z.string().min(1)).optional(),
    sourceTraceCount: z.number().int().nonnegative().optional(),
  })
  .passthrough();

const Register = z
  .object({
    name: z.string().min(1).max(200),
    status: z
      .enum(["candidate", "promoted"])
      .default("candidate")
      .describe("promoted: the tenant's first model, serving production before any candidate exists"),
    parentId: z
      .string()
      .optional()
      .describe("the model it was trained from, by id or name (stored as its id)"),
    artifactDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        "a checkpoint folder (config.json...) under <home>/artifacts/<tenantId>/ (relative paths start there) or ARC_MODELS_DIR",
      ),
    upstream: z
      .object({
        name: z.string().min(1).describe("an upstream the admin allowed (ARC_UPSTREAMS)"),
        model: z
          .string()
          .min(1)
          .describe("the model it serves; with adapter, the base the adapter was trained on"),
        adapter: z
          .string()
          .min(1)
          .optional()
          .describe(
            "a LoRA adapter folder (PEFT layout) under <home>/artifacts/<tenantId>/, loaded on the upstream, which must see the same path",
          ),
      })
      .strict()
      .optional(),
    lineage: Lineage.optional(),
    metrics: z.record(z.unknown()).optional(),
  })
  .strict();

/** An EvalSet handed over as `buildEvalSet` makes it; its `tenantId`, if any, is ignored (the key's tenant owns it). */
const EvalSetBody = z
  .object({
    kind: z.literal("eval"),
    version: z.string().min(1),
    tenantId: z.string().optional(),
    rows: z
      .array(
        z
          .object({
            id: z.string(),
            question: z.string(),
            env: z.string().optional().describe("the task family; absent for a row no family knows"),
            solution: z.unknown().describe("the reference; absent for a reference-free row"),
            context: z
              .object({ messages: z.array(ChatMessage), tools: z.array(z.record(z.unknown())).optional() })
              .strict()
              .optional()
              .describe("the agent's recorded prompt: OpenAI chat messages and tools"),
            meta: z.object({ slice: z.string() }).passthrough(),
          })
          .strict(),
      )
      .min(1)
      .max(100_000),
    createdFrom: z
      .object({
        seed: z.number().int().min(0).max(0xffff_ffff),
        patternIds: z.array(z.string()).max(1_000),
        params: z.record(z.unknown()),
      })
      .strict()
      .optional(),
    stats: z.record(z.number()).optional(),
  })
  .strict();

/** `PUT /release-settings`: either part or both; each is checked against its own strict schema when stored. */
const ReleaseSettingsBody = z
  .object({
    gates: z.unknown().optional().describe("validation gates (ValidationGates)"),
    canary: z.unknown().optional().describe("canary policy (CanaryPolicy)"),
  })
  .strict();

/** `GET /model-versions?status=`: statuses to list, comma-separated (checked against STATUSES). */
const ModelsQuery = z.object({ status: z.string().optional() }).strict();

const STATUSES = [
  "candidate",
  "validated",
  "rejected",
  "approved",
  "canary",
  "promoted",
  "rolled_back",
  "retired",
];

/**
 * The model registry and validation under `/v1`: `GET|POST /model-versions`, `GET /model-versions/:id` (with its
 * validations and audit trail), `POST /model-versions/:id/validate|approve`, `POST /eval-sets`,
 * `GET|PUT /release-settings` (gates and canary policy).
 */
export function modelRoutes(
  deps: ValidatorDeps & {
    handedEvalSets: StoredEvalSets;
    maxBodyBytes: number;
    /** What tenants may name when they register a model (allowlisted upstreams, their own checkpoints). */
    registration: RegistrationPolicy;
  },
) {
  const app = new Hono<{ Variables: AuthVariables }>();
  const actor = (c: { get(k: "principal"): { keyId: string } }) => `user:${c.get("principal").keyId}`;

  app.get("/model-versions", async (c) => {
    const query = ModelsQuery.safeParse(c.req.query());
    if (!query.success) throw toInvalidInputError(query.error);
    const { status } = query.data;
    const statuses = status ? status.split(",") : undefined;
    for (const s of statuses ?? []) {
      if (!STATUSES.includes(s)) {
        throw new InvalidInputError(`status: expected one of ${STATUSES.join(", ")}, got "${s}"`, {
          field: "status",
        });
      }
    }
    return c.json({
      data: await listModelVersions(deps.db, c.get("tenantId"), statuses as ModelStatus[] | undefined),
    });
  });

  app.post("/model-versions", async (c) => {
    const parsed = Register.safeParse(await readJson(c, deps.maxBodyBytes));
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const tenantId = c.get("tenantId");
    const { upstream, artifactDir, parentId, ...rest } = parsed.data;
    const resolvedArtifactDir =
      artifactDir === undefined ? undefined : resolveCheckpointDir(deps.registration, tenantId, artifactDir);
    const resolvedUpstream = upstream && resolveUpstream(deps.registration, tenantId, upstream);
    // The "no model yet" check and the insert share one transaction under the tenant's registration lock, so two
    // concurrent first registrations cannot both be promoted.
    const model = await deps.db.transaction(async (tx) => {
      await lockModelRegistrations(tx, tenantId);
      const parent = parentId === undefined ? undefined : await getModelVersion(tx, tenantId, parentId);
      if (rest.status === "promoted" && (await hasModelVersions(tx, tenantId))) {
        throw new ForbiddenError(
          "status: only a tenant's first model may be registered as promoted; register a candidate and let validation and the canary promote it",
        );
      }
      return registerModelVersion(tx, tenantId, {
        ...rest,
        parentId: parent?.id,
        artifactDir: resolvedArtifactDir,
        upstream: resolvedUpstream,
        actor: actor(c),
      });
    });
    return c.json(model, 201);
  });

  app.get("/model-versions/:id", async (c) => {
    const tenantId = c.get("tenantId");
    const model = await getModelVersion(deps.db, tenantId, c.req.param("id"));
    return c.json({
      model,
      validations: await listValidations(deps.db, tenantId, model.id),
      audit: await listAudit(deps.db, tenantId, { kind: "model_version", id: model.id }),
    });
  });

  app.post("/model-versions/:id/validate", async (c) => {
    return c.json(await validateCandidate(deps, c.get("tenantId"), c.req.param("id"), actor(c)));
  });

  app.post("/model-versions/:id/approve", async (c) => {
    return c.json(await approveModel(deps.db, c.get("tenantId"), c.req.param("id"), actor(c)));
  });

  app.post("/eval-sets", async (c) => {
    const parsed = EvalSetBody.safeParse(await readJson(c, deps.maxBodyBytes));
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const { kind, version, rows, createdFrom } = parsed.data;
    const stored = await deps.handedEvalSets.put(c.get("tenantId"), {
      kind,
      version,
      rows: rows as never,
      createdFrom: createdFrom ?? { seed: 0, patternIds: [], params: {} },
    });
    return c.json({ version: stored.version, rows: stored.rows.length }, 201);
  });

  app.get("/release-settings", async (c) => c.json(await getReleaseSettings(deps.db, c.get("tenantId"))));
  app.put("/release-settings", async (c) => {
    const parsed = ReleaseSettingsBody.safeParse(await readJson(c, deps.maxBodyBytes));
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    return c.json(await setReleaseSettings(deps.db, c.get("tenantId"), parsed.data));
  });

  return app;
}
