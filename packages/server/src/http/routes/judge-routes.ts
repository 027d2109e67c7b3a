import { InvalidInputError, NotFoundError, type Rubric, refuseUnknownKeys } from "@arc/core";
import { Hono } from "hono";
import type { RegistrySetup } from "../../failures/failure-pipeline-config.ts";
import { getRecalibration } from "../../failures/judge-recalibrations.ts";
import { tenantRegistry } from "../../failures/tenant-registry.ts";
import { calibrateJudge } from "../../judges/calibrate-judge.ts";
import {
  getJudgeModel,
  type JudgeModel,
  latestCalibration,
  latestRubric,
  putJudgeModel,
  putRubric,
} from "../../judges/judge-store.ts";
import { judgeTrust } from "../../judges/judge-trust.ts";
import { checkRubricFits } from "../../judges/rubric-fit.ts";
import { type JudgeUpstreams, tenantJudgeDetector } from "../../judges/tenant-judge.ts";
import type { Database } from "../../store/database.ts";
import { getTrace } from "../../store/trace-store.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

/**
 * A tenant's judge: `GET /v1/judges` (its rubric, model, latest calibration, trust and scheduled re-calibration), `PUT /v1/judges/rubric` (a new rubric version: criteria
 * and failure classes), `PUT /v1/judges/model` (`{upstream, model, callsPerMinute?, tokensPerMinute?}` on an
 * allowlisted upstream), `POST /v1/judges/test` (`{traceId}`: the judge's verdict on a stored trace, now) and
 * `POST /v1/judges/calibrate` (`{limit?}`: the judge against the verifier's labels of recent traces; its report is
 * kept). Once both are
 * set, the detection worker runs the judge on the tenant's traces.
 */
/** A request body that must be a JSON object (`shape` says which, for the error). */
function bodyObject(body: unknown, shape: string): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new InvalidInputError(`expected a JSON object ${shape}, got ${JSON.stringify(body)}`);
  return body as Record<string, unknown>;
}

/** Recent traces `POST /v1/judges/calibrate` judges by default, and at most. */
const DEFAULT_CALIBRATION_TRACES = 100;
const MAX_CALIBRATION_TRACES = 1000;

export function judgeRoutes(deps: {
  db: Database;
  maxBodyBytes: number;
  upstreams: JudgeUpstreams;
  setupRegistry?: RegistrySetup;
}) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get("/judges", async (c) => {
    const tenantId = c.get("tenantId");
    const [rubric, model, calibration, trust, recalibration] = await Promise.all([
      latestRubric(deps.db, tenantId),
      getJudgeModel(deps.db, tenantId),
      latestCalibration(deps.db, tenantId),
      judgeTrust(deps.db, tenantId),
      getRecalibration(deps.db, tenantId),
    ]);
    return c.json({
      rubric: rubric ?? null,
      model: model ?? null,
      calibration: calibration ?? null,
      trust,
      recalibration: recalibration ?? null,
    });
  });

  // a rubric and a model are each refused when the judge's context cannot hold the rubric's prompt and a verdict
  app.put("/judges/rubric", async (c) => {
    const tenantId = c.get("tenantId");
    const body = await readJson(c, deps.maxBodyBytes);
    const model = await getJudgeModel(deps.db, tenantId);
    const check = model ? (rubric: Rubric) => checkRubricFits(rubric, model, deps.upstreams) : undefined;
    return c.json(await putRubric(deps.db, tenantId, body, check), 201);
  });

  app.put("/judges/model", async (c) => {
    const tenantId = c.get("tenantId");
    const body = await readJson(c, deps.maxBodyBytes);
    const rubric = await latestRubric(deps.db, tenantId);
    const check = rubric ? (judge: JudgeModel) => checkRubricFits(rubric, judge, deps.upstreams) : undefined;
    return c.json(await putJudgeModel(deps.db, tenantId, body, deps.upstreams, check));
  });

  app.post("/judges/test", async (c) => {
    const tenantId = c.get("tenantId");
    const body = bodyObject(await readJson(c, deps.maxBodyBytes), "{traceId}");
    refuseUnknownKeys(body, ["traceId"], "a judge test");
    if (typeof body.traceId !== "string")
      throw new InvalidInputError(
        `traceId: expected the id of a stored trace, got ${JSON.stringify(body.traceId)}`,
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
    return c.json({ data: [await judge.judge(trace)] });
  });

  app.post("/judges/calibrate", async (c) => {
    const body = bodyObject(await readJson(c, deps.maxBodyBytes), "{limit?}");
    refuseUnknownKeys(body, ["limit"], "a calibration request");
    const limit = body.limit ?? DEFAULT_CALIBRATION_TRACES;
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_CALIBRATION_TRACES)
      throw new InvalidInputError(
        `limit: expected a whole number of traces from 1 to ${MAX_CALIBRATION_TRACES}, got ${JSON.stringify(limit)}`,
        { field: "limit" },
      );
    const tenantId = c.get("tenantId");
    const labeller = await tenantRegistry(deps.db, tenantId, deps.setupRegistry);
    return c.json(await calibrateJudge(deps.db, tenantId, { upstreams: deps.upstreams, labeller }, limit));
  });
  return app;
}
