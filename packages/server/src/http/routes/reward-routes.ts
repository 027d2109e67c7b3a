import { Hono } from "hono";
import type { JudgeUpstreams } from "../../judges/tenant-judge.ts";
import { parseRewardRequest, scoreRewards } from "../../rewards/score-rewards.ts";
import type { Database } from "../../store/database.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

/**
 * `POST /v1/rewards` (`{kind?, items: [{env, question, answer, solution?, context?}]}`): responses scored as Arc's
 * trainer rewards them, by the family's verifier or the tenant's judge; what a VERL job's reward module calls. Each
 * answer is `{score, passed, judgedBy}`; `score` is null (with `reason`) for a row the judge could not decide now.
 */
export function rewardRoutes(deps: { db: Database; maxBodyBytes: number; upstreams: JudgeUpstreams }) {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.post("/rewards", async (c) => {
    const request = parseRewardRequest(await readJson(c, deps.maxBodyBytes));
    return c.json({ data: await scoreRewards(deps.db, c.get("tenantId"), deps.upstreams, request) });
  });
  return app;
}
