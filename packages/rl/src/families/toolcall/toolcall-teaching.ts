import {
  findAnswerLeaks,
  formatToolCall,
  normalizedEqual,
  parseToolCall,
  type Task,
  type TeachingTemplatesInput,
  type Verify,
  verifyTask,
} from "@arc/core";
import {
  TOOLCALL_GUIDED_STUDENT_TEMPLATE,
  type ToolcallSolution,
  toolcallConversionClaims,
  toolcallConversionKind,
  toolcallConversions,
  toolcallRightApproachHint,
  toolcallTeachingHint,
} from "@arc/core/families";
import type {
  ConversionsTold,
  FamilyTeaching,
  ProbeDiagnosis,
  TeacherReply,
} from "../../teach/family-teaching.ts";

/**
 * Templates of the teaching protocol for `toolcall` with a byte-level student and teacher:
 * - the probe is the bare request: a ~1M-parameter student trained only to answer with a JSON call
 *   cannot describe an approach in words, and the first `maxProbeTokens` bytes of its answer state
 *   its approach exactly (which tool, which argument names, its first values); the default probe prompt's ~260 extra
 *   bytes would also cost 4x the prefill on every probe;
 * - the teacher prompt is short, since every byte is a token of a small model's context;
 * - the guided prompt puts the hint before the request (TOOLCALL_GUIDED_STUDENT_TEMPLATE), as the student's SFT
 *   guided examples do, so the values to copy stay next to the answer;
 * - the baseline is the bare request, exactly the family's prompt, which the student was trained on.
 */
export const TOOLCALL_TEACHING_TEMPLATES: TeachingTemplatesInput = {
  probe: "{question}",
  studentWithGuidance: TOOLCALL_GUIDED_STUDENT_TEMPLATE,
  teacherAdaptive:
    "Request: {question}\nStudent's approach: {approach}\nDiagnose, then teach only if needed.",
  teacherAlways: "Request: {question}\nStudent's approach: {approach}\nDiagnose, then teach the full method.",
  baseline: "{question}",
};

const TOOL_IN_TEXT = /"tool"\s*:\s*"([A-Za-z_]+)/;
const ARG_KEYS = /"([A-Za-z_]+)"\s*:/g;
/** An argument the probe wrote out in full: `"people":7,` or `"city":"Oslo"}` (a value cut off by the budget is not one). */
const COMPLETE_ARG = /"([A-Za-z_]+)"\s*:\s*(?:"([^"]*)"|(-?\d+(?:\.\d+)?))\s*[,}]/g;

/** The tool a probe reaches for (`{"tool":"book_table",...`), or null when it names none. */
export function probedTool(approach: string): string | null {
  return TOOL_IN_TEXT.exec(approach)?.[1] ?? null;
}

/** What a teacher for `toolcall` concludes from a probe, and the one line of reasoning behind it. */
export type ToolcallDiagnosis = ProbeDiagnosis;

/**
 * Diagnoses a `toolcall` probe against the task's reference call: strong when it names the right tool,
 * every argument name it already shows belongs to that tool and every value it has written out in full
 * is the request's; weak otherwise.
 */
export function diagnoseToolcallProbe(task: Task, approach: string): ToolcallDiagnosis {
  const expected = task.solution as ToolcallSolution;
  const tool = probedTool(approach);
  const keys = [...approach.matchAll(ARG_KEYS)].map((m) => m[1]).filter((k) => k !== "tool" && k !== "args");
  const wrongKey = keys.find((k) => !(k in expected.args));
  const needs = `The request needs ${expected.tool}`;
  if (tool === null) return { diagnosis: "weak", thinking: `${needs}; the student names no tool.` };
  if (tool !== expected.tool) return { diagnosis: "weak", thinking: `${needs}; the student picks ${tool}.` };
  if (wrongKey)
    return { diagnosis: "weak", thinking: `${needs}; the student uses the argument ${wrongKey}.` };
  for (const [, key, text, number] of approach.matchAll(COMPLETE_ARG)) {
    if (key === "tool") continue;
    if (!normalizedEqual(expected.args[key], number === undefined ? text : Number(number)))
      return { diagnosis: "weak", thinking: `${needs}; the student's ${key} is not the request's.` };
  }
  return { diagnosis: "strong", thinking: `${needs}; the student picks it.` };
}

/** Whether a strong student of this task is told its request's conversions under `told`. */
export function tellsConversions(task: Task, told: ConversionsTold): boolean {
  const kind = toolcallConversionKind(task);
  return kind !== null && (told === "all" || told.includes(kind));
}

/**
 * The reference teacher output for a probe: reasoning ending in the diagnosis, then the teaching the
 * student's SFT taught it to use, never the call itself: for a strong student nothing, or only the request's
 * conversions when `told` covers its kind of request; for a weak one the full hint (tool, argument names and
 * conversions).
 */
export function toolcallTeacherReply(task: Task, approach: string, told: ConversionsTold = []): TeacherReply {
  const judged = diagnoseToolcallProbe(task, approach);
  const teaching =
    judged.diagnosis === "weak"
      ? toolcallTeachingHint(task)
      : tellsConversions(task, told)
        ? toolcallRightApproachHint(task)
        : "";
  const reply = `<thinking>${judged.thinking} Diagnosis: ${judged.diagnosis}</thinking><teaching>${teaching}</teaching>`;
  return { ...judged, teaching, reply };
}

/**
 * The conversions a teaching states (`March is month 03`, `3pm is hour 15`) that are not its request's own: a
 * teacher that names another month than the request's is wrong even where the student happens to do better.
 */
export function falseConversions(task: Task, teaching: string): string[] {
  const own = new Set(toolcallConversions(task));
  return toolcallConversionClaims(teaching).filter((fact) => !own.has(fact));
}

/**
 * Judges a toolcall attempt with the family's verifier: the `<solution>` content when the student
 * wrote one, else its whole output (a trained toolcall student answers with the bare JSON call).
 */
export const verifyToolcallAttempt: Verify<Task> = ({ answer, text }, task) =>
  verifyTask(task, [answer ?? text]).status === "pass";

/**
 * What a `toolcall` teaching must never reveal: each argument value of the reference call (the protocol
 * redacts any it finds), except a value the full hint's own wording contains (a title `Call` in "Call the
 * tool ..."), which the teacher cannot help writing. The tool and argument names are not answers.
 */
export function toolcallAnswers(task: Task): string[] {
  const hint = toolcallTeachingHint(task);
  return Object.values((task.solution as ToolcallSolution).args)
    .map(String)
    .filter((value) => findAnswerLeaks(hint, [value]).length === 0);
}

/** The toolcall family's teaching: the protocol above, its verifier and its reference teacher. */
export const toolcallTeaching: FamilyTeaching = {
  templates: TOOLCALL_TEACHING_TEMPLATES,
  verify: verifyToolcallAttempt,
  completed: (text) => parseToolCall(text).ok,
  answersOf: toolcallAnswers,
  diagnose: diagnoseToolcallProbe,
  teacherReply: toolcallTeacherReply,
  conversionKind: toolcallConversionKind,
  referenceText: (task) => formatToolCall(task.solution as ToolcallSolution),
  sameApproach: (a, b) => (a.solution as ToolcallSolution).tool === (b.solution as ToolcallSolution).tool,
};
