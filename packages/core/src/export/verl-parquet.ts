import { parquetWriteBuffer } from "hyparquet-writer";
import { getTaskFamily } from "../families/index.ts";
import type { EvalRow, PromptRow } from "../synth/index.ts";

/** Options of a VERL export. */
export interface VerlExportOptions {
  /** `extra_info.split`, e.g. `train` or `test`. */
  split: string;
  /** `data_source` of every row (default `arc/<env>`, which selects the reward function in VERL). */
  dataSource?: string;
  /** `ability` of every row (default by env: `tool_use` for toolcall and orderdesk, `math` for arith, else `agent`). */
  ability?: string;
}

const text = (name: string, repetition: "REQUIRED" | "OPTIONAL" = "REQUIRED") => ({
  name,
  type: "BYTE_ARRAY" as const,
  converted_type: "UTF8" as const,
  repetition_type: repetition,
});

/** The parquet schema of VERL's RL dataset rows (flattened depth-first, as the parquet footer stores it). */
const SCHEMA = [
  { name: "root", num_children: 5 },
  text("data_source"),
  { name: "prompt", repetition_type: "REQUIRED", num_children: 1, converted_type: "LIST" },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  { name: "element", repetition_type: "REQUIRED", num_children: 2 },
  text("role"),
  text("content"),
  text("ability"),
  { name: "reward_model", repetition_type: "REQUIRED", num_children: 2 },
  text("style"),
  text("ground_truth"),
  { name: "extra_info", repetition_type: "REQUIRED", num_children: 6 },
  text("split"),
  { name: "index", type: "INT32", repetition_type: "REQUIRED" },
  text("id"),
  text("question"),
  text("pattern_id", "OPTIONAL"),
  { name: "source_trace_ids", repetition_type: "REQUIRED", num_children: 1, converted_type: "LIST" },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  text("element"),
] as const;

/**
 * VERL parquet (the layout of `verl.trainer.main_ppo` data files): `data_source`, `prompt` as a chat list,
 * `ability`, `reward_model {style: "rule", ground_truth}` (the solution as JSON), `extra_info` (split, index,
 * id, question, pattern id and source trace ids for lineage). Pure: returns the file's bytes.
 */
export function toVerlParquet(
  rows: readonly (EvalRow | PromptRow)[],
  options: VerlExportOptions,
): Uint8Array {
  const families = rows.map((r) => getTaskFamily(r.env));
  const prompts = rows.map((r, i) =>
    families[i].prompt({ id: r.id, env: r.env, question: r.question, solution: r.solution }),
  );
  const buffer = parquetWriteBuffer({
    columnData: [
      { name: "data_source", data: rows.map((r) => options.dataSource ?? `arc/${r.env}`) },
      { name: "prompt", data: prompts.map((p) => p.map((m) => ({ role: m.role, content: m.content }))) },
      { name: "ability", data: families.map((f) => options.ability ?? f.ability ?? "agent") },
      {
        name: "reward_model",
        data: rows.map((r) => ({ style: "rule", ground_truth: JSON.stringify(r.solution) })),
      },
      {
        name: "extra_info",
        data: rows.map((r, index) => ({
          split: options.split,
          index,
          id: r.id,
          question: r.question,
          pattern_id: r.meta.patternId ?? null,
          source_trace_ids: r.meta.sourceTraceIds,
        })),
      },
    ],
    schema: SCHEMA as unknown as Parameters<typeof parquetWriteBuffer>[0]["schema"],
    createdBy: "arc",
  });
  return new Uint8Array(buffer);
}
