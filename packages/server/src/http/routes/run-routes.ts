import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { InvalidInputError, NotFoundError, toInvalidInputError } from "@arc/core";
import { RunDir } from "@arc/rl";
import { Hono } from "hono";
import { z } from "zod";
import type { JudgeUpstreams } from "../../judges/tenant-judge.ts";
import { tenantOrchestratorStatus } from "../../orchestrator/orchestrator.ts";
import type { OrchestratorConfig } from "../../orchestrator/orchestrator-config.ts";
import { queueRun, RunRequest } from "../../orchestrator/queue-run.ts";
import { JOB_LOG_FILE } from "../../orchestrator/ray-job-run.ts";
import {
  getRun,
  listRuns,
  type RunRowStatus,
  requestCancel,
  TENANT_TRIGGER,
  tenantRun,
  withoutServerPaths,
} from "../../orchestrator/run-store.ts";
import type { Database } from "../../store/database.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

const STATUSES: RunRowStatus[] = ["queued", "running", "succeeded", "failed", "cancelled"];

/** `GET /runs/:id/logs?tail=`: how many of the log's last lines to answer. */
const LogsQuery = z.object({ tail: z.coerce.number().int().min(1).max(10_000).default(200) }).strict();

/** `GET /runs?status=`: statuses to list, comma-separated (checked against STATUSES). */
const RunsQuery = z.object({ status: z.string().optional() }).strict();

/**
 * Training runs under `/v1` (tenant key): `GET /runs` (with the orchestrator's status for the tenant),
 * `GET /runs/:id` (progress, metrics per step), `GET /runs/:id/logs?tail=N` (a Ray job's log), `POST /runs` (queue one
 * now), `POST /runs/:id/cancel`,
 * `GET /orchestrator`. A run is shown as `tenantRun` shows it: no server path.
 */
export function runRoutes(deps: {
  db: Database;
  config: OrchestratorConfig;
  /** The upstreams a tenant's judge may run on (the status says when the judge rewards the next run). */
  judgeUpstreams?: JudgeUpstreams;
  /** `<ARC_HOME>/artifacts`: runs go to `<artifactsDir>/<tenantId>/runs/`. */
  artifactsDir: string;
  maxBodyBytes: number;
}) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get("/runs", async (c) => {
    const query = RunsQuery.safeParse(c.req.query());
    if (!query.success) throw toInvalidInputError(query.error);
    const { status } = query.data;
    const statuses = status ? status.split(",") : undefined;
    for (const s of statuses ?? []) {
      if (!STATUSES.includes(s as RunRowStatus)) {
        throw new InvalidInputError(`status: expected one of ${STATUSES.join(", ")}, got "${s}"`, {
          field: "status",
        });
      }
    }
    const tenantId = c.get("tenantId");
    return c.json({
      data: (await listRuns(deps.db, tenantId, { statuses: statuses as RunRowStatus[] | undefined })).map(
        tenantRun,
      ),
      orchestrator: await tenantOrchestratorStatus(deps.db, tenantId, deps.config, deps.judgeUpstreams),
    });
  });

  app.get("/runs/:id", async (c) => {
    const run = await getRun(deps.db, c.get("tenantId"), c.req.param("id"));
    const records = await new RunDir(join(run.runsDir, run.id)).readMetrics();
    return c.json({ run: tenantRun(run), records });
  });

  app.get("/runs/:id/logs", async (c) => {
    const query = LogsQuery.safeParse(c.req.query());
    if (!query.success) throw toInvalidInputError(query.error);
    const run = await getRun(deps.db, c.get("tenantId"), c.req.param("id"));
    const file = join(run.runsDir, run.id, JOB_LOG_FILE);
    if (!existsSync(file))
      throw new NotFoundError(
        `run ${run.id} has no job log: only a run on a Ray cluster (cluster.jobsUrl) keeps one`,
      );
    const lines = (await readFile(file, "utf8")).split("\n");
    const { tail } = query.data;
    return c.json({ logs: withoutServerPaths(lines.slice(-tail).join("\n"), run.runsDir) });
  });

  app.post("/runs", async (c) => {
    const parsed = RunRequest.safeParse(await readJson(c, deps.maxBodyBytes));
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const run = await queueRun(deps.db, c.get("tenantId"), parsed.data, {
      artifactsDir: deps.artifactsDir,
      trigger: TENANT_TRIGGER,
    });
    return c.json(tenantRun(run), 201);
  });

  app.post("/runs/:id/cancel", async (c) =>
    c.json(tenantRun(await requestCancel(deps.db, c.get("tenantId"), c.req.param("id")))),
  );

  app.get("/orchestrator", async (c) =>
    c.json(await tenantOrchestratorStatus(deps.db, c.get("tenantId"), deps.config, deps.judgeUpstreams)),
  );

  return app;
}
