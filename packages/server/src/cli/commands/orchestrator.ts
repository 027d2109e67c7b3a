import { InvalidInputError } from "@arc/core";
import type { TenantOrchestratorStatus } from "../../orchestrator/orchestrator.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { orchestratorLine } from "./runs.ts";

const help = `arc orchestrator — whether the server will train on the tenant's failures by itself, and when

Usage:
  arc orchestrator status [--json]   on/off, thresholds, new failures since the last run, production model, why (not) due

The orchestrator runs inside arc serve. ARC_ORCHESTRATOR=1 turns its trigger on (off by default);
ARC_ORCHESTRATOR_MIN_FAILURES, ARC_ORCHESTRATOR_COOLDOWN_S, ARC_ORCHESTRATOR_MAX_JOBS, ARC_ORCHESTRATOR_RECIPE and
ARC_ORCHESTRATOR_OVERRIDES tune it. Queued runs (arc runs start) are trained either way.

Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

/** `arc orchestrator`: what the training orchestrator is doing for the tenant. */
export const orchestratorCommand: Command = {
  name: "orchestrator",
  summary: "the training orchestrator's status for the tenant (tenant)",
  help,
  flags: { ...CLIENT_FLAGS, json: "boolean" },
  async run(args) {
    const [action] = args.positionals;
    if (action !== "status") {
      throw new InvalidInputError(
        `unknown action "${action ?? ""}": expected status (see arc orchestrator --help)`,
      );
    }
    const status = await arcClient(args, "tenant").request<TenantOrchestratorStatus>(
      "GET",
      "/v1/orchestrator",
    );
    if (args.flags.json === true) console.log(JSON.stringify(status, null, 2));
    else {
      console.log(orchestratorLine(status));
      console.log(
        `  new failures ${status.newFailures} (the next run trains ${status.env ?? "the recipe's family"}${status.reward === "judge" ? ", rewarded by your judge" : ""}), last run ${status.lastRunAt ?? "never"}, production model ${status.productionModelId ?? "-"}, active runs ${status.activeRuns}`,
      );
    }
    return 0;
  },
};
