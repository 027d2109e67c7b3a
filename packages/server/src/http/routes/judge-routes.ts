import { InvalidInputError, NotFoundError } from "@arc/core";
import { Hono } from "hono";
import { getJudgeModel, latestRubric, putJudgeModel, putRubric } from "../../judges/judge-store.ts";
import { type JudgeUpstreams, tenantJudgeDetector } from "../../judges/tenant-judge.ts";
import type { Database } from "../../store/database.ts";
import { getTrace } from "../../store/trace-store.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

/**
 * A tenant's judge: `GET /v1/judges` (its rubric and model), `PUT /v1/judges/rubric` (a new rubric version: criteria
 * and failure classes), `PUT /v1/judges/model` (`{upstream, model, callsPerMinute?, tokensPerMinute?}` on an
 * allowlisted upstream) and `POST /v1/judges/test` (`{traceId}`: the judge's verdict on a stored trace, now). Once
 * both are set, the detection worker runs the judge on the tenant's traces.
 */
export function judgeRoutes(deps: { db: Database; maxBodyBytes: number; upstreams: JudgeUpstreams }) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get("/judges", async (c) => {
    const tenantId = c.get("tenantId");
    const [rubric, model] = await Promise.all([
      latestRubric(deps.db, tenantId),
      getJudgeModel(deps.db, tenantId),
    ]);
    return c.json({ rubric: rubric ?? null, model: model ?? null });
  });

  app.put("/judges/rubric", async (c) => {
    return c.json(await putRubric(deps.db, c.get("tenantId"), await readJson(c, deps.maxBodyBytes)), 201);
  });

  app.put("/judges/model", async (c) => {
    const body = await readJson(c, deps.maxBodyBytes);
    return c.json(await putJudgeModel(deps.db, c.get("tenantId"), body, deps.upstreams));
  });

  app.post("/judges/test", async (c) => {
    const tenantId = c.get("tenantId");
    const body = (await readJson(c, deps.maxBodyBytes)) as { traceId?: unknown } | null;
    if (typeof body?.traceId !== "string")
      throw new InvalidInputError(
        `traceId: expected the id of a stored trace, got ${JSON.stringify(body?.traceId)}`,
        {
          field: "traceId",
        },
      );
    const judge = await tenantJudgeDetector(deps.db, tenantId, deps.upstreams);
    if (!judge)
      throw new NotFoundError(
        "judge: this tenant has no judge yet: set a rubric (PUT /v1/judges/rubric) and a model (PUT /v1/judges/model)",
      );
    const trace = await getTrace(deps.db, tenantId, body.traceId);
    const verdicts = await judge.detect(trace, {} as Parameters<typeof judge.detect>[1]);
    return c.json({ data: verdicts });
  });
  return app;
}
