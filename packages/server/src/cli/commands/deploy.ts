import { InvalidInputError } from "@arc/core";
import type { Deployment } from "../../deploy/deployment-store.ts";
import type { AuditEntry } from "../../store/audit-log.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";

const help = `arc deploy — canary deployments: status, start, promote, roll back

Usage:
  arc deploy status [<deployment-id>] [--json]   the running canary (share, stage, live failure rates, last decision)
  arc deploy start <model>                       start a canary of a validated or approved model now
  arc deploy promote [<deployment-id>] [--reason "..."]
  arc deploy rollback [<deployment-id>] [--reason "..."]
Without an id, promote/rollback act on the running canary. Every transition goes to the audit log with your key as actor.

Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

type Rates = { arm: string; stage: number; n: number; failures: number }[];

function printRates(rates: Rates): void {
  printTable(
    ["STAGE", "ARM", "JUDGED", "FAILED", "FAILURE RATE"],
    rates.map((r) => [
      r.stage,
      r.arm,
      r.n,
      r.failures,
      r.n ? `${((r.failures / r.n) * 100).toFixed(1)}%` : "-",
    ]),
  );
}

/** `arc deploy`: watch and steer a canary deployment. */
export const deployCommand: Command = {
  name: "deploy",
  summary: "canary deployments: status, start, promote, rollback (tenant)",
  help,
  flags: { ...CLIENT_FLAGS, reason: "string", json: "boolean" },
  async run(args) {
    const [action, id] = args.positionals;
    const client = arcClient(args, "tenant");
    const json = args.flags.json === true;
    const running = async () => {
      const { active } = await client.request<{ active: Deployment | null }>("GET", "/v1/deployments");
      if (!active) throw new InvalidInputError("no canary is running; name a deployment id");
      return active.id;
    };
    if (action === "status" || action === undefined) {
      if (id) {
        const shown = await client.request<{
          deployment: Deployment;
          failureRates: Rates;
          audit: AuditEntry[];
        }>("GET", `/v1/deployments/${encodeURIComponent(id)}`);
        if (json) console.log(JSON.stringify(shown, null, 2));
        else {
          const d = shown.deployment;
          console.log(
            `deployment ${d.id}  ${d.status}  candidate ${d.candidateId} vs ${d.controlId}  share ${d.share * 100}%`,
          );
          printRates(shown.failureRates);
          for (const a of shown.audit)
            console.log(
              `  ${a.at}  ${a.actor}  ${a.action}  ${a.toState ?? ""}  ${String(a.evidence.reason ?? "")}`,
            );
        }
        return 0;
      }
      const status = await client.request<{
        active: (Deployment & { failureRates: Rates }) | null;
        recent: Deployment[];
      }>("GET", "/v1/deployments");
      if (json) {
        console.log(JSON.stringify(status, null, 2));
        return 0;
      }
      const a = status.active;
      if (a) {
        console.log(
          `canary ${a.id}: ${a.candidateId} at ${a.share * 100}% (stage ${a.stage + 1} of ${a.policy.ramp.length}) vs ${a.controlId}`,
        );
        if (a.lastStep)
          console.log(`  last decision: ${String(a.lastStep.action)} — ${String(a.lastStep.reason)}`);
        printRates(a.failureRates);
      } else console.log("no canary running");
      console.log("recent deployments:");
      printTable(
        ["ID", "STATUS", "CANDIDATE", "CONTROL", "SHARE", "UPDATED"],
        status.recent.map((d) => [
          d.id,
          d.status,
          d.candidateId,
          d.controlId,
          `${d.share * 100}%`,
          d.updatedAt,
        ]),
      );
      return 0;
    }
    if (action === "start") {
      if (!id) throw new InvalidInputError("usage: arc deploy start <model>");
      const d = await client.request<Deployment>("POST", "/v1/deployments", { candidate: id });
      console.log(json ? JSON.stringify(d, null, 2) : `canary ${d.id} started at ${d.share * 100}%`);
      return 0;
    }
    if (action === "promote" || action === "rollback") {
      const target = id ?? (await running());
      const reason = stringFlag(args, "reason");
      const d = await client.request<Deployment>(
        "POST",
        `/v1/deployments/${encodeURIComponent(target)}/${action}`,
        reason ? { reason } : {},
      );
      console.log(json ? JSON.stringify(d, null, 2) : `deployment ${d.id} is now ${d.status}`);
      return 0;
    }
    throw new InvalidInputError(
      `unknown action "${action}": expected status, start, promote or rollback (see arc deploy --help)`,
    );
  },
};
