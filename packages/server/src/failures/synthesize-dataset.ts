import {
  buildEvalSet,
  buildPreferenceSet,
  buildPromptPool,
  type ChosenCandidate,
  type ContentImage,
  candidatesFromFeedback,
  type Dataset,
  type DatasetRow,
  type DetectorRegistry,
  extractInlineImages,
  type FailureItem,
  type Feedback,
  failureItemFromTrace,
  InvalidInputError,
  questionsOf,
  Trace,
  toInvalidInputError,
  traceQuestion,
  type Verifier,
} from "@arc/core";
import { z } from "zod";
import type { Database, Queryable } from "../store/database.ts";
import { lockTenant } from "../store/tenant-lock.ts";
import { getTraces } from "../store/trace-store.ts";
import { type DatasetInfo, datasetsOfKinds, saveDataset } from "./dataset-store.ts";
import type { RegistrySetup } from "./failure-pipeline-config.ts";
import { currentFailureMembers } from "./failure-store.ts";
import { saveImages } from "./image-store.ts";
import { existingPatternIds } from "./pattern-store.ts";
import { tenantRegistry } from "./tenant-registry.ts";
import { getVerdicts } from "./verdict-store.ts";

/** What to synthesize: the body of `POST /v1/datasets` and of a dataset schedule. */
export const DatasetRequest = z
  .object({
    kind: z
      .enum(["eval", "prompts", "preferences"])
      .describe("eval: EvalSet; prompts: PromptPool; preferences: PreferenceSet"),
    fromPatterns: z
      .union([z.literal("all"), z.array(z.string().min(1)).min(1).max(1_000)])
      .default("all")
      .describe('pattern ids whose failures the dataset draws on, or "all"'),
    seed: z
      .number()
      .int()
      .min(0)
      .max(0xffff_ffff)
      .default(0)
      .describe("the same seed over the same data gives the same dataset"),
    size: z.number().int().min(1).max(100_000).default(256).describe("prompts: prompts in the pool"),
    failureSamplingRatio: z
      .number()
      .min(0)
      .max(1)
      .default(0.8)
      .describe("prompts: share of the pool drawn from failures; the rest replays passed production traces"),
    failureSampling: z
      .enum(["balanced", "proportional"])
      .default("balanced")
      .describe(
        "prompts: balanced takes each pattern in turn (rare patterns repeated, for RL); proportional takes each failed prompt once, as the traffic had them (for SFT)",
      ),
    perPattern: z.number().int().min(1).max(10_000).default(20).describe("eval: items per pattern at most"),
    generalSize: z
      .number()
      .int()
      .min(0)
      .max(100_000)
      .default(50)
      .describe("eval: items of the general regression slice (from passed production traces)"),
    nearDuplicateThreshold: z
      .number()
      .gt(0)
      .max(1)
      .default(0.8)
      .describe("word unigram+bigram Jaccard at or above which two questions count as the same"),
    maxTracesPerPattern: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(1000)
      .describe("failed traces read per pattern at most (the first by trace id)"),
    candidates: z
      .record(
        z.array(
          z.object({ text: z.string().min(1), source: z.enum(["human", "policy", "teacher"]) }).strict(),
        ),
      )
      .default({})
      .describe(
        "preferences: chosen candidates by trace id (resampled policy or teacher outputs); human corrections in feedback are added",
      ),
  })
  .strict();
export type DatasetRequest = z.infer<typeof DatasetRequest>;
export type DatasetRequestInput = z.input<typeof DatasetRequest>;

/** Parses a dataset request, naming the field of the first problem. */
export function parseDatasetRequest(input: unknown): DatasetRequest {
  const parsed = DatasetRequest.safeParse(input);
  if (!parsed.success) throw toInvalidInputError(parsed.error);
  return parsed.data;
}

/** Most passed traces read for the general/replay slices. */
const maxGeneralRows = 5000;

/**
 * Passed production traces whose reference solution is known (stored in `metadata.solution`, or found by the
 * tenant's resolver), as dataset rows: the general regression slice of an EvalSet and the replay share of a
 * PromptPool. At most `limit` traces are read, in an order the seed decides (`md5(seed:id)`): the same seed over
 * the same traces reads the same ones, and a tenant with more than `limit` passed traces gets a sample spread over
 * all of them rather than always the same lowest ids.
 */
export async function passedRows(
  db: Queryable,
  tenantId: string,
  registry: DetectorRegistry,
  options: { seed: number; limit?: number },
): Promise<DatasetRow[]> {
  const rows = await db.query<{
    id: string;
    started_at: string;
    env: string;
    input: unknown;
    metadata: unknown;
  }>(
    `select t.id, t.started_at, t.env, t.input, t.metadata
       from traces t join verdicts v on v.tenant_id = t.tenant_id and v.trace_id = t.id
      where t.tenant_id = $1 and v.status = 'passed' and t.env is not null
      order by md5($3 || ':' || t.id), t.id limit $2`,
    [tenantId, options.limit ?? maxGeneralRows, String(options.seed)],
  );
  const out: DatasetRow[] = [];
  for (const r of rows) {
    const trace = Trace.safeParse({
      id: r.id,
      startedAt: new Date(r.started_at).toISOString(),
      env: r.env,
      input: r.input ?? undefined,
      metadata: r.metadata ?? undefined,
    });
    if (!trace.success) continue;
    const question = traceQuestion(trace.data);
    const solution = registry.solutionFor(trace.data);
    if (question && solution !== undefined) out.push({ question, solution, env: r.env, meta: { id: r.id } });
  }
  return out;
}

