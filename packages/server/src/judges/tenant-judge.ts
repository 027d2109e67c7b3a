import {
  createGroupJudge,
  createJudgeDetector,
  type GroupJudge,
  type JudgeDetector,
  MinuteWindow,
  openAIJudgeClient,
  type Rubric,
} from "@arc/core";
import type { Queryable } from "../store/database.ts";
import { getJudgeModel, type JudgeModel, latestRubric } from "./judge-store.ts";

/** The upstreams a judge may run on, by name (the server's `upstreams` config, `ARC_UPSTREAMS`). */
export type JudgeUpstreams = Readonly<Record<string, { baseUrl: string; apiKeyEnv?: string }>>;

/** A tenant's judge in both forms: one answer at a time (detection, pointwise validation), and a group in one call. */
export interface TenantJudges {
  /** The judge model's name, as its endpoint knows it. */
  model: string;
  detector: JudgeDetector;
  group: GroupJudge;
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
  const settings = {
    rubric,
    model: judge.model,
    // one budget for both forms: a validation's group calls and detection's calls spend the same minute
    window: new MinuteWindow(
      { callsPerMinute: judge.callsPerMinute, tokensPerMinute: judge.tokensPerMinute },
      Date.now,
    ),
    client: openAIJudgeClient({
      baseUrl: upstream.baseUrl,
      apiKey: upstream.apiKeyEnv ? process.env[upstream.apiKeyEnv] : undefined,
    }),
  };
  const made = {
    signature,
    model: judge.model,
    detector: createJudgeDetector(settings),
    group: createGroupJudge(settings),
  };
  judges.set(tenantId, made);
  return made;
}

/** The tenant's judge detector (see `tenantJudges`). */
export async function tenantJudgeDetector(
  db: Queryable,
  tenantId: string,
  upstreams: JudgeUpstreams,
): Promise<JudgeDetector | undefined> {
  return (await tenantJudges(db, tenantId, upstreams))?.detector;
}
