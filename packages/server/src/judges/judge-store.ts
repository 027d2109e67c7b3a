import {
  type CalibrationReport,
  InvalidInputError,
  parseRubric,
  type Rubric,
  refuseUnknownKeys,
} from "@arc/core";
import type { Queryable } from "../store/database.ts";

/** The model that runs a tenant's judge: an allowlisted upstream, the model's name there, and its budget. */
export interface JudgeModel {
  upstream: string;
  model: string;
  callsPerMinute: number;
  tokensPerMinute: number;
}

/**
 * Stores a new version of the tenant's rubric (the previous version plus one); returns it. `check` may refuse the
 * rubric (e.g. one its judge's context cannot hold) before a version is taken.
 */
export async function putRubric(
  db: Queryable,
  tenantId: string,
  input: unknown,
  check?: (rubric: Rubric) => Promise<unknown>,
): Promise<Rubric> {
  const parsed = parseRubric(input); // refuses a bad rubric before a version is taken
  await check?.(parsed);
  const [row] = await db.query<{ version: number }>(
    `insert into judge_rubrics (tenant_id, version, rubric)
     select $1, coalesce(max(version), 0) + 1, $2::jsonb from judge_rubrics where tenant_id = $1
     returning version`,
    [tenantId, JSON.stringify(input)],
  );
  return parseRubric(input, row.version);
}

/** The tenant's latest rubric, if it has one. */
export async function latestRubric(db: Queryable, tenantId: string): Promise<Rubric | undefined> {
  const [row] = await db.query<{ version: number; rubric: unknown }>(
    "select version, rubric from judge_rubrics where tenant_id = $1 order by version desc limit 1",
    [tenantId],
  );
  return row ? parseRubric(row.rubric, row.version) : undefined;
}

/** The largest budget a judge model takes: what the integer columns hold. */
const MAX_RATE = 2_147_483_647;

/**
 * Sets the model that runs the tenant's judge: `upstream` must be one of the server's allowlisted upstreams
 * (`ARC_UPSTREAMS`); the budget defaults to 60 calls and 60,000 tokens a minute. `check` may refuse the model (e.g.
 * one whose context cannot hold the tenant's rubric) before it is stored.
 */
export async function putJudgeModel(
  db: Queryable,
  tenantId: string,
  input: unknown,
  upstreams: Readonly<Record<string, unknown>>,
  check?: (judge: JudgeModel) => Promise<unknown>,
): Promise<JudgeModel> {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new InvalidInputError(
      `expected a judge model {upstream, model, callsPerMinute?, tokensPerMinute?}, got ${JSON.stringify(input)}`,
    );
  const raw = input as Record<string, unknown>;
  refuseUnknownKeys(raw, ["upstream", "model", "callsPerMinute", "tokensPerMinute"], "a judge model");
  const names = Object.keys(upstreams);
  if (typeof raw.upstream !== "string" || !Object.hasOwn(upstreams, raw.upstream))
    throw new InvalidInputError(
      `upstream: expected one of the upstreams the admin configured (${names.length ? names.join(", ") : "none are configured: ARC_UPSTREAMS"}), got ${JSON.stringify(raw.upstream)}`,
      { field: "upstream" },
    );
  if (typeof raw.model !== "string" || raw.model.trim() === "")
    throw new InvalidInputError(
      `model: expected the judge model's name on its upstream, got ${JSON.stringify(raw.model)}`,
      {
        field: "model",
      },
    );
  const limit = (field: "callsPerMinute" | "tokensPerMinute", fallback: number) => {
    const value = raw[field] ?? fallback;
    if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > MAX_RATE)
      throw new InvalidInputError(
        `${field}: expected a whole number from 1 to ${MAX_RATE}, got ${JSON.stringify(value)}`,
        { field },
      );
    return value as number;
  };
  const judge: JudgeModel = {
    upstream: raw.upstream,
    model: raw.model,
    callsPerMinute: limit("callsPerMinute", 60),
    tokensPerMinute: limit("tokensPerMinute", 60_000),
  };
  await check?.(judge);
  await db.query(
    `insert into tenant_judges (tenant_id, upstream, model, calls_per_minute, tokens_per_minute)
     values ($1, $2, $3, $4, $5)
     on conflict (tenant_id) do update set upstream = excluded.upstream, model = excluded.model,
       calls_per_minute = excluded.calls_per_minute, tokens_per_minute = excluded.tokens_per_minute,
       updated_at = now()`,
    [tenantId, judge.upstream, judge.model, judge.callsPerMinute, judge.tokensPerMinute],
  );
  return judge;
}

/** The model that runs the tenant's judge, if one is set. */
export async function getJudgeModel(db: Queryable, tenantId: string): Promise<JudgeModel | undefined> {
  const [row] = await db.query<{
    upstream: string;
    model: string;
    calls_per_minute: number;
    tokens_per_minute: number;
  }>("select upstream, model, calls_per_minute, tokens_per_minute from tenant_judges where tenant_id = $1", [
    tenantId,
  ]);
  return row
    ? {
        upstream: row.upstream,
        model: row.model,
        callsPerMinute: row.calls_per_minute,
        tokensPerMinute: row.tokens_per_minute,
      }
    : undefined;
}

/** A stored calibration of the tenant's judge: when, which rubric version and model, and its report. */
export interface StoredCalibration {
  at: string;
  rubricVersion: number;
  model: string;
  report: CalibrationReport;
  /** The tools its traces were offered, by name; null for a calibration that did not record them. */
  tools: string[] | null;
}

/** Keeps a calibration's report (the dashboard and analytics read the latest). */
export async function saveCalibration(
  db: Queryable,
  tenantId: string,
  calibration: Omit<StoredCalibration, "at" | "tools"> & { tools?: string[] | null },
): Promise<void> {
  await db.query(
    `insert into judge_calibrations (tenant_id, rubric_version, model, report, tools)
     values ($1, $2, $3, $4::jsonb, $5)`,
    [
      tenantId,
      calibration.rubricVersion,
      calibration.model,
      JSON.stringify(calibration.report),
      calibration.tools ?? null,
    ],
  );
}

/** The tenant's most recent judge calibration, if any. */
export async function latestCalibration(
  db: Queryable,
  tenantId: string,
): Promise<StoredCalibration | undefined> {
  const [row] = await db.query<{
    at: string;
    rubric_version: number;
    model: string;
    report: CalibrationReport;
    tools: string[] | null;
  }>(
    "select at, rubric_version, model, report, tools from judge_calibrations where tenant_id = $1 order by at desc limit 1",
    [tenantId],
  );
  return row
    ? {
        at: new Date(row.at).toISOString(),
        rubricVersion: row.rubric_version,
        model: row.model,
        report: row.report,
        tools: row.tools,
      }
    : undefined;
}
