import {
  ArcError,
  type GenResult,
  InvalidInputError,
  refuseUnknownKeys,
  type Task,
  type TaskFamilyRegistry,
  taskAnswerTrace,
  type Verifier,
  type VerifyResult,
} from "@arc/core";
import { partialCreditReward, verifierReward } from "@arc/rl";
import { tenantTaskFamilies } from "../families/task-family-store.ts";
import { type JudgeUpstreams, tenantJudges } from "../judges/tenant-judge.ts";
import { timeSlicer } from "../scheduling/time-slicer.ts";
import type { Queryable } from "../store/database.ts";

/** How a row with a reference solution is scored: the verifier's 1 or 0, or partial credit by failure class. */
export type RewardKind = "verifier" | "partial" | "judge";
const KINDS: readonly RewardKind[] = ["verifier", "partial", "judge"];

/** How long verifying runs between two turns of the event loop. */
const SLICE_MS = 10;

/** Rows one request may score. */
export const MAX_REWARD_ITEMS = 256;

/** One response to score: its task family, question, answer, and the reference solution and prompt if any. */
export interface RewardItem {
  env: string;
  question: string;
  answer: string;
  solution?: unknown;
  /** The prompt the answer was given (OpenAI messages and tools), for the judge to read. */
  context?: { messages: object[]; tools?: object[] };
}

/** What scored a row, and its score in [0, 1]; `score` null when the judge could not decide it now (retry). */
export interface RewardAnswer {
  score: number | null;
  passed: boolean | null;
  judgedBy: string;
  reason?: string;
}

/** The fields of a row to score (`RewardItem`). */
const ITEM_FIELDS = ["env", "question", "answer", "solution", "context"];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The body of `POST /v1/rewards`, checked: each refusal names the field. */
export function parseRewardRequest(body: unknown): { kind: RewardKind; items: RewardItem[] } {
  if (!isObject(body))
    throw new InvalidInputError(`expected a JSON object {kind?, items}, got ${JSON.stringify(body)}`);
  refuseUnknownKeys(body, ["kind", "items"], "a reward request");
  const request = body as { kind?: unknown; items?: unknown };
  const kind = request.kind ?? "partial";
  if (!KINDS.includes(kind as RewardKind))
    throw new InvalidInputError(`kind: expected one of ${KINDS.join(", ")}, got ${JSON.stringify(kind)}`, {
      field: "kind",
    });
  if (!Array.isArray(request.items) || request.items.length === 0 || request.items.length > MAX_REWARD_ITEMS)
    throw new InvalidInputError(`items: expected a list of 1 to ${MAX_REWARD_ITEMS} rows to score`, {
      field: "items",
    });
  const items = request.items.map((raw, i) => {
    if (!isObject(raw))
      throw new InvalidInputError(
        `items[${i}]: expected a row {env, question, answer, solution?, context?}`,
        {
          field: `items.${i}`,
        },
      );
    refuseUnknownKeys(raw, ITEM_FIELDS, "a reward row", `items.${i}`);
    const item = raw;
    for (const field of ["env", "question", "answer"])
      if (typeof item[field] !== "string")
        throw new InvalidInputError(`items[${i}].${field}: expected a string`, {
          field: `items.${i}.${field}`,
        });
    const context = item.context as RewardItem["context"] | undefined;
    if (context !== undefined && (!isObject(context) || !Array.isArray(context.messages)))
      throw new InvalidInputError(`items[${i}].context: expected {messages, tools?}`, {
        field: `items.${i}.context`,
      });
    if (context !== undefined)
      refuseUnknownKeys(context, ["messages", "tools"], "a row's context", `items.${i}.context`);
    return item as unknown as RewardItem;
  });
  return { kind: kind as RewardKind, items };
}

/** A GenResult holding only the text a reward function reads. */
const answered = (text: string) => ({ text }) as GenResult;

/**
 * The verifier's verdict on a row. A solution the verifier cannot read (a tool-call reference without its `args`) is
 * the caller's data at fault: refused, naming the row's solution and what the verifier could not do with it.
 */
function verifyItem(verify: Verifier, item: RewardItem, i: number): VerifyResult {
  try {
    return verify({ outputs: [item.answer], solution: item.solution });
  } catch (error) {
    if (ArcError.isInstance(error)) throw error;
    throw new InvalidInputError(
      `items[${i}].solution: the ${item.env} family's verifier cannot read it (${(error as Error).message}): send the reference as the family writes it, e.g. {"tool": ..., "args": {...}} for a tool call`,
      { field: `items.${i}.solution` },
    );
  }
}

/**
 * Scores responses for a tenant, as Arc's trainer rewards them: a row with a solution in a family that has a
 * verifier by that verifier (`verifier`: 1 or 0; `partial`: partial credit by failure class); a reference-free row, a
 * row of a judge-only family, or any row with `kind: judge`, by the tenant's judge (the verdict's score). A row
 * nothing can score is refused, naming it.
 */
export async function scoreRewards(
  db: Queryable,
  tenantId: string,
  upstreams: JudgeUpstreams,
  request: { kind: RewardKind; items: RewardItem[] },
): Promise<RewardAnswer[]> {
  const families: TaskFamilyRegistry = await tenantTaskFamilies(db, tenantId);
  const judges = await tenantJudges(db, tenantId, upstreams);
  const scoreOne = async (item: RewardItem, i: number): Promise<RewardAnswer> => {
    const family = families.find(item.env);
    if (!family)
      throw new InvalidInputError(
        `items[${i}].env: no task family ${JSON.stringify(item.env)} for this tenant (${families.envs().join(", ")})`,
        { field: `items.${i}.env` },
      );
    const task: Task = {
      id: `reward-${i}`,
      env: item.env,
      question: item.question,
      solution: item.solution,
      meta: {},
      ...(item.context ? { context: item.context as Task["context"] } : {}),
    };
    if (request.kind !== "judge" && item.solution !== undefined && family.verify) {
      const verdict = verifyItem(family.verify, item, i);
      const reward = request.kind === "verifier" ? verifierReward : partialCreditReward;
      return {
        score: reward({ task, sample: answered(item.answer), verdict }),
        passed: verdict.status === "pass",
        judgedBy: `verifier:${item.env}`,
      };
    }
    if (!judges)
      throw new InvalidInputError(
        `items[${i}]: ${item.solution === undefined ? "a reference-free row" : `the ${item.env} family has no verifier`} needs the tenant's judge, and it has none (PUT /v1/judges/rubric and /v1/judges/model)`,
        { field: `items.${i}` },
      );
    const verdict = await judges.detector.judge(taskAnswerTrace(family, task, item.answer));
    const judgedBy = `judge:${judges.model}`;
    if (verdict.status === "unknown")
      return { score: null, passed: null, judgedBy, reason: verdict.evidence.message };
    return { score: verdict.score, passed: verdict.status === "passed", judgedBy };
  };
  // Verifying is synchronous work (the tenant's schemas, each check bounded): a slice at a time, so the requests the
  // process is answering are served in between. Every row is started before any is awaited (judge calls overlap).
  const scoring: Promise<RewardAnswer>[] = [];
  const slice = timeSlicer(SLICE_MS);
  for (const [i, item] of request.items.entries()) {
    await slice();
    const answer = scoreOne(item, i);
    answer.catch(() => {}); // its error reaches Promise.all below; this keeps it handled across the turns
    scoring.push(answer);
  }
  return Promise.all(scoring);
}
