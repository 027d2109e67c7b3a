import type { Diagnosis, Task, TeachingTemplatesInput, Verify } from "@arc/core";
import type { STRONG_STUDENT_TEACHING } from "../recipe/recipe-schema.ts";

/**
 * What the teacher's labels tell a student whose probe opens the right approach (`teaching.strongStudentTeaching`):
 * `none`, nothing; `conversions`, the request's conversions; `measured`, the conversions for the kinds of request
 * where telling them beat silence's mean reward by two standard errors with the frozen student on the teacher's
 * training tasks (`measureStrongConversions`, `kindsWorthTelling`).
 */
export type StrongStudentTeaching = (typeof STRONG_STUDENT_TEACHING)[number];

/** Which strong students are told their request's conversions: `all`, or those whose conversion kind is listed. */
export type ConversionsTold = "all" | readonly string[];

/** What a teacher concludes from a probe, and the one line of reasoning behind it. */
export interface ProbeDiagnosis {
  /** `strong`: the probe starts the right approach; `weak`: it does not. */
  diagnosis: Diagnosis;
  /** The teacher's reasoning, short enough for a small model to write. */
  thinking: string;
}

/** The reference teacher's output for a probe: the diagnosis, the teaching it gives and the reply that carries both. */
export interface TeacherReply extends ProbeDiagnosis {
  teaching: string;
  reply: string;
}

/**
 * What a teacher run needs of a task family: its protocol templates, how a student's attempt is judged and what a
 * teaching must not reveal, and the reference teacher the labels and the reward bound come from. A family that
 * can be taught registers one in `rl/families/family-teachings.ts`.
 */
export interface FamilyTeaching {
  /** Protocol templates for a byte-level student and teacher of the family. */
  templates: TeachingTemplatesInput;
  /** Judges a student's attempt with the family's verifier. */
  verify: Verify<Task>;
  /** Whether a student's output is a complete answer. */
  completed(text: string): boolean;
  /** The values a task's teaching must never reveal. */
  answersOf(task: Task): string[];
  /** Diagnoses a probe against the task's reference. */
  diagnose(task: Task, approach: string): ProbeDiagnosis;
  /** The reference teacher's output for a probe; `told` says which strong students hear their conversions. */
  teacherReply(task: Task, approach: string, told?: ConversionsTold): TeacherReply;
  /** The kind of conversions a task's request needs (`book_table:month`), or null when it needs none. */
  conversionKind(task: Task): string | null;
  /** The reference answer's text, the source of synthetic probes. */
  referenceText(task: Task): string;
  /** Whether two tasks' reference answers take the same approach (a synthetic probe of another approach is weak). */
  sameApproach(a: Task, b: Task): boolean;
}
