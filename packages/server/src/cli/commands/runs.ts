import { InvalidInputError } from "@arc/core";
import type { StepRecord } from "@arc/rl";
import { DEFAULT_RECIPE_NAME } from "../../orchestrator/default-recipe.ts";
import type { TenantOrchestratorStatus } from "../../orchestrator/orchestrator.ts";
import type { TenantRun } from "../../orchestrator/run-store.ts";
import { type ArcClient, arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";

const help = `arc runs — a tenant's training runs on the server (the orchestrator's and those started by hand)

Usage:
  arc runs ls [--status queued,running,...] [--json]   runs, newest first, and the orchestrator's status
  arc runs show <id> [--json]                          progress, metrics, lineage, the last steps
  arc runs start [recipe] [key=value ...] [--json]     queue a run of a shipped recipe (default ${DEFAULT_RECIPE_NAME})
                                                       from the production model on the tenant's failures
  arc runs cancel <id>                                 stop it after its current step (no candidate)
  arc runs logs <id> [--tail 200]                      the last lines of a run's Ray job log (cluster.jobsUrl)

Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

const num = (x: unknown, digits = 3) => (typeof x === "number" ? x.toFixed(digits) : "-");

/** One line saying whether and when the orchestrator would start the tenant's next run. */
export function orchestratorLine(s: TenantOrchestratorStatus): string {
  return `orchestrator: ${s.enabled ? "on" : "off"} (min ${s.minNewFailures} new failures, cooldown ${Math.round(s.cooldownMs / 1000)} s, ${s.maxParallelJobs} job(s) per server, ${s.recipe}); ${s.due ? "due: " : ""}${s.reason}`;
}

/** `arc runs`: training runs on the server. */
export const runsCommand: Command = {
  name: "runs",
  summary: "list, show, start and cancel training runs on the server (tenant)",
  help,
  flags: { ...CLIENT_FLAGS, status: "string", json: "boolean", tail: "string" },
  async run(args) {
    const [action, ...rest] = args.positionals;
    const client = arcClient(args, "tenant");
    const json = args.flags.json === true;
    if (action === "ls" || action === "list") return listRuns(client, stringFlag(args, "status"), json);
    if (action === "start") return startRun(client, rest, json);
    const id = rest[0];
    if (!id) throw new InvalidInputError(`usage: arc runs ${action ?? "<ls|show|start|cancel|logs>"} <id>`);
    const path = `/v1/runs/${encodeURIComponent(id)}`;
    if (action === "show") return showRun(client, path, json);
    if (action === "logs") return printRunLogs(client, path, stringFlag(args, "tail"));
    if (action === "cancel") return cancelRun(client, path, json);
    throw new InvalidInputError(
      `unknown action "${action ?? ""}": expected ls, show, start, cancel or logs (see arc runs --help)`,
    );
  },
};

/** `arc runs ls`: the runs as a table (or JSON), then the orchestrator's line. */
async function listRuns(client: ArcClient, status: string | undefined, json: boolean): Promise<number> {
  const listed = await client.request<{ data: TenantRun[]; orchestrator: TenantOrchestratorStatus }>(
    "GET",
    `/v1/runs${status ? `?status=${encodeURIComponent(status)}` : ""}`,
  );
  if (json) {
    console.log(JSON.stringify(listed, null, 2));
    return 0;
  }
  printTable(
    ["ID", "STATUS", "TRIGGER", "STEP", "REWARD", "HELD-OUT FAIL", "CANDIDATE", "CREATED"],
    listed.data.map((r) => [
      r.id,
      r.status,
      r.trigger,
      `${r.step}/${r.totalSteps ?? "?"}`,
      num(r.metrics.reward),
      `${num(r.metrics.heldOutFailureRateStart, 2)} -> ${num(r.metrics.heldOutFailureRate, 2)}`,
      r.candidateId,
      r.createdAt,
    ]),
  );
  console.log(orchestratorLine(listed.orchestrator));
  return 0;
}

/** `arc runs start [recipe] [key=value ...]`: queues a run of a shipped recipe. */
async function startRun(client: ArcClient, rest: string[], json: boolean): Promise<number> {
  const [recipe, ...overrides] = rest[0]?.includes("=") ? [undefined, ...rest] : rest;
  const run = await client.request<TenantRun>("POST", "/v1/runs", {
    ...(recipe ? { recipe: recipe.replace(/^recipes\//, "").replace(/\.yaml$/, "") } : {}),
    overrides,
  });
  console.log(
    json
      ? JSON.stringify(run, null, 2)
      : `run ${run.id} queued (${run.recipePath}); a server's orchestrator starts it: arc runs show ${run.id}`,
  );
  return 0;
}

/** `arc runs show <id>`: the run's progress, recipe, lineage and metrics, then its last ten steps. */
async function showRun(client: ArcClient, path: string, json: boolean): Promise<number> {
  const shown = await client.request<{ run: TenantRun; records: StepRecord[] }>("GET", path);
  if (json) {
    console.log(JSON.stringify(shown, null, 2));
    return 0;
  }
  const r = shown.run;
  console.log(`run ${r.id}  status=${r.status}  step ${r.step}/${r.totalSteps ?? "?"}  trigger=${r.trigger}`);
  console.log(`  recipe ${r.recipePath} ${r.overrides.join(" ")}  ${r.recipeHash ?? ""}`);
  console.log(`  base model ${r.baseModelId ?? "-"}  candidate ${r.candidateId ?? "-"}`);
  console.log(
    `  datasets ${r.datasets.map((d) => `${d.kind} ${d.id} (${d.rows})`).join(", ") || "-"}; ${r.patterns.length} patterns, ${r.sourceTraceCount} traces`,
  );
  console.log(`  metrics ${JSON.stringify(r.metrics)}`);
  console.log(
    `  created ${r.createdAt}  started ${r.startedAt ?? "-"}  ended ${r.endedAt ?? "-"}  attempts ${r.attempts}`,
  );
  if (r.error) console.log(`  error ${r.error}`);
  printTable(
    ["STEP", "LOSS", "REWARD", "ACCURACY", "HELD-OUT FAIL", "TOK/S"],
    shown.records
      .slice(-10)
      .map((s) => [
        s.step,
        num(s.loss),
        num(s.reward),
        num(s.accuracy),
        num(s.evalFailureRate, 2),
        num(s.tokensPerSecond, 0),
      ]),
  );
  return 0;
}

/** `arc runs logs <id>`: the last lines of the run's Ray job log. */
async function printRunLogs(client: ArcClient, path: string, tail: string | undefined): Promise<number> {
  const { logs } = await client.request<{ logs: string }>(
    "GET",
    `${path}/logs${tail ? `?tail=${encodeURIComponent(tail)}` : ""}`,
  );
  console.log(logs);
  return 0;
}

/** `arc runs cancel <id>`: stops the run after its current step. */
async function cancelRun(client: ArcClient, path: string, json: boolean): Promise<number> {
  const run = await client.request<TenantRun>("POST", `${path}/cancel`, {});
  console.log(
    json
      ? JSON.stringify(run, null, 2)
      : run.status === "cancelled"
        ? `run ${run.id} cancelled`
        : `run ${run.id} stops after its current step`,
  );
  return 0;
}