/** The failed traces of the chosen patterns as failure items, and the human corrections left on them. */
async function failureItems(
  db: Queryable,
  tenantId: string,
  request: DatasetRequest,
  registry: DetectorRegistry,
): Promise<{ items: FailureItem[]; corrections: Record<string, ChosenCandidate[]> }> {
  if (request.fromPatterns !== "all") {
    const known = await existingPatternIds(db, tenantId, request.fromPatterns);
    const missing = request.fromPatterns.find((id) => !known.has(id));
    if (missing !== undefined) {
      throw new InvalidInputError(`fromPatterns: no pattern with id "${missing}" (see GET /v1/patterns)`, {
        field: "fromPatterns",
      });
    }
  }
  const members = await currentFailureMembers(
    db,
    tenantId,
    request.fromPatterns,
    request.maxTracesPerPattern,
  );
  const verdicts = await getVerdicts(
    db,
    tenantId,
    members.map((m) => m.traceId),
  );
  const items: FailureItem[] = [];
  const feedback: Feedback[] = [];
  const images = new Map<string, ContentImage>();
  for (let i = 0; i < members.length; i += 500) {
    const chunk = members.slice(i, i + 500);
    const traces = await getTraces(
      db,
      tenantId,
      chunk.map((m) => m.traceId),
    );
    for (const m of chunk) {
      const verdict = verdicts.get(m.traceId);
      const stored = traces.get(m.traceId);
      if (!verdict || !stored) continue;
      const { feedback: notes, ...rest } = stored;
      const trace = Trace.safeParse(rest);
      if (!trace.success) continue;
      const item = failureItemFromTrace(trace.data, verdict.judgement, m.patternId);
      if (item) {
        // rows reference each inline image by content hash; its bytes are stored once, beside the datasets
        const { messages, images: found } = extractInlineImages(item.context.messages);
        for (const image of found) images.set(image.ref, image);
        items.push({
          ...item,
          context: { ...item.context, messages },
          solution: registry.solutionFor(trace.data),
        });
      }
      feedback.push(...notes);
    }
  }
  await saveImages(db, tenantId, [...images.values()]);
  return { items, corrections: candidatesFromFeedback(feedback) };
}

/** Builds the requested dataset from what is stored now. Deterministic: same data and seed, same version. */
export async function buildDataset(
  db: Queryable,
  tenantId: string,
  request: DatasetRequest,
  registry: DetectorRegistry,
): Promise<Dataset> {
  const { items, corrections } = await failureItems(db, tenantId, request, registry);
  const threshold = request.nearDuplicateThreshold;
  if (request.kind === "eval") {
    const training = await datasetsOfKinds(db, tenantId, ["prompts", "preferences"]);
    return buildEvalSet({
      tenantId,
      seed: request.seed,
      failures: items,
      general: await passedRows(db, tenantId, registry, { seed: request.seed }),
      trainingQuestions: training.flatMap(questionsOf),
      perPattern: request.perPattern,
      generalSize: request.generalSize,
      nearDuplicateThreshold: threshold,
    });
  }
  const evalSets = await datasetsOfKinds(db, tenantId, ["eval"]);
  if (request.kind === "prompts") {
    return buildPromptPool({
      tenantId,
      seed: request.seed,
      failures: items,
      replay: await passedRows(db, tenantId, registry, { seed: request.seed }),
      size: request.size,
      failureSamplingRatio: request.failureSamplingRatio,
      failureSampling: request.failureSampling,
      evalSets,
      nearDuplicateThreshold: threshold,
    });
  }
  const candidates: Record<string, ChosenCandidate[]> = { ...corrections };
  for (const [traceId, list] of Object.entries(request.candidates))
    candidates[traceId] = [...(candidates[traceId] ?? []), ...list];
  const verifiers: Record<string, Verifier> = {};
  for (const env of new Set(items.flatMap((f) => (f.env ? [f.env] : [])))) {
    const verifier = registry.verifierFor(env);
    if (verifier) verifiers[env] = verifier;
  }
  return buildPreferenceSet({
    tenantId,
    seed: request.seed,
    failures: items,
    candidates,
    verifiers,
    evalSets,
    nearDuplicateThreshold: threshold,
  });
}

/**
 * Takes the tenant's dataset-build lock for the rest of transaction `tx`, waiting while another build of the same
 * tenant holds it (in any process sharing the database). Builds exclude each other's questions (an EvalSet leaves
 * out training questions, a PromptPool or PreferenceSet leaves out eval questions); two overlapping builds would each
 * miss the other's and leak eval items into training.
 */
export async function lockDatasetBuilds(tx: Queryable, tenantId: string): Promise<void> {
  await lockTenant(tx, "datasetBuilds", tenantId);
}

/**
 * Synthesizes a dataset and stores it, unless a dataset with the same content is stored already (then that one is
 * returned with `created: false`). `createdBy` is `api` or `schedule:<name>`. The tenant's registry (`setup`)
 * supplies its verifiers and solution resolver, so its own envs and gateway traffic become verifiable rows. Reading,
 * building and saving run in one transaction under the tenant's dataset-build lock (`lockDatasetBuilds`), so a
 * build always sees the datasets of the builds before it.
 */
export async function synthesizeDataset(
  db: Database,
  tenantId: string,
  request: DatasetRequest,
  options: { createdBy: string; setupRegistry?: RegistrySetup },
): Promise<{ dataset: DatasetInfo; created: boolean }> {
  const registry = await tenantRegistry(db, tenantId, options.setupRegistry);
  return db.transaction(async (tx) => {
    await lockDatasetBuilds(tx, tenantId);
    const dataset = await buildDataset(tx, tenantId, request, registry);
    return saveDataset(tx, dataset, options.createdBy);
  });
}
