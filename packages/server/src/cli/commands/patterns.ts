import { type FailurePattern, InvalidInputError } from "@arc/core";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";

const help = `arc patterns — the failure patterns Arc found in your production traces

Every trace you send is judged by the detectors (a verifier for its env, refusal, truncation, empty output,
tool loops, model errors, latency, user feedback) once it has been quiet for a moment; each failure joins a
pattern of similar failures. A pattern keeps its id as it grows.

Usage:
  arc patterns ls [--model-version <v>] [--class <failure class>] [--limit 50] [--json]
  arc patterns show <pattern-id> [--json]

  ls     patterns, largest first: id, count, label (class: tool/path or topic), seen first/last, per model version
  show   one pattern: counts per day and model version, example failures with their evidence, recent traces

Next: make training data from patterns with \`arc datasets create --from-patterns <ids|all> --kind eval\`.
Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

const counts = (record: Record<string, number>) =>
  Object.entries(record)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k}=${n}`)
    .join(" ");

function printPattern(p: FailurePattern & { recentTraces: { traceId: string; startedAt: string }[] }): void {
  console.log(`pattern ${p.id}  ${p.label}`);
  console.log(`  ${p.count} failures, first ${p.firstSeen}, last ${p.lastSeen}`);
  console.log(`  by model version: ${counts(p.countsByModelVersion)}`);
  console.log(`  by env:           ${counts(p.countsByEnv)}`);
  console.log(`  by day:           ${counts(p.countsByDay)}`);
  if (p.topTerms.length) console.log(`  request terms:    ${p.topTerms.join(", ")}`);
  console.log("examples:");
  for (const e of p.examples) {
    console.log(`- trace ${e.traceId} (${e.modelVersion ?? "unknown version"})`);
    console.log(`    asked:    ${e.question}`);
    if (e.output) console.log(`    answered: ${e.output}`);
    if (e.evidence) console.log(`    why:      ${e.evidence}`);
  }
  console.log(`recent traces: ${p.recentTraces.map((t) => t.traceId).join(", ")}`);
  console.log(`(arc traces show <trace-id> shows one in full)`);
}

/** `arc patterns`: the failure patterns found in production traces. */
export const patternsCommand: Command = {
  name: "patterns",
  summary: "list and show failure patterns found in production traces (tenant)",
  help,
  flags: { ...CLIENT_FLAGS, "model-version": "string", class: "string", limit: "string", json: "boolean" },
  async run(args) {
    const [action, id] = args.positionals;
    const client = arcClient(args, "tenant");
    if (action === "ls" || action === "list") {
      const query = new URLSearchParams({ limit: stringFlag(args, "limit", "50") as string });
      const version = stringFlag(args, "model-version");
      if (version) query.set("modelVersion", version);
      const failureClass = stringFlag(args, "class");
      if (failureClass) query.set("class", failureClass);
      const page = await client.request<{
        data: FailurePattern[];
        verdicts: Record<string, number>;
        pending: number;
      }>("GET", `/v1/patterns?${query}`);
      if (args.flags.json) {
        console.log(JSON.stringify(page, null, 2));
        return 0;
      }
      printTable(
        ["ID", "COUNT", "LABEL", "FIRST SEEN", "LAST SEEN", "BY MODEL VERSION"],
        page.data.map((p) => [
          p.id,
          p.count,
          p.label,
          p.firstSeen,
          p.lastSeen,
          counts(p.countsByModelVersion),
        ]),
      );
      const judged = Object.entries(page.verdicts)
        .map(([status, n]) => `${n} ${status}`)
        .join(", ");
      console.log(`traces judged: ${judged || "none yet"}; waiting to be judged: ${page.pending}`);
      return 0;
    }
    if (action === "show") {
      if (!id) throw new InvalidInputError("usage: arc patterns show <pattern-id> (ids: arc patterns ls)");
      const pattern = await client.request<
        FailurePattern & { recentTraces: { traceId: string; startedAt: string }[] }
      >("GET", `/v1/patterns/${encodeURIComponent(id)}`);
      if (args.flags.json) console.log(JSON.stringify(pattern, null, 2));
      else printPattern(pattern);
      return 0;
    }
    throw new InvalidInputError(
      `unknown action "${action ?? ""}": expected ls or show (see arc patterns --help)`,
    );
  },
};
