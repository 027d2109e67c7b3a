import {
  type ChatExample,
  type ChatMessage,
  type ContentImage,
  chatExampleOf,
  chatExamplesFromPreferences,
  type EvalRow,
  hasReference,
  InvalidInputError,
  imageRefs,
  inlineImages,
  type PreferenceRow,
  type PromptRow,
  type TaskFamilyRegistry,
  taskFamilies,
  toChatJsonl,
  toDatasetJsonl,
  toPreferenceJsonl,
  toVerlParquet,
} from "@arc/core";
import type { StoredDataset } from "./dataset-store.ts";

/** The export formats of `GET /v1/datasets/:id/export`. */
export const EXPORT_FORMATS = ["jsonl", "chat", "preferences", "verl-parquet"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** An exported dataset: the bytes and how to serve them. */
export interface DatasetExport {
  body: string | Uint8Array<ArrayBuffer>;
  contentType: string;
  /** A file name for the download, e.g. `ds_0123abcd.verl.parquet`. */
  fileName: string;
}

const jsonlType = "application/jsonl; charset=utf-8";

/**
 * A dataset in one format: `jsonl` (question/solution/env/meta rows; eval and prompts), `chat` (chat fine-tune
 * JSONL: the reference conversation of each task, or the chosen side of each preference), `preferences`
 * (prompt/chosen/rejected JSONL; preferences) or `verl-parquet` (VERL's columns; eval and prompts). A format that does
 * not fit the kind is an error naming the ones that do.
 */
export function exportDataset(
  dataset: StoredDataset,
  format: string,
  families: TaskFamilyRegistry = taskFamilies,
  images: ReadonlyMap<string, ContentImage> = new Map(),
): DatasetExport {
  const inline = (examples: ChatExample[]) =>
    examples.map((e) => ({ ...e, messages: inlineImages(e.messages, images) }));
  const fits: Record<string, ExportFormat[]> = {
    eval: ["jsonl", "chat", "verl-parquet"],
    prompts: ["jsonl", "chat", "verl-parquet"],
    preferences: ["preferences", "chat"],
  };
  if (
    !(EXPORT_FORMATS as readonly string[]).includes(format) ||
    !fits[dataset.kind].includes(format as ExportFormat)
  ) {
    throw new InvalidInputError(
      `format: expected one of ${fits[dataset.kind].join(", ")} for a ${dataset.kind} dataset, got "${format}"`,
      { field: "format" },
    );
  }
  const name = (ext: string) => `${dataset.id}.${ext}`;
  if (dataset.kind === "preferences") {
    const rows = dataset.rows as PreferenceRow[];
    if (format === "preferences")
      return {
        body: toPreferenceJsonl(rows.map((r) => ({ ...r, prompt: inlineImages(r.prompt, images) }))),
        contentType: jsonlType,
        fileName: name("preferences.jsonl"),
      };
    return {
      body: toChatJsonl(inline(chatExamplesFromPreferences(rows))),
      contentType: jsonlType,
      fileName: name("chat.jsonl"),
    };
  }
  const rows = dataset.rows as (EvalRow | PromptRow)[];
  if (format === "jsonl")
    return { body: toDatasetJsonl(rows), contentType: jsonlType, fileName: name("jsonl") };
  if (format === "chat") {
    return {
      body: toChatJsonl(inline(rows.filter(hasReference).map((r) => chatExampleOf(r, families)))),
      contentType: jsonlType,
      fileName: name("chat.jsonl"),
    };
  }
  return {
    body: new Uint8Array(
      toVerlParquet(rows, { split: dataset.kind === "eval" ? "test" : "train", families, images }),
    ),
    contentType: "application/vnd.apache.parquet",
    fileName: name("verl.parquet"),
  };
}

/** The image references of a dataset's rows (recorded prompts of eval and prompt rows, preference prompts). */
export function datasetImageRefs(dataset: StoredDataset): string[] {
  return dataset.rows.flatMap((row) => {
    const r = row as { context?: { messages: ChatMessage[] }; prompt?: ChatMessage[] };
    return imageRefs(r.context?.messages ?? r.prompt ?? []);
  });
}
