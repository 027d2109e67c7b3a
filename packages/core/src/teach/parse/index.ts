export { type AnswerLeak, findAnswerLeaks, REDACTION, redactLeaks } from "./answer-leak.ts";
export { extractTag, stripTags, type TagMatch } from "./extract-tag.ts";
export { parseStudentOutput, type StudentOutput } from "./parse-student-output.ts";
export {
  type Diagnosis,
  type LeakPolicy,
  parseTeacherOutput,
  type TeacherOutput,
} from "./parse-teacher-output.ts";
export type { TeachingTag, TeachingWarning, TeachingWarningKind } from "./teaching-warning.ts";
export { approximateTokenCounter, type TokenCounter } from "./token-counter.ts";
export { type ProbeText, truncateProbe } from "./truncate-probe.ts";
export { removeClaims, type UngroundedClaims } from "./ungrounded-claims.ts";
