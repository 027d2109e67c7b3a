import { z } from "zod";
import { InvalidInputError } from "../errors/index.ts";
import type { Task } from "../rollout/index.ts";

/** One dataset row as written to JSONL: what to ask, what is right, which environment verifies it, and anything else. */
export interface DatasetRow {
  question: string;
  /** What the env's verifier checks against (expected tool call, answer, end state...). */
  solution: unknown;
  /** The environment (task family) id that verifies the row. */
  env: string;
  /** Split, template, lineage and other facts about the row. */
  meta: Record<string, unknown>;
}

/** The zod schema of a DatasetRow, for reading rows from outside. */
export const DatasetRowSchema = z.object({
  question: z.string().min(1, "must not be empty"),
  solution: z.unknown().refine((v) => v !== undefined, "is required"),
  env: z.string().min(1, "must not be empty"),
  meta: z.record(z.unknown()).default({}),
});

/** The row a task is stored as (its id goes into `meta.id`). */
export function taskToRow(task: Task): DatasetRow {
  return {
    question: task.question,
    solution: task.solution,
    env: task.env,
    meta: { ...task.meta, id: task.id },
  };
}

/** The task a row stands for; its id is `meta.id`, else `fallbackId`. */
export function rowToTask(row: DatasetRow, fallbackId: string): Task {
  const id = typeof row.meta.id === "string" ? row.meta.id : fallbackId;
  return { id, env: row.env, question: row.question, solution: row.solution, meta: row.meta };
}

/** Writes rows as JSONL: one JSON object per line, keys in a fixed order, a newline after each. */
export function writeDatasetJsonl(rows: readonly DatasetRow[]): string {
  return rows
    .map(
      (r) => `${JSON.stringify({ question: r.question, solution: r.solution, env: r.env, meta: r.meta })}\n`,
    )
    .join("");
}

/** Reads JSONL rows; blank lines are skipped; a bad line throws an InvalidInputError naming the line and field. */
export function readDatasetJsonl(text: string): DatasetRow[] {
  const rows: DatasetRow[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new InvalidInputError(
        `line ${i + 1}: expected a JSON object, got invalid JSON (${(error as Error).message})`,
        {
          field: `line ${i + 1}`,
        },
      );
    }
    const parsed = DatasetRowSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue.path.join(".") || "(row)";
      throw new InvalidInputError(`line ${i + 1}: ${field} ${issue.message}`, {
        field: `line ${i + 1}.${field}`,
      });
    }
    rows.push(parsed.data as DatasetRow);
  }
  return rows;
}
