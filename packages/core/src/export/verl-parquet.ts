import { parquetWriteBuffer } from "hyparquet-writer";
import { InvalidInputError } from "../errors/arc-error.ts";
import { familyPrompt, type TaskFamilyRegistry, taskFamilies } from "../families/index.ts";
import { type ContentImage, type EvalRow, imageBytes, type PromptRow } from "../synth/index.ts";
import type { ChatMessage } from "../trace/index.ts";

/** Options of a VERL export. */
export interface VerlExportOptions {
  /** `extra_info.split`, e.g. `train` or `test`. */
  split: string;
  /** `data_source` of every row (default `arc/<env>`, which selects the reward function in VERL). */
  dataSource?: string;
  /** `ability` of every row (default: the row's family's `ability`, else `agent`). */
  ability?: string;
  /** The families that prompt the rows without a recorded prompt (default: the process's). */
  families?: TaskFamilyRegistry;
  /** The stored images the rows' prompts refer to (`arc-image:` references), for the `images` column. */
  images?: ReadonlyMap<string, ContentImage>;
}

const text = (name: string, repetition: "REQUIRED" | "OPTIONAL" = "REQUIRED") => ({
  name,
  type: "BYTE_ARRAY" as const,
  converted_type: "UTF8" as const,
  repetition_type: repetition,
});

/**
 * The parquet schema of VERL's RL dataset rows (flattened depth-first, as the parquet footer stores it); with
 * images, an `images` column as HF `datasets` writes a list of images: `{bytes, path}` each.
 */
const schema = (withImages: boolean) => [
  { name: "root", num_children: withImages ? 6 : 5 },
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
  ...(withImages
    ? [
        { name: "images", repetition_type: "REQUIRED", num_children: 1, converted_type: "LIST" },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { name: "element", repetition_type: "REQUIRED", num_children: 2 },
        { name: "bytes", type: "BYTE_ARRAY", repetition_type: "REQUIRED" },
        text("path", "OPTIONAL"),
      ]
    : []),
];

/** A message's content as the text of VERL's `prompt` list: text parts joined, an image part as `<image>`. */
function contentText(message: ChatMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      part.type === "text" ? String(part.text ?? "") : part.type === "image_url" ? "<image>" : "",
    )
    .join("");
}

/** The chat a row prompts with: the agent's recorded prompt, else its family's, else the question alone. */
function promptOf(row: EvalRow | PromptRow, families: TaskFamilyRegistry): ChatMessage[] {
  if (row.context) return row.context.messages;
  if (row.env === undefined) return [{ role: "user", content: row.question }];
  const task = { id: row.id, env: row.env, question: row.question, solution: row.solution };
  return familyPrompt(families.get(row.env), task);
}

/**
 * VERL parquet (the layout of `verl.trainer.main_ppo` data files): `data_source`, `prompt` as the whole chat list
 * (the agent's recorded prompt where there is one; each image an `<image>` in its text), `ability`,
 * `reward_model {style, ground_truth}` (`rule` with the solution as JSON, or `model` for a reference-free row),
 * `extra_info` (split, index, id, question, pattern id and source trace ids for lineage), and when any prompt has
 * images, `images`: each row's images in the order of its `<image>`s, as VERL's multimodal datasets hold them.
 * Pure: returns the file's bytes.
 */
export function toVerlParquet(
  rows: readonly (EvalRow | PromptRow)[],
  options: VerlExportOptions,
): Uint8Array {
  const families = options.families ?? taskFamilies;
  const abilities = rows.map((r) => (r.env === undefined ? undefined : families.get(r.env).ability));
  const prompts = rows.map((r) => promptOf(r, families));
  const images = prompts.map((p, i) => {
    try {
      return imageBytes(p, options.images ?? new Map());
    } catch (error) {
      if (error instanceof InvalidInputError)
        throw new InvalidInputError(`rows[${i}] (${rows[i].id}): ${error.message}`, { field: "images" });
      throw error;
    }
  });
  const withImages = images.some((list) => list.length > 0);
  const buffer = parquetWriteBuffer({
    columnData: [
      { name: "data_source", data: rows.map((r) => options.dataSource ?? `arc/${r.env ?? "agent"}`) },
      { name: "prompt", data: prompts.map((p) => p.map((m) => ({ role: m.role, content: contentText(m) }))) },
      { name: "ability", data: abilities.map((a) => options.ability ?? a ?? "agent") },
      {
        name: "reward_model",
        data: rows.map((r) =>
          r.solution === undefined
            ? { style: "model", ground_truth: "null" }
            : { style: "rule", ground_truth: JSON.stringify(r.solution) },
        ),
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
      ...(withImages
        ? [{ name: "images", data: images.map((list) => list.map((bytes) => ({ bytes, path: null }))) }]
        : []),
    ],
    schema: schema(withImages) as unknown as Parameters<typeof parquetWriteBuffer>[0]["schema"],
    createdBy: "arc",
  });
  return new Uint8Array(buffer);
}
