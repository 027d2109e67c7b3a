import { z } from "zod";
import { toInvalidInputError } from "../../trace/index.ts";

/** The probe prompt the issue specifies: the question, then a request for a concise approach. */
export const DEFAULT_PROBE_TEMPLATE =
  "{question}\n\nBefore solving, briefly describe: 1. what type of problem this is 2. the key concepts or steps needed 3. any potential challenges. Your initial approach (be concise):";

const TEACHER_FORMAT =
  "First, inside <thinking></thinking>, diagnose the student's understanding: is the approach correct and complete? " +
  'End your thinking with the line "Diagnosis: strong" if the student can solve the problem without help, ' +
  'or "Diagnosis: weak" if not.';

/** Adaptive teacher prompt: teach only as much as the diagnosed student needs, possibly nothing. */
export const DEFAULT_TEACHER_ADAPTIVE_TEMPLATE =
  "You are a teacher. A student was given this problem:\n\n{question}\n\n" +
  "Before solving it, the student described this approach:\n\n{approach}\n\n" +
  `${TEACHER_FORMAT}\n\n` +
  "Then, inside <teaching></teaching>, guide the student without ever stating the final answer. " +
  "If the approach is correct, give at most a brief hint, or leave the teaching empty when no help is needed; " +
  "if it is wrong or incomplete, explain the right method step by step.";

/** Teacher prompt of mode "always": full scaffolding whatever the diagnosis. */
export const DEFAULT_TEACHER_ALWAYS_TEMPLATE =
  "You are a teacher. A student was given this problem:\n\n{question}\n\n" +
  "Before solving it, the student described this approach:\n\n{approach}\n\n" +
  `${TEACHER_FORMAT}\n\n` +
  "Then, inside <teaching></teaching>, teach the student the complete method step by step, " +
  "without ever stating the final answer.";

const SOLVE_INSTRUCTION =
  "Solve the problem step by step, then give only the final answer inside <solution></solution>.";

/** Student prompt with the teacher's guidance in context. */
export const DEFAULT_STUDENT_WITH_GUIDANCE_TEMPLATE = `{question}\n\nGuidance from a teacher:\n{teaching}\n\n${SOLVE_INSTRUCTION}`;

/** Baseline student prompt: the guided prompt with the guidance paragraph left out. */
export const DEFAULT_BASELINE_TEMPLATE = `{question}\n\n${SOLVE_INSTRUCTION}`;

/** A prompt template whose text must contain each named `{placeholder}`. */
function template(defaultText: string, placeholders: string[], description: string) {
  return z
    .string()
    .min(1, "must not be empty")
    .refine((text) => placeholders.every((p) => text.includes(`{${p}}`)), {
      message: `must contain the placeholder(s) ${placeholders.map((p) => `{${p}}`).join(", ")}`,
    })
    .default(defaultText)
    .describe(description);
}

/** Prompts of the teaching protocol as config; every field has a default and can be overridden. */
export const TeachingTemplates = z
  .object({
    probe: template(
      DEFAULT_PROBE_TEMPLATE,
      ["question"],
      "Student prompt of the probe phase: asks for the approach only, so the teacher can diagnose cheaply.",
    ),
    teacherAdaptive: template(
      DEFAULT_TEACHER_ADAPTIVE_TEMPLATE,
      ["question", "approach"],
      "Teacher prompt of mode 'adaptive': diagnose from the probe, then teach nothing, a hint, or full scaffolding.",
    ),
    teacherAlways: template(
      DEFAULT_TEACHER_ALWAYS_TEMPLATE,
      ["question", "approach"],
      "Teacher prompt of mode 'always': full teaching for every student, for comparison with 'adaptive'.",
    ),
    studentWithGuidance: template(
      DEFAULT_STUDENT_WITH_GUIDANCE_TEMPLATE,
      ["question", "teaching"],
      "Student prompt of the solution phase with guidance; the answer is expected inside <solution>.",
    ),
    baseline: template(
      DEFAULT_BASELINE_TEMPLATE,
      ["question"],
      "Student prompt without guidance: used for the baseline run and whenever the teaching is empty.",
    ),
    studentSystem: z
      .string()
      .default("")
      .describe(
        "System message sent before every student prompt; empty sends none (e.g. the agent's own system prompt).",
      ),
    teacherSystem: z
      .string()
      .default("")
      .describe("System message sent before every teacher prompt; empty sends none."),
    maxProbeTokens: z
      .number()
      .int("must be an integer")
      .positive("must be positive")
      .default(50)
      .describe("Token budget of the probe: enough to reveal the approach, too little to solve the task."),
  })
  .strict()
  .describe(
    "Prompt templates of the adaptive teaching protocol; placeholders are {question}, {approach}, {teaching}.",
  );
/** Validated templates with every default filled in. */
export type TeachingTemplates = z.infer<typeof TeachingTemplates>;
/** Partial templates as a caller writes them; missing fields take the defaults. */
export type TeachingTemplatesInput = z.input<typeof TeachingTemplates>;

/** Returns a new, validated template set: the defaults with `overrides` applied; throws InvalidInputError naming the bad field. */
export function teachingTemplates(overrides: TeachingTemplatesInput = {}): TeachingTemplates {
  const parsed = TeachingTemplates.safeParse(overrides);
  if (!parsed.success) throw toInvalidInputError(parsed.error, "templates");
  return parsed.data;
}

/**
 * Fills `{name}` placeholders in one pass, so braces inside the inserted values (code, JSON, LaTeX)
 * are left as they are. Placeholders without a value stay untouched.
 */
export function renderTemplate(text: string, values: Record<string, string>): string {
  return text.replace(/\{([a-zA-Z]+)\}/g, (whole, name: string) =>
    Object.hasOwn(values, name) ? values[name] : whole,
  );
}
