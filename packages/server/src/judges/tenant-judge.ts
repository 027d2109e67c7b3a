import {
  createGroupJudge,
  createJudgeDetector,
  type GroupJudge,
  type JudgeDetector,
  JudgeQueue,
  MinuteWindow,
  memoryJudgeCache,
  openAIJudgeClient,
  type Rubric,
} from "@arc/core";
import type { Queryable } from "../store/database.ts";
import { getJudgeModel, type JudgeModel, latestRubric } from "./judge-store.ts";

/** The upstreams a judge may run on, by name (the server's `upstreams` config, `ARC_UPSTREAMS`). */
export type JudgeUpstreams = Readonly<
  Record<string, { baseUrl: string; apiKeyEnv?: string; judgeConcurrency?: number }>
>;

/**
 * A tenant's judge in its forms: one answer at a time, for a caller that waits (validation, calibration, a test) or
 * for detection in the background, and a group in one call. All go through the judge's queue (`judgeQueue`).
 */
export interface TenantJudges {
  /** The judge model's name, as its endpoint knows it. */
  model: string;
  detector: JudgeDetector;
  /** The same judge for detection: its calls wait behind the others, and are refused while the queue is full. */
  background: JudgeDetector;
  group: GroupJudge;
  queue: JudgeQueue;
}

/** One queue per judge (its endpoint and model), shared by every tenant and use of it. */
const queues = new Map<string, JudgeQueue>();

/** The queue of the judge `model` on `upstream`: the one every call to that judge goes through. */
export function judgeQueue(upstream: JudgeUpstreams[string], model: string): JudgeQueue {
  const key = `${upstream.baseUrl}\u0000${model}`;
  let queue = queues.get(key);
  if (!queue) {
    queue = new JudgeQueue(`${model} at ${upstream.baseUrl}`, {
      ...(upstream.judgeConcurrency ? { concurrency: upstream.judgeConcurrency } : {}),
    });
    queues.set(key, queue);
  }
  return queue;
}

/** Each tenant's judges, kept while its rubric version, model and budget stay the same (caches and budgets live in them). */
const judges = new Map<string, { signature: string } & TenantJudges>();

/** A tenant's judge as it is set: its latest rubric, its model and budget, and the allowlisted upstream it runs on. */
export interface UsableJudge {
  rubric: Rubric;
  judge: JudgeModel;
  upstream: JudgeUpstreams[string];
}

/** The tenant's judge settings; undefined when it has no rubric or no judge model, or its upstream is not allowed. */
export async function usableJudge(
  db: Queryable,
  tenantId: string,
  upstreams: JudgeUpstreams,
): Promise<UsableJudge | undefined> {
  const [rubric, judge] = await Promise.all([latestRubric(db, tenantId), getJudgeModel(db, tenantId)]);
  const upstream = judge && Object.hasOwn(upstreams, judge.upstream) ? upstreams[judge.upstream] : undefined;
  return rubric && judge && upstream ? { rubric, judge, upstream } : undefined;
}

/**
 * The tenant's judges: its latest rubric run by the model it set, on an allowlisted upstream; undefined when the
 * tenant has no rubric or no judge model, or its upstream is no longer configured.
 */
export async function tenantJudges(
  db: Queryable,
  tenantId: string,
  upstreams: JudgeUpstreams,
): Promise<TenantJudges | undefined> {
  const usable = await usableJudge(db, tenantId, upstreams);
  if (!usable) return undefined;
  const { rubric, judge, upstream } = usable;
  const signature = JSON.stringify([rubric.version, judge, upstream]);
  const kept = judges.get(tenantId);
  if (kept?.signature === signature) return kept;
  const queue = judgeQueue(upstream, judge.model);
  const client = openAIJudgeClient({
    baseUrl: upstream.baseUrl,
    apiKey: upstream.apiKeyEnv ? process.env[upstream.apiKeyEnv] : undefined,
  });
  const settings = {
    rubric,
    model: judge.model,
    // one budget and one cache for every form: validation's calls and detection's spend the same minute
    window: new MinuteWindow(
      { callsPerMinute: judge.callsPerMinute, tokensPerMinute: judge.tokensPerMinute },
      Date.now,
    ),
    cache: memoryJudgeCache(),
    client: queue.client(client, "foreground"),
  };
  const made = {
    signature,
    model: judge.model,
    detector: createJudgeDetector(settings),
    background: createJudgeDetector({ ...settings, client: queue.client(client, "background") }),
    group: createGroupJudge(settings),
    queue,
  };
  judges.set(tenantId, made);
  return made;
}

/** The tenant's judge detector (see `tenantJudges`): for a caller that waits, or for detection (`background`). */
export async function tenantJudgeDetector(
  db: Queryable,
  tenantId: string,
  upstreams: JudgeUpstreams,
  priority: "foreground" | "background" = "foreground",
): Promise<JudgeDetector | undefined> {
  const judges = await tenantJudges(db, tenantId, upstreams);
  return priority === "background" ? judges?.background : judges?.detector;
}
