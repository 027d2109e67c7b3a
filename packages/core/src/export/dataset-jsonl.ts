import type { EvalRow, PromptRow } from "../synth/index.ts";

/**
 * EvalSet or PromptPool rows as dataset JSONL: `question`, `solution` (absent for a reference-free row), `env`
 * (absent where no task family knows the row), `context` (the agent's recorded prompt: OpenAI messages and tools),
 * `meta` with the row id and lineage. A task family's rows (question/solution/env/meta) read back as they are.
 */
export function toDatasetJsonl(rows: readonly (EvalRow | PromptRow)[]): string {
  return rows
    .map(
      (r) =>
        `${JSON.stringify({
          question: r.question,
          ...(r.solution === undefined ? {} : { solution: r.solution }),
          ...(r.env === undefined ? {} : { env: r.env }),
          ...(r.context ? { context: r.context } : {}),
          meta: { ...r.meta, id: r.id },
        })}\n`,
    )
    .join("");
}
