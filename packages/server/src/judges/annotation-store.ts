import { randomBytes } from "node:crypto";
import { InvalidInputError, NotFoundError, refuseUnknownKeys } from "@arc/core";
import type { Queryable } from "../store/database.ts";

/** A person's label on a trace or one of its steps: passed or failed, the failure class if known, and why. */
export interface Annotation {
  id: string;
  traceId: string;
  /** The step the label is about; null when it is about the whole trace. */
  stepId: string | null;
  label: "pass" | "fail";
  /** The failure class the person saw (compared with the judge's rubric class of that name); null if none given. */
  class: string | null;
  rationale: string;
  author: string;
  createdAt: string;
}

/** Longest rationale kept, in characters. */
const MAX_RATIONALE = 4_000;
/** Class names as rubrics name them. */
const CLASS_NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** Review queue names. */
const QUEUE_NAME = /^[a-z][a-z0-9-]{0,63}$/;

/** Reads an annotation request (`{traceId, stepId?, label, class?, rationale}`), naming the field at fault. */
export function parseAnnotation(body: unknown): Omit<Annotation, "id" | "author" | "createdAt"> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new InvalidInputError(
      `expected a JSON object {traceId, stepId?, label, class?, rationale}, got ${JSON.stringify(body)?.slice(0, 100)}`,
    );
  const b = body as Record<string, unknown>;
  refuseUnknownKeys(b, ["traceId", "stepId", "label", "class", "rationale"], "an annotation");
  const text = (field: string, value: unknown, max: number) => {
    if (typeof value !== "string" || value.trim() === "" || value.length > max)
      throw new InvalidInputError(
        `${field}: expected a non-empty string of at most ${max} characters, got ${JSON.stringify(value)?.slice(0, 100)}`,
        { field },
      );
    return value;
  };
  if (b.label !== "pass" && b.label !== "fail")
    throw new InvalidInputError(`label: expected "pass" or "fail", got ${JSON.stringify(b.label)}`, {
      field: "label",
    });
  if (b.class !== undefined && (typeof b.class !== "string" || !CLASS_NAME.test(b.class)))
    throw new InvalidInputError(
      `class: expected a snake_case failure class such as wrong_argument, got ${JSON.stringify(b.class)}`,
      { field: "class" },
    );
  if (b.class !== undefined && b.label === "pass")
    throw new InvalidInputError("class: a failure class goes with label fail, not pass", { field: "class" });
  return {
    traceId: text("traceId", b.traceId, 512),
    stepId: b.stepId === undefined ? null : text("stepId", b.stepId, 512),
    label: b.label,
    class: (b.class as string | undefined) ?? null,
    rationale: text("rationale", b.rationale, MAX_RATIONALE),
  };
}

function fromRow(r: Record<string, unknown>): Annotation {
  return {
    id: r.id as string,
    traceId: r.trace_id as string,
    stepId: (r.step_id as string | null) ?? null,
    label: r.label as Annotation["label"],
    class: (r.failure_class as string | null) ?? null,
    rationale: r.rationale as string,
    author: r.author as string,
    createdAt: new Date(r.created_at as string).toISOString(),
  };
}

