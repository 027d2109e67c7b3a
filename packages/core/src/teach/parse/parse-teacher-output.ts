import { findAnswerLeaks, redactLeaks } from "./answer-leak.ts";
import { extractTag, stripTags } from "./extract-tag.ts";
import type { TeachingWarning } from "./teaching-warning.ts";
import { removeClaims } from "./ungrounded-claims.ts";

/** What the teacher decided about the student, from its "Diagnosis: strong|weak" line. */
export type Diagnosis = "strong" | "weak";

/** What to do with a teaching that contains a known answer. */
export type LeakPolicy = "redact" | "refuse";

/** The teacher's output, read as leniently as possible. */
export interface TeacherOutput {
  /** The teacher's private reasoning; never shown to the student. */
  thinking: string;
  /** The guidance for the student, after leak handling; empty means "no help needed". */
  teaching: string;
  /** The stated diagnosis, or null when the teacher did not state one. */
  diagnosis: Diagnosis | null;
  /** What had to be repaired to read the output. */
  warnings: TeachingWarning[];
}

const DIAGNOSIS = /diagnosis\s*[:=-]?\s*\**\s*(strong|weak)\b/i;

/**
 * Reads `<thinking>…</thinking><teaching>…</teaching>`. Repairs instead of failing:
 * - no `<teaching>` tag: the text outside the thinking block is the teaching (a teacher that
 *   ignored the format still guides); an unclosed `<thinking>` keeps everything after it private;
 * - unclosed `<teaching>`: its content runs to the end;
 * - a teaching that contains one of `answers` is redacted, or dropped with policy `refuse`;
 * - the claims `ungroundedClaims` finds in the teaching are cut out of it.
 * Each repair comes back as a typed warning.
 */
export function parseTeacherOutput(
  text: string,
  options: {
    answers?: readonly string[];
    leakPolicy?: LeakPolicy;
    /** The claims of a teaching that its question does not support (bound to the question). */
    ungroundedClaims?: (teaching: string) => string[];
  } = {},
): TeacherOutput {
  const warnings: TeachingWarning[] = [];
  const thinking = extractTag(text, "thinking");
  if (thinking.state === "missing")
    warnings.push({ kind: "missing_tag", tag: "thinking", message: "teacher output has no <thinking> tag" });
  if (thinking.state === "unclosed")
    warnings.push({
      kind: "unclosed_tag",
      tag: "thinking",
      message: "teacher's <thinking> never closes; all text after it is treated as private reasoning",
    });
  const outside = text.slice(0, thinking.start) + text.slice(thinking.end);

  const block = extractTag(outside, "teaching");
  let teaching = block.content;
  if (block.state === "missing") {
    teaching = stripTags(outside);
    warnings.push({
      kind: "missing_tag",
      tag: "teaching",
      message: "teacher output has no <teaching> tag; the text outside <thinking> is used as the teaching",
    });
  }
  if (block.state === "unclosed")
    warnings.push({
      kind: "unclosed_tag",
      tag: "teaching",
      message: "teacher's <teaching> never closes; its content runs to the end of the output",
    });

  const leaks = findAnswerLeaks(teaching, options.answers ?? []);
  if (leaks.length > 0) {
    const action = options.leakPolicy === "refuse" ? "refused" : "redacted";
    for (const leak of leaks)
      warnings.push({
        kind: "answer_leaked",
        answer: leak.answer,
        occurrences: leak.ranges.length,
        action,
        message: `teaching states the answer ${JSON.stringify(leak.answer)} ${leak.ranges.length} time(s); ${action === "refused" ? "teaching dropped" : "occurrences redacted"}`,
      });
    teaching = action === "refused" ? "" : redactLeaks(teaching, leaks);
  }
  const claims = teaching === "" ? [] : (options.ungroundedClaims?.(teaching) ?? []);
  for (const claim of new Set(claims))
    warnings.push({
      kind: "ungrounded_claim",
      claim,
      message: `teaching states ${JSON.stringify(claim)}, which the question does not support; claim removed`,
    });
  if (claims.length > 0) teaching = removeClaims(teaching, claims);
  if (teaching === "") warnings.push({ kind: "empty_teaching", message: "teacher gave no teaching" });

  const stated = DIAGNOSIS.exec(thinking.content) ?? DIAGNOSIS.exec(text);
  const diagnosis = stated ? (stated[1].toLowerCase() as Diagnosis) : null;
  return { thinking: thinking.content, teaching, diagnosis, warnings };
}
