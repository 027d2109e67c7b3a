import type { EvalRow, PromptRow } from "../synth/index.ts";
import { writeDatasetJsonl } from "../tasks/index.ts";

/**
 * EvalSet or PromptPool rows as dataset JSONL (`question`, `solution`, `env`, `meta`), the format the task
 * families read and write; the row id and lineage go into `meta`.
 */
export function toDatasetJsonl(rows: readonly (EvalRow | PromptRow)[]): string {
  return writeDatasetJsonl(
    rows.map((r) => ({
      question: r.question,
      solution: r.solution,
      env: r.env,
      meta: { ...r.meta, id: r.id },
    })),
  );
}
