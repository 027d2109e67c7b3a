import { writeFile } from "node:fs/promises";
import { InvalidInputError } from "@arc/core";
import type { DatasetInfo, StoredDataset } from "../../failures/dataset-store.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { type ParsedArgs, stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";

const help = `arc datasets — turn failure patterns into versioned, immutable datasets, and export them

Usage:
  arc datasets create --kind eval|prompts|preferences [--from-patterns <id,id,...>|all] [--seed 0]
                      [--size 256] [--failure-sampling-ratio 0.8] [--failure-sampling proportional]
                      [--per-pattern 20] [--general-size 50] [--json]
  arc datasets ls [--kind eval|prompts|preferences] [--json]
  arc datasets show <dataset-id> [--rows 5] [--json]
  arc datasets export <dataset-id> --format jsonl|chat|preferences|verl-parquet --out <file>

Kinds:
  eval         held-out items to judge models on: up to --per-pattern de-duplicated failures per pattern plus a
               general regression slice of --general-size passed production traces; never overlaps what you train on
  prompts      prompts to train on: --size prompts, a --failure-sampling-ratio share from failures (balanced
               across patterns, or --failure-sampling proportional: each failed prompt once, as the traffic had
               them, for SFT), the rest replayed from passed traces; never an eval question
  preferences  (prompt, chosen, rejected) pairs: rejected = the failed output, chosen = a correction a user left
               as feedback ({"correction": ...} on POST /v1/feedback) that passes the env's verifier

--from-patterns takes pattern ids (see \`arc patterns ls\`) or "all" (the default). Only failures with a reference
solution (trace metadata.solution) become eval or prompt rows. A dataset's version is the hash of its content:
the same patterns, traces and --seed give the same dataset (create answers with the existing one), new data a new
one. Every row names the production traces it came from (meta.sourceTraceIds).

Formats: jsonl (question/solution/env/meta; eval, prompts), chat (chat fine-tune JSONL), preferences
(prompt/chosen/rejected JSONL; preferences), verl-parquet (VERL's columns; eval, prompts).
Options: --url (ARC_URL), --key (ARC_API_KEY; default: the tenant key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

function numberFlag(args: ParsedArgs, name: string): number | undefined {
  const value = stringFlag(args, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n))
    throw new InvalidInputError(`--${name} expects a number, got "${value}"`, { field: name });
  return n;
}

function createRequest(args: ParsedArgs): Record<string, unknown> {
  const kind = stringFlag(args, "kind");
  if (!kind)
    throw new InvalidInputError("--kind is required: eval, prompts or preferences", { field: "kind" });
  const from = stringFlag(args, "from-patterns", "all") as string;
  const request: Record<string, unknown> = {
    kind,
    fromPatterns:
      from === "all"
        ? "all"
        : from
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
  };
  const numeric: [string, string][] = [
    ["seed", "seed"],
    ["size", "size"],
    ["failure-sampling-ratio", "failureSamplingRatio"],
    ["per-pattern", "perPattern"],
    ["general-size", "generalSize"],
  ];
  for (const [flag, field] of numeric) {
    const value = numberFlag(args, flag);
    if (value !== undefined) request[field] = value;
  }
  const sampling = stringFlag(args, "failure-sampling");
  if (sampling !== undefined) request.failureSampling = sampling;
  return request;
}

function summary(d: DatasetInfo): string {
  const stats = Object.entries(d.stats)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k}=${n}`)
    .join(" ");
  return [
    `dataset ${d.id}  kind=${d.kind}  rows=${d.rowCount}  seed=${d.seed}`,
    `  version ${d.version}`,
    `  from ${d.patternIds.length} patterns, ${d.sourceTraceIds.length} production traces; made by ${d.createdBy} at ${d.createdAt}`,
    `  stats: ${stats || "-"}`,
  ].join("\n");
}

/** `arc datasets`: synthesize datasets from failure patterns and export them for training. */
export const datasetsCommand: Command = {
  name: "datasets",
  summary: "create, list, show and export datasets made from failure patterns (tenant)",
  help,
  flags: {
    ...CLIENT_FLAGS,
    kind: "string",
    "from-patterns": "string",
    seed: "string",
    size: "string",
    "failure-sampling-ratio": "string",
    "failure-sampling": "string",
    "per-pattern": "string",
    "general-size": "string",
    rows: "string",
    format: "string",
    out: "string",
    json: "boolean",
  },
  async run(args) {
    const [action, id] = args.positionals;
    const client = arcClient(args, "tenant");
    if (action === "create") {
      const made = await client.request<DatasetInfo & { created: boolean }>(
        "POST",
        "/v1/datasets",
        createRequest(args),
      );
      if (args.flags.json) console.log(JSON.stringify(made, null, 2));
      else {
        console.log(made.created ? "created" : "unchanged: a dataset with exactly this content exists");
        console.log(summary(made));
        console.log(
          `export: arc datasets export ${made.id} --format ${made.kind === "preferences" ? "preferences" : "jsonl"} --out <file>`,
        );
      }
      return 0;
    }
    if (action === "ls" || action === "list") {
      const kind = stringFlag(args, "kind");
      const page = await client.request<{ data: DatasetInfo[] }>(
        "GET",
        `/v1/datasets${kind ? `?kind=${encodeURIComponent(kind)}` : ""}`,
      );
      if (args.flags.json) console.log(JSON.stringify(page, null, 2));
      else
        printTable(
          ["ID", "KIND", "ROWS", "PATTERNS", "TRACES", "SEED", "CREATED", "BY"],
          page.data.map((d) => [
            d.id,
            d.kind,
            d.rowCount,
            d.patternIds.length,
            d.sourceTraceIds.length,
            d.seed,
            d.createdAt,
            d.createdBy,
          ]),
        );
      return 0;
    }
    if (action === "show") {
      if (!id) throw new InvalidInputError("usage: arc datasets show <dataset-id> (ids: arc datasets ls)");
      const dataset = await client.request<StoredDataset>("GET", `/v1/datasets/${encodeURIComponent(id)}`);
      if (args.flags.json) {
        console.log(JSON.stringify(dataset, null, 2));
        return 0;
      }
      console.log(summary(dataset));
      const n = Number(stringFlag(args, "rows", "5"));
      for (const row of dataset.rows.slice(0, n)) console.log(`- ${JSON.stringify(row).slice(0, 300)}`);
      if (dataset.rows.length > n)
        console.log(`(${dataset.rows.length - n} more rows; --rows N or --json to see them)`);
      return 0;
    }
    if (action === "export") {
      const format = stringFlag(args, "format");
      const out = stringFlag(args, "out");
      if (!id || !format || !out) {
        throw new InvalidInputError(
          "usage: arc datasets export <dataset-id> --format jsonl|chat|preferences|verl-parquet --out <file>",
        );
      }
      const bytes = await client.download(
        `/v1/datasets/${encodeURIComponent(id)}/export?format=${encodeURIComponent(format)}`,
      );
      await writeFile(out, bytes);
      console.log(`wrote ${out} (${bytes.byteLength} bytes, ${format})`);
      return 0;
    }
    throw new InvalidInputError(
      `unknown action "${action ?? ""}": expected create, ls, show or export (see arc datasets --help)`,
    );
  },
};
