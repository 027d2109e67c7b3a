import { createHash } from "node:crypto";
import type { ChatMessage } from "../trace/index.ts";

/** The three kinds of dataset synthesis makes. */
export type DatasetKind = "eval" | "prompts" | "preferences";

/** Where a row came from: the production traces behind it (lineage). */
export interface Lineage {
  /** Production traces the row stands for (several when near-duplicates were merged). */
  sourceTraceIds: string[];
  /** The pattern the traces failed in; absent for general/replay rows. */
  patternId?: string;
}

/** The agent's prompt as it reached the model: OpenAI chat messages verbatim, and the tools it was offered. */
export interface PromptContext {
  /** System prompt, earlier turns, tool calls and results, content parts: everything before the judged answer. */
  messages: ChatMessage[];
  /** The tools offered, in OpenAI's `{type:"function", function:{name, description, parameters}}` form. */
  tools?: Record<string, unknown>[];
}

/**
 * A held-out item to judge models on: a question, how to verify it, and the agent's real prompt. Without a
 * `solution` it is reference-free (a judge scores it); without an `env` no task family knows it.
 */
export interface EvalRow {
  id: string;
  question: string;
  solution?: unknown;
  env?: string;
  /** The prompt the failed answer was given, where the row came from a trace that recorded it. */
  context?: PromptContext;
  meta: Lineage & {
    /** The pattern id for failure slices, `general` for the regression slice. */
    slice: string;
    /** Id of the general row it came from (regression slice). */
    sourceId?: string;
  };
}

/** A prompt to train on, with the solution its reward needs (absent: reference-free) and the agent's real prompt. */
export interface PromptRow {
  id: string;
  question: string;
  solution?: unknown;
  env?: string;
  context?: PromptContext;
  meta: Lineage & { source: "failure" | "replay"; sourceId?: string };
}

/** A preference pair: `rejected` failed in production, `chosen` is a verified-correct answer to the same prompt. */
export interface PreferenceRow {
  id: string;
  /** The conversation up to the failed turn, verbatim (OpenAI chat messages). */
  prompt: ChatMessage[];
  /** The tools the agent was offered at that turn. */
  tools?: Record<string, unknown>[];
  chosen: string;
  rejected: string;
  env?: string;
  meta: Lineage & {
    chosenSource: "human" | "policy" | "teacher";
    /** True when the chosen answer passed the env's verifier (a human correction without a reference is trusted, not verified). */
    chosenVerified: boolean;
    /** Model version that produced the rejected output. */
    rejectedModelVersion?: string;
  };
}

/** The row type of each dataset kind. */
export interface DatasetRows {
  eval: EvalRow;
  prompts: PromptRow;
  preferences: PreferenceRow;
}

/**
 * An immutable, versioned dataset. `version` is the SHA-256 of its canonical content, so the same inputs and seed
 * give the same version, and any change gives another.
 */
export interface Dataset<K extends DatasetKind = DatasetKind> {
  kind: K;
  tenantId: string;
  /** `sha256:<hex>` of kind, tenant and rows. */
  version: string;
  /** How it was made: seed, the patterns it draws on, and the parameters. */
  createdFrom: { seed: number; patternIds: string[]; params: Record<string, unknown> };
  rows: readonly DatasetRows[K][];
  /** Counts of what was kept and what was dropped, and why. */
  stats: Record<string, number>;
}

/** JSON with object keys sorted, so equal content always serializes to equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** SHA-256 hex of a string (short stable ids and versions). */
export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Seals rows into an immutable dataset whose version is its content hash. */
export function createDataset<K extends DatasetKind>(
  kind: K,
  tenantId: string,
  rows: DatasetRows[K][],
  createdFrom: Dataset<K>["createdFrom"],
  stats: Record<string, number>,
): Dataset<K> {
  const clean = JSON.parse(JSON.stringify(rows)) as DatasetRows[K][];
  const version = `sha256:${sha256(canonicalJson({ kind, tenantId, rows: clean }))}`;
  return deepFreeze({
    kind,
    tenantId,
    version,
    createdFrom: structuredClone(createdFrom),
    rows: clean,
    stats: { ...stats, rows: clean.length },
  });
}

/** The question text of every row (the user turns of a preference prompt), for overlap checks. */
export function questionsOf(dataset: Dataset): string[] {
  return dataset.rows.map((row) => {
    if ("question" in row) return row.question;
    return row.prompt
      .filter((m) => m.role === "user")
      .map((m) => m.content)
      .join("\n");
  });
}
