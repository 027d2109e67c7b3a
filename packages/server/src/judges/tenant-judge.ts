import { createJudgeDetector, type JudgeDetector, openAIJudgeClient } from "@arc/core";
import type { Queryable } from "../store/database.ts";
import { getJudgeModel, latestRubric } from "./judge-store.ts";

/** The upstreams a judge may run on, by name (the server's `upstreams` config, `ARC_UPSTREAMS`). */
export type JudgeUpstreams = Readonly<Record<string, { baseUrl: string; apiKeyEnv?: string }>>;

/** Each tenant's judge detector, kept while its rubric version, model and budget stay the same (its cache and budget live in it). */
const judges = new Map<string, { signature: string; detector: JudgeDetector }>();

/**
 * The tenant's judge detector: its latest rubric run by the model it set, on an allowlisted upstream; undefined
 * when the tenant has no rubric or no judge model, or its upstream is no longer configured.
 */
export async function tenantJudgeDetector(
  db: Queryable,
  tenantId: string,
  upstreams: JudgeUpstreams,
): Promise<JudgeDetector | undefined> {
  const [rubric, judge] = await Promise.all([latestRubric(db, tenantId), getJudgeModel(db, tenantId)]);
  const upstream = judge && Object.hasOwn(upstreams, judge.upstream) ? upstreams[judge.upstream] : undefined;
  if (!rubric || !judge || !upstream) return undefined;
  const signature = JSON.stringify([rubric.version, judge, upstream]);
  const kept = judges.get(tenantId);
  if (kept?.signature === signature) return kept.detector;
  const detector = createJudgeDetector({
    rubric,
    model: judge.model,
    budget: { callsPerMinute: judge.callsPerMinute, tokensPerMinute: judge.tokensPerMinute },
    client: openAIJudgeClient({
      baseUrl: upstream.baseUrl,
      apiKey: upstream.apiKeyEnv ? process.env[upstream.apiKeyEnv] : undefined,
    }),
  });
  judges.set(tenantId, { signature, detector });
  return detector;
}