/** Stores a person's annotation of a stored trace (or one of its steps); 404 when there is no such trace or step. */
export async function addAnnotation(
  db: Queryable,
  tenantId: string,
  input: unknown,
  author: string,
): Promise<Annotation> {
  const a = parseAnnotation(input);
  const [found] = await db.query<{ trace: boolean; step: boolean }>(
    `select exists (select 1 from traces where tenant_id = $1 and id = $2) as trace,
            exists (select 1 from steps where tenant_id = $1 and trace_id = $2 and id = $3) as step`,
    [tenantId, a.traceId, a.stepId ?? ""],
  );
  if (!found.trace) throw new NotFoundError(`trace "${a.traceId}" not found`);
  if (a.stepId !== null && !found.step)
    throw new NotFoundError(`step "${a.stepId}" not found in trace "${a.traceId}"`);
  const [row] = await db.query(
    `insert into annotations (tenant_id, id, trace_id, step_id, label, failure_class, rationale, author)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
    [
      tenantId,
      `ann_${randomBytes(6).toString("hex")}`,
      a.traceId,
      a.stepId,
      a.label,
      a.class,
      a.rationale,
      author,
    ],
  );
  return fromRow(row);
}

/** The tenant's annotations, newest first: of one trace, or all of them, at most `limit`. */
export async function listAnnotations(
  db: Queryable,
  tenantId: string,
  options: { traceId?: string; limit?: number } = {},
): Promise<Annotation[]> {
  const rows = await db.query(
    `select * from annotations where tenant_id = $1 and ($2::text is null or trace_id = $2)
      order by created_at desc, id desc limit $3`,
    [tenantId, options.traceId ?? null, options.limit ?? 100],
  );
  return rows.map(fromRow);
}

/**
 * The gold set: each annotated trace's label from its latest whole-trace annotation (a step's annotation labels the
 * trace failed when it says fail and no later whole-trace annotation says otherwise), for the `limit` traces
 * annotated most recently.
 */
export async function goldLabels(
  db: Queryable,
  tenantId: string,
  limit: number,
): Promise<Map<string, { failed: boolean; class?: string }>> {
  const rows = await db.query<{ trace_id: string; label: string; failure_class: string | null }>(
    `select distinct on (trace_id) trace_id, label, failure_class from annotations
      where tenant_id = $1 and (step_id is null or label = 'fail')
        and trace_id in (
          select trace_id from annotations where tenant_id = $1
           group by trace_id order by max(created_at) desc, trace_id limit $2)
      order by trace_id, created_at desc, id desc`,
    [tenantId, limit],
  );
  return new Map(
    rows.map((r) => [
      r.trace_id,
      { failed: r.label === "fail", ...(r.failure_class ? { class: r.failure_class } : {}) },
    ]),
  );
}

/** A trace waiting in a review queue for a person's annotation. */
export interface ReviewItem {
  traceId: string;
  reason: string;
  addedAt: string;
}

/** Refuses a queue name that is not lowercase words joined by dashes. */
export function checkQueueName(queue: string): string {
  if (!QUEUE_NAME.test(queue))
    throw new InvalidInputError(
      `queue: expected lowercase words joined by dashes such as judge-disagreements, got ${JSON.stringify(queue)}`,
      { field: "queue" },
    );
  return queue;
}

/** Puts traces in a review queue with why; a trace already waiting there keeps its place. Returns how many joined. */
export async function addReviewItems(
  db: Queryable,
  tenantId: string,
  queue: string,
  items: { traceId: string; reason: string }[],
): Promise<number> {
  checkQueueName(queue);
  if (items.length === 0) return 0;
  const rows = await db.query(
    `insert into review_items (tenant_id, queue, trace_id, reason)
     select $1, $2, i.trace_id, i.reason from unnest($3::text[], $4::text[]) as i(trace_id, reason)
      where exists (select 1 from traces t where t.tenant_id = $1 and t.id = i.trace_id)
     on conflict (tenant_id, queue, trace_id) do nothing returning trace_id`,
    [tenantId, queue, items.map((i) => i.traceId), items.map((i) => i.reason.slice(0, 500))],
  );
  return rows.length;
}

/** The traces of a review queue nobody has annotated since they joined it, oldest first, at most `limit`. */
export async function pendingReviews(
  db: Queryable,
  tenantId: string,
  queue: string,
  limit = 50,
): Promise<ReviewItem[]> {
  checkQueueName(queue);
  const rows = await db.query<{ trace_id: string; reason: string; added_at: string }>(
    `select r.trace_id, r.reason, r.added_at from review_items r
      where r.tenant_id = $1 and r.queue = $2
        and not exists (select 1 from annotations a where a.tenant_id = $1 and a.trace_id = r.trace_id
                          and a.created_at >= r.added_at)
      order by r.added_at, r.trace_id limit $3`,
    [tenantId, queue, limit],
  );
  return rows.map((r) => ({
    traceId: r.trace_id,
    reason: r.reason,
    addedAt: new Date(r.added_at).toISOString(),
  }));
}

/** Each of the tenant's review queues with the traces still waiting in it (none: left out). */
export async function reviewQueues(
  db: Queryable,
  tenantId: string,
): Promise<{ queue: string; pending: number }[]> {
  const rows = await db.query<{ queue: string; pending: number }>(
    `select r.queue, count(*)::int as pending from review_items r
      where r.tenant_id = $1
        and not exists (select 1 from annotations a where a.tenant_id = $1 and a.trace_id = r.trace_id
                          and a.created_at >= r.added_at)
      group by r.queue order by r.queue`,
    [tenantId],
  );
  return rows.map((r) => ({ queue: r.queue, pending: Number(r.pending) }));
}
