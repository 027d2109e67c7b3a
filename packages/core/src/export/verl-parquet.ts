import { parquetWriteBuffer } from "hyparquet-writer";
import { InvalidInputError } from "../errors/arc-error.ts";
import { familyPrompt, type TaskFamilyRegistry } from "../families/registry.ts";
import { taskFamilies } from "../families/task-families.ts";
import {
  type ContentImage,
  type EvalRow,
  imageBytes,
  type PromptContext,
  type PromptRow,
} from "../synth/index.ts";
import { toOpenAiTools } from "../tasks/tool-spec.ts";
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
  { name: "extra_info", repetition_type: "REQUIRED", num_children: 8 },
  text("split"),
  { name: "index", type: "INT32", repetition_type: "REQUIRED" },
  text("id"),
  text("question"),
  text("env", "OPTIONAL"),
  text("context", "OPTIONAL"),
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

/**
 * The chat a row prompts with and the tools it offers: the agent's recorded prompt, else its family's (with the
 * family's tools, as its agent offers them), else the question alone.
 */
function promptOf(row: EvalRow | PromptRow, families: TaskFamilyRegistry): PromptContext {
  if (row.context) return row.context;
  if (row.env === undefined) return { messages: [{ role: "user", content: row.question }] };
  const family = families.get(row.env);
  const task = { id: row.id, env: row.env, question: row.question, solution: row.solution };
  return {
    messages: familyPrompt(family, task),
    ...(family.tools?.length ? { tools: toOpenAiTools(family.tools) } : {}),
  };
}

/**
 * The tools section of a system prompt, as Qwen2.5's chat template writes it (Hermes-style `<tools>` and
 * `<tool_call>`): VERL's single-turn rollouts render no `tools`, so the exported prompt carries them as text.
 */
export function toolsSystemText(tools: readonly Record<string, unknown>[]): string {
  return [
    "# Tools",
    "",
    "You may call one or more functions to assist with the user query.",
    "",
    "You are provided with function signatures within <tools></tools> XML tags:",
    "<tools>",
    ...tools.map((tool) => JSON.stringify(tool)),
    "</tools>",
    "",
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:",
    "<tool_call>",
    '{"name": <function-name>, "arguments": <args-json-object>}',
    "</tool_call>",
  ].join("\n");
}

/** An assistant message's tool calls as the text a Hermes-style template renders them in. */
function toolCallsText(message: ChatMessage): string {
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  if (!Array.isArray(calls)) return "";
  return calls
    .map((call) => {
      const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function ?? {};
      const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
      return `<tool_call>\n{"name": ${JSON.stringify(String(fn.name ?? ""))}, "arguments": ${args}}\n</tool_call>`;
    })
    .join("\n");
}

/** A prompt as VERL's `prompt` list: role and text, tools in the system message, tool calls in their text. */
function verlMessages(prompt: PromptContext): { role: string; content: string }[] {
  const messages = prompt.messages.map((m) => {
    const calls = m.role === "assistant" ? toolCallsText(m) : "";
    const content = contentText(m);
    return { role: m.role, content: calls ? (content ? `${content}\n${calls}` : calls) : content };
  });
  if (!prompt.tools?.length) return messages;
  const tools = toolsSystemText(prompt.tools);
  if (messages[0]?.role === "system") {
    messages[0] = { role: "system", content: `${messages[0].content}\n\n${tools}` };
    return messages;
  }
  return [{ role: "system", content: tools }, ...messages];
}

/**
 * VERL parquet (the layout of `verl.trainer.main_ppo` data files): `data_source`, `prompt` as the whole chat list
 * (the agent's recorded prompt where there is one, else its family's; the tools it offers as a tools section of the
 * system message, since VERL's single-turn rollouts render none; an assistant's tool calls as `<tool_call>` text;
 * each image an `<image>` in its text), `ability`, `reward_model {style, ground_truth}` (`rule` with the solution as
 * JSON, or `model` for a reference-free row), `extra_info` (split, index, id, question, env, the recorded prompt as
 * JSON for a judge to read, pattern id and source trace ids for lineage), and when any prompt has images, `images`:
 * each row's images in the order of its `<image>`s, as VERL's multimodal datasets hold them. Pure: returns the
 * file's bytes.
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
      return imageBytes(p.messages, options.images ?? new Map());
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
      { name: "prompt", data: prompts.map(verlMessages) },
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
          env: r.env ?? null,
          context: r.context ? JSON.stringify(r.context) : null,
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
