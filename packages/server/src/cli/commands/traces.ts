import { InvalidInputError, type Trace } from "@arc/core";
import type { TraceSummary } from "../../store/trace-store.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";

const help = `arc traces — look at a tenant's traces

Usage:
  arc traces ls [--from <iso>] [--to <iso>] [--model <m>] [--status ok|error|unknown] [--q <text>]
                [--limit 20] [--cursor <c>] [--json]
  arc traces show <trace-id> [--json]

Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

function excerpt(value: unknown, width = 70): string {
  const text = (typeof value === "string" ? value : JSON.stringify(value ?? "")).replace(/\s+/g, " ");
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

function printTrace(trace: Trace & { feedback?: { id: string; score?: number; label?: string }[] }): void {
  console.log(`trace ${trace.id}  ${trace.name ?? ""}  status=${trace.status}  started ${trace.startedAt}`);
  if (trace.userId || trace.sessionId)
    console.log(`  user=${trace.userId ?? "-"} session=${trace.sessionId ?? "-"}`);
  for (const step of trace.steps) {
    const latency = step.latencyMs === undefined ? "" : ` ${step.latencyMs.toFixed(0)}ms`;
    console.log(
      `- ${step.kind} ${step.name ?? ""} [${step.id}]${latency}${step.error ? ` ERROR ${step.error.message}` : ""}`,
    );
    if (step.llm) {
      const model = [step.llm.modelRequested, step.llm.modelServed].filter(Boolean).join(" → ");
      console.log(`    model ${model || "?"}  finish=${step.llm.finishReason ?? "?"}`);
      const last = step.llm.messages.at(-1);
      if (last) console.log(`    ${last.role}: ${excerpt(last.content)}`);
      const calls = step.llm.output?.toolCalls?.map((c) => `${c.function.name}(${c.function.arguments})`);
      console.log(`    output: ${excerpt(calls?.length ? calls.join(", ") : step.llm.output?.content)}`);
    } else if (step.input !== undefined || step.output !== undefined) {
      console.log(`    in: ${excerpt(step.input)}  out: ${excerpt(step.output)}`);
    }
  }
  for (const f of trace.feedback ?? [])
    console.log(`feedback ${f.id}: score=${f.score ?? "-"} label=${f.label ?? "-"}`);
}

/** `arc traces`: list and read stored traces. */
export const tracesCommand: Command = {
  name: "traces",
  summary: "list and show traces (tenant)",
  help,
  flags: {
    ...CLIENT_FLAGS,
    from: "string",
    to: "string",
    model: "string",
    status: "string",
    q: "string",
    limit: "string",
    cursor: "string",
    json: "boolean",
  },
  async run(args) {
    const [action, id] = args.positionals;
    const client = arcClient(args, "tenant");
    if (action === "ls" || action === "list") {
      const query = new URLSearchParams();
      for (const name of ["from", "to", "model", "status", "q", "cursor"]) {
        const value = stringFlag(args, name);
        if (value !== undefined) query.set(name, value);
      }
      query.set("limit", stringFlag(args, "limit", "20") as string);
      const page = await client.request<{ data: TraceSummary[]; nextCursor: string | null }>(
        "GET",
        `/v1/traces?${query}`,
      );
      if (args.flags.json) {
        console.log(JSON.stringify(page, null, 2));
        return 0;
      }
      printTable(
        ["STARTED", "ID", "NAME", "STATUS", "STEPS", "MODELS"],
        page.data.map((t) => [t.startedAt, t.id, t.name, t.status, t.stepCount, t.models.join(",")]),
      );
      if (page.nextCursor) console.log(`more: arc traces ls --cursor ${page.nextCursor}`);
      return 0;
    }
    if (action === "show") {
      if (!id) throw new InvalidInputError("usage: arc traces show <trace-id>");
      const trace = await client.request<Trace>("GET", `/v1/traces/${encodeURIComponent(id)}`);
      if (args.flags.json) console.log(JSON.stringify(trace, null, 2));
      else printTrace(trace);
      return 0;
    }
    throw new InvalidInputError(
      `unknown action "${action ?? ""}": expected ls or show (see arc traces --help)`,
    );
  },
};
