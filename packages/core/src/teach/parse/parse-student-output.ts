import { extractTag } from "./extract-tag.ts";
import type { TeachingWarning } from "./teaching-warning.ts";

/** The student's solution output. */
export interface StudentOutput {
  /** Content of the last <solution> block; null when the student never opened one. */
  answer: string | null;
  /** True when a non-empty <solution> block was closed: the completion rate counts these. */
  completed: boolean;
  /** What had to be repaired to read the output. */
  warnings: TeachingWarning[];
}

/**
 * Reads the final `<solution>…</solution>` (the last one, since students revise). An unclosed tag
 * still yields its content (completed: false); no tag yields answer null, and a verifier may then
 * judge the raw text itself.
 */
export function parseStudentOutput(text: string): StudentOutput {
  const block = extractTag(text, "solution", "last");
  if (block.state === "missing")
    return {
      answer: null,
      completed: false,
      warnings: [{ kind: "missing_tag", tag: "solution", message: "student output has no <solution> tag" }],
    };
  const warnings: TeachingWarning[] = [];
  if (block.state === "unclosed")
    warnings.push({
      kind: "unclosed_tag",
      tag: "solution",
      message: "student's <solution> never closes (likely cut by the token limit)",
    });
  if (block.content === "")
    warnings.push({ kind: "empty_solution", message: "student's <solution> is empty" });
  return { answer: block.content, completed: block.state === "closed" && block.content !== "", warnings };
}
