import { InvalidInputError } from "@arc/core";
import type { PatternTeachingStatus } from "../../teach/teaching-runtime.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";

const help = `arc teaching — put a tenant's traffic, or some failure patterns' traffic, under a teacher model

The gateway answers each non-streamed request with the adaptive teaching protocol: the student (the
deployed model) states its approach, the teacher diagnoses it and teaches only as much as needed, the
student answers with the guidance. Every phase is a step of the request's trace. A share of taught
requests also runs the student alone, so each pattern's Non-Degradation Rate is watched live; a pattern
whose NDR falls below its gate is switched off (audit-logged) until you reset it.

Usage:
  arc teaching show [--json]
  arc teaching set --teacher <model> [--mode adaptive|always|off] [--patterns <id,id>] [--baseline-share 0.1] [--ndr-gate 0.99]
  arc teaching off
  arc teaching reset <pattern-id>

  show    the config and each pattern's teaching fix: on/off, live NDR, why it was switched off
  set     teach with this teacher (a model version id or name: \`arc models ls\`)
  off     stop teaching
  reset   switch a pattern's teaching back on after the NDR monitor switched it off

Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

interface Status {
  config: { teacher: string; mode: string; patterns?: string[]; baselineShare: number } | null;
  patterns: PatternTeachingStatus[];
}

function printStatus(status: Status): void {
  if (!status.config) {
    console.log("teaching: off (no teacher configured)");
    return;
  }
  const c = status.config;
  console.log(
    `teaching: mode ${c.mode}, teacher ${c.teacher}, ${c.patterns ? `patterns ${c.patterns.join(", ")}` : "all traffic"}, baseline share ${c.baselineShare}`,
  );
  printTable(
    ["PATTERN", "TEACHING", "NDR", "SAMPLES", "WHY"],
    status.patterns.map((p) => [
      p.patternId,
      p.teaching ? "on" : "off",
      p.decision?.ndr === null || p.decision === null ? "-" : p.decision.ndr.toFixed(3),
      p.decision?.samples ?? 0,
      p.switchedOff
        ? `switched off ${p.switchedOff.at}: ${p.switchedOff.decision.reason}`
        : (p.decision?.reason ?? ""),
    ]),
  );
}

/** `arc teaching`: a tenant's run-time teaching config and each pattern's live NDR. */
export const teachingCommand: Command = {
  name: "teaching",
  summary:
    "put traffic or failure patterns under a teacher model; show each pattern's teaching fix and NDR (tenant)",
  help,
  flags: {
    ...CLIENT_FLAGS,
    teacher: "string",
    mode: "string",
    patterns: "string",
    "baseline-share": "string",
    "ndr-gate": "string",
    json: "boolean",
  },
  async run(args) {
    const [action, id] = args.positionals;
    const client = arcClient(args, "tenant");
    let status: Status;
    if (action === "show" || action === undefined)
      status = await client.request<Status>("GET", "/v1/teaching");
    else if (action === "set") {
      const teacher = stringFlag(args, "teacher");
      if (!teacher)
        throw new InvalidInputError("--teacher: expected a model version id or name", { field: "teacher" });
      const patterns = stringFlag(args, "patterns");
      const share = stringFlag(args, "baseline-share");
      const gate = stringFlag(args, "ndr-gate");
      status = await client.request<Status>("PUT", "/v1/teaching", {
        teacher,
        mode: stringFlag(args, "mode", "adaptive"),
        ...(patterns ? { patterns: patterns.split(",").filter(Boolean) } : {}),
        ...(share === undefined ? {} : { baselineShare: Number(share) }),
        ...(gate === undefined ? {} : { ndr: { gate: Number(gate) } }),
      });
    } else if (action === "off") status = await client.request<Status>("DELETE", "/v1/teaching");
    else if (action === "reset") {
      if (!id)
        throw new InvalidInputError("reset: expected a pattern id, e.g. arc teaching reset p-12", {
          field: "id",
        });
      status = await client.request<Status>("POST", `/v1/teaching/patterns/${encodeURIComponent(id)}/reset`);
    } else {
      console.error(help);
      return 2;
    }
    if (args.flags.json) console.log(JSON.stringify(status, null, 2));
    else printStatus(status);
    return 0;
  },
};
