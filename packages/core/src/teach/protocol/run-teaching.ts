import { InvalidInputError } from "../../errors/index.ts";
import type { TeachingOutcome } from "../metrics/index.ts";
import {
  approximateTokenCounter,
  type Diagnosis,
  type LeakPolicy,
  parseStudentOutput,
  parseTeacherOutput,
  type StudentOutput,
  type TeachingWarning,
  type TokenCounter,
  truncateProbe,
  type UngroundedClaims,
} from "../parse/index.ts";
import {
  type AdaptiveTeachingRewardConfigInput,
  adaptiveTeachingReward,
  adaptiveTeachingRewardConfig,
} from "../reward/index.ts";
import { renderTemplate, type TeachingTemplatesInput, teachingTemplates } from "../templates/index.ts";
import type { ChatModel, TeachMessage } from "./chat-model.ts";
import { callPhase, type TeachingPhase, type TeachingPhaseRecord } from "./teaching-phase.ts";

/** `adaptive`: probe, then teach only as needed; `always`: probe, then full teaching; `off`: the student alone. */
export type TeachingMode = "adaptive" | "always" | "off";
const MODES: readonly TeachingMode[] = ["adaptive", "always", "off"];

/** How the probe judged the student; `unknown` when there was no probe or no usable diagnosis. */
export type ProbeJudgement = "strong" | "weak" | "unknown";

/** What the protocol needs of a task (a rollout `Task` fits). */
export interface TeachingTask {
  /** What the student is asked; every prompt template receives it as {question}. */
  question: string;
  /** The reference answer; when a string or number, or an object with such an `answer` field, the teaching must not reveal it. */
  solution?: unknown;
}

/** Judges a student's attempt: true/false or a score in [0, 1]. */
export type Verify<T extends TeachingTask = TeachingTask> = (
  attempt: { answer: string | null; text: string },
  task: T,
) => boolean | number | Promise<boolean | number>;

/** Options of one teaching interaction. */
export interface RunTeachingOptions<T extends TeachingTask = TeachingTask> {
  /** The model being helped; it answers the probe, the solution and the baseline. */
  student: ChatModel;
  /** Required unless mode is `off`. */
  teacher?: ChatModel;
  /** The task to solve. */
  task: T;
  /** How much the teacher may intervene. */
  mode: TeachingMode;
  /** Overrides of the default prompt templates (and maxProbeTokens). */
  templates?: TeachingTemplatesInput;
  /** Scores the student's attempts; without it the run has no outcome and no reward. */
  verify?: Verify<T>;
  /** Also run the student without guidance (default: when `verify` is given); needed for NDR and reward. */
  baseline?: boolean;
  /** Reward config (`trainer.reward.adaptiveTeaching`); the reward needs `verify` and a baseline. */
  reward?: AdaptiveTeachingRewardConfigInput;
  /** Strings the teaching must not contain; default: the task's solution (or its `answer` field) when a string or number. */
  answers?: string[];
  /** What to do with teaching that reveals an answer (default `redact`). */
  leakPolicy?: LeakPolicy;
  /**
   * Finds the claims a teaching makes that the question does not support (a task family's `ungroundedClaims`: e.g. a
   * teaching naming another month than the request's); each is cut out before the student reads the teaching, with
   * an `ungrounded_claim` warning. Default: none.
   */
  ungroundedClaims?: UngroundedClaims;
  /** Counts teaching tokens and cuts over-long probes; default approximateTokenCounter. */
  tokenCounter?: TokenCounter;
  /** Budget of the teacher's output, thinking included (default 1024). */
  maxTeacherTokens?: number;
  /** Budget of each student solution (default 1024). */
  maxSolutionTokens?: number;
  /** Ask the student's answering call (the solution phase) for log-probabilities, as the client asked. */
  solutionLogprobs?: { top: number };
  /** Student sampling temperature for every student phase (default 0). */
  studentTemperature?: number;
  /** Teacher sampling temperature (default 0; a trainer samples above 0). */
  teacherTemperature?: number;
  /** Cancels every model call of the run. */
  signal?: AbortSignal;
}

/** A warning together with the phase whose output caused it. */
export type PhaseWarning = TeachingWarning & { phase: TeachingPhase };

/** A student solution: the raw text and what was read from it. */
export type SolutionAttempt = StudentOutput & { text: string };

/** Everything one teaching interaction did and produced. */
export interface TeachingRun {
  /** The mode the run used. */
  mode: TeachingMode;
  /** Every model call in protocol order (probe, teaching, solution, baseline); store each as a trace step. */
  phases: TeachingPhaseRecord[];
  /** The approach the teacher saw (the probe held to its budget); null in mode `off`. */
  approach: string | null;
  /** Whether the probe showed a student that can solve the task alone (strong) or not (weak). */
  judgement: ProbeJudgement;
  /** Where the judgement came from: the teacher's stated diagnosis, an adaptive teacher's empty teaching, or nothing. */
  judgementSource: "teacher" | "empty-teaching" | "none";
  /** The teacher's private reasoning; null in mode `off`. */
  thinking: string | null;
  /** The guidance the student saw; empty when none was given. */
  teaching: string;
  /** Length of `teaching` by the run's token counter; 0 for none. */
  teachingTokens: number;
  /** The student's attempt in the solution phase (with guidance when there was any). */
  solution: SolutionAttempt;
  /** The student's attempt without guidance, when a baseline ran. */
  baseline?: SolutionAttempt;
  /** The interaction as the metrics take it (add tenantId/patternId); present when `verify` was given. */
  outcome?: TeachingOutcome;
  /** The adaptive teaching reward; present when `verify` was given, a baseline ran and a teacher took part. */
  reward?: number;
  /** Every repair made to model output, in the order it was made. */
  warnings: PhaseWarning[];
}

function positiveInteger(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0)
    throw new InvalidInputError(`${field}: expected a positive integer, got ${value}`, { field });
  return value;
}

function temperature(value: number | undefined, field: string): number {
  if (value === undefined) return 0;
  if (!Number.isFinite(value) || value < 0)
    throw new InvalidInputError(`${field}: expected a temperature >= 0, got ${value}`, { field });
  return value;
}

async function score<T extends TeachingTask>(
  verify: Verify<T>,
  attempt: SolutionAttempt,
  task: T,
): Promise<number> {
  const result = await verify({ answer: attempt.answer, text: attempt.text }, task);
  if (typeof result === "boolean") return result ? 1 : 0;
  if (typeof result !== "number" || !(result >= 0 && result <= 1))
    throw new InvalidInputError(
      `verify returned ${String(result)}; expected a boolean or a score in [0, 1]`,
      {
        field: "verify",
      },
    );
  return result;
}

const isAnswer = (value: unknown): value is string | number =>
  typeof value === "string" || typeof value === "number";

/** The default answers a teaching must not reveal: a primitive solution, or a solution object's `answer` field. */
export function solutionAnswers(solution: unknown): string[] {
  if (isAnswer(solution)) return [String(solution)];
  const answer = (solution as { answer?: unknown } | null)?.answer;
  return isAnswer(answer) ? [String(answer)] : [];
}

/**
 * The probe's verdict: the teacher's stated diagnosis; failing that, an adaptive teacher's empty
 * teaching means it found nothing to fix (strong); otherwise unknown.
 */
function judge(
  mode: TeachingMode,
  diagnosis: Diagnosis | null,
  teaching: string,
): { judgement: ProbeJudgement; judgementSource: TeachingRun["judgementSource"]; warning?: PhaseWarning } {
  if (diagnosis) return { judgement: diagnosis, judgementSource: "teacher" };
  if (mode === "off") return { judgement: "unknown", judgementSource: "none" };
  const inferred = mode === "adaptive" && teaching === "";
  const judgement = inferred ? "strong" : "unknown";
  return {
    judgement,
    judgementSource: inferred ? "empty-teaching" : "none",
    warning: {
      kind: "missing_diagnosis",
      phase: "teaching",
      message: `teacher stated no "Diagnosis: strong|weak"; judgement ${judgement}${inferred ? " inferred from its empty teaching" : ""}`,
    },
  };
}

function withPhase(phase: TeachingPhase, warnings: TeachingWarning[]): PhaseWarning[] {
  return warnings.map((w) => ({ ...w, phase }));
}

/** Throws an InvalidInputError naming the first option a teaching interaction cannot run with. */
function checkRunTeachingOptions<T extends TeachingTask>(options: RunTeachingOptions<T>): void {
  const { teacher, task, mode } = options;
  if (!MODES.includes(mode))
    throw new InvalidInputError(`mode: expected one of ${MODES.join(", ")}, got ${String(mode)}`, {
      field: "mode",
    });
  if (typeof task?.question !== "string" || task.question.trim() === "")
    throw new InvalidInputError("task.question: expected a non-empty string", { field: "task.question" });
  if (mode !== "off" && !teacher)
    throw new InvalidInputError(
      `teacher: mode ${mode} needs a teacher model; use mode off for the student alone`,
      {
        field: "teacher",
      },
    );
}

/** What every phase of one interaction shares: its options with defaults, prompts and the warnings gathered. */
interface Interaction<T extends TeachingTask> {
  options: RunTeachingOptions<T>;
  templates: ReturnType<typeof teachingTemplates>;
  rewardConfig: ReturnType<typeof adaptiveTeachingRewardConfig>;
  counter: TokenCounter;
  maxTeacherTokens: number;
  maxSolutionTokens: number;
  solutionLogprobs: { logprobs?: { top: number } };
  studentSampling: { temperature: number; signal?: AbortSignal };
  teacherSampling: { temperature: number; signal?: AbortSignal };
  answers: string[];
  /** The student's messages for a prompt, after its system prompt when the templates have one. */
  asStudent(content: string): TeachMessage[];
  /** The teacher's messages for a prompt, after its system prompt when the templates have one. */
  asTeacher(content: string): TeachMessage[];
  /** The bare question as the student sees it without guidance. */
  baselinePrompt: string;
  warnings: PhaseWarning[];
}

/** The settings of one interaction, each option checked and defaulted. */
function interaction<T extends TeachingTask>(options: RunTeachingOptions<T>): Interaction<T> {
  const templates = teachingTemplates(options.templates);
  const withSystem =
    (system: string | undefined) =>
    (content: string): TeachMessage[] => [
      ...(system ? [{ role: "system" as const, content: system }] : []),
      { role: "user", content },
    ];
  return {
    options,
    templates,
    rewardConfig: adaptiveTeachingRewardConfig(options.reward),
    counter: options.tokenCounter ?? approximateTokenCounter,
    maxTeacherTokens: positiveInteger(options.maxTeacherTokens, 1024, "maxTeacherTokens"),
    maxSolutionTokens: positiveInteger(options.maxSolutionTokens, 1024, "maxSolutionTokens"),
    solutionLogprobs: options.solutionLogprobs ? { logprobs: options.solutionLogprobs } : {},
    studentSampling: {
      temperature: temperature(options.studentTemperature, "studentTemperature"),
      signal: options.signal,
    },
    teacherSampling: {
      temperature: temperature(options.teacherTemperature, "teacherTemperature"),
      signal: options.signal,
    },
    answers: options.answers ?? solutionAnswers(options.task.solution),
    asStudent: withSystem(templates.studentSystem),
    asTeacher: withSystem(templates.teacherSystem),
    baselinePrompt: renderTemplate(templates.baseline, { question: options.task.question }),
    warnings: [],
  };
}

/** The taught part of an interaction: the calls in protocol order and what the teacher said. */
interface TaughtPart {
  phases: TeachingPhaseRecord[];
  approach: string | null;
  thinking: string | null;
  teaching: string;
  diagnosis: Diagnosis | null;
}

/** The student's solution phase on `prompt`. */
function solutionCall<T extends TeachingTask>(
  run: Interaction<T>,
  prompt: string,
): Promise<TeachingPhaseRecord> {
  return callPhase("solution", "student", run.options.student, run.asStudent(prompt), {
    ...run.studentSampling,
    maxTokens: run.maxSolutionTokens,
    ...run.solutionLogprobs,
  });
}

/** Probe, teaching and the guided solution (mode `off`: the solution alone). */
async function taughtPart<T extends TeachingTask>(run: Interaction<T>): Promise<TaughtPart> {
  const { student, teacher, task, mode } = run.options;
  const { templates } = run;
  if (mode === "off" || !teacher) {
    const solution = await solutionCall(run, run.baselinePrompt);
    return { phases: [solution], approach: null, thinking: null, teaching: "", diagnosis: null };
  }
  const probe = await callPhase(
    "probe",
    "student",
    student,
    run.asStudent(renderTemplate(templates.probe, { question: task.question })),
    { ...run.studentSampling, maxTokens: templates.maxProbeTokens },
  );
  const held = truncateProbe(probe.output, templates.maxProbeTokens, {
    reportedTokens: probe.completionTokens,
    counter: run.counter,
  });
  run.warnings.push(...withPhase("probe", held.warnings));

  const teacherPrompt = renderTemplate(
    mode === "always" ? templates.teacherAlways : templates.teacherAdaptive,
    {
      question: task.question,
      approach: held.approach || "(the student gave no approach)",
    },
  );
  const teaching = await callPhase("teaching", "teacher", teacher, run.asTeacher(teacherPrompt), {
    ...run.teacherSampling,
    maxTokens: run.maxTeacherTokens,
  });
  const ungrounded = run.options.ungroundedClaims;
  const read = parseTeacherOutput(teaching.output, {
    answers: run.answers,
    leakPolicy: run.options.leakPolicy,
    ...(ungrounded ? { ungroundedClaims: (text: string) => ungrounded(task.question, text) } : {}),
  });
  run.warnings.push(...withPhase("teaching", read.warnings));

  const prompt = read.teaching
    ? renderTemplate(templates.studentWithGuidance, { question: task.question, teaching: read.teaching })
    : run.baselinePrompt;
  const solution = await solutionCall(run, prompt);
  return {
    phases: [probe, teaching, solution],
    approach: held.approach,
    thinking: read.thinking,
    teaching: read.teaching,
    diagnosis: read.diagnosis,
  };
}

/** Adds the outcome, and the reward when a baseline ran with a teacher, to a run judged by `verify`. */
async function scoreRun<T extends TeachingTask>(
  result: TeachingRun,
  verify: Verify<T>,
  { options, rewardConfig }: Interaction<T>,
  solutionRecord: TeachingPhaseRecord,
  baselineRecord: TeachingPhaseRecord | undefined,
): Promise<void> {
  const { judgement, teachingTokens, solution, baseline } = result;
  const taughtScore = await score(verify, solution, options.task);
  const baselineScore = baseline ? await score(verify, baseline, options.task) : undefined;
  result.outcome = {
    judgement,
    taughtScore,
    teachingTokens,
    taughtTokens: solutionRecord.completionTokens,
    completed: solution.completed,
    ...(baselineScore === undefined || !baselineRecord
      ? {}
      : { baselineScore, baselineTokens: baselineRecord.completionTokens }),
  };
  if (baselineScore !== undefined && baselineRecord && options.mode !== "off")
    result.reward = adaptiveTeachingReward(
      {
        taughtScore,
        baselineScore,
        teachingTokens,
        taughtTokens: solutionRecord.completionTokens,
        baselineTokens: baselineRecord.completionTokens,
      },
      rewardConfig,
    );
}

/**
 * Runs one adaptive teaching interaction: the student states its approach in at most
 * maxProbeTokens, the teacher diagnoses it and teaches (nothing, a hint, or full scaffolding), and
 * the student solves with the guidance in context. With a baseline the same student also solves
 * without guidance (concurrently), which `verify` turns into an outcome and a reward.
 * Model output never throws: malformed output comes back as `warnings`. Bad options and broken
 * ChatModel results throw InvalidInputError.
 */
export async function runTeaching<T extends TeachingTask>(
  options: RunTeachingOptions<T>,
): Promise<TeachingRun> {
  checkRunTeachingOptions(options);
  const { student, mode, verify } = options;
  const run = interaction(options);
  const { warnings } = run;

  const runBaseline = options.baseline ?? verify !== undefined;
  const baselineCall = runBaseline
    ? callPhase("baseline", "student", student, run.asStudent(run.baselinePrompt), {
        ...run.studentSampling,
        maxTokens: run.maxSolutionTokens,
      })
    : undefined;

  const [taught, baselineRecord] = await Promise.all([taughtPart(run), baselineCall]);
  const phases = baselineRecord ? [...taught.phases, baselineRecord] : taught.phases;
  const solutionRecord = taught.phases[taught.phases.length - 1];
  const solution = { ...parseStudentOutput(solutionRecord.output), text: solutionRecord.output };
  warnings.push(...withPhase("solution", solution.warnings));
  const baseline = baselineRecord && {
    ...parseStudentOutput(baselineRecord.output),
    text: baselineRecord.output,
  };
  if (baseline) warnings.push(...withPhase("baseline", baseline.warnings));

  const { judgement, judgementSource, warning } = judge(mode, taught.diagnosis, taught.teaching);
  if (warning) warnings.push(warning);

  const result: TeachingRun = {
    mode,
    phases,
    approach: taught.approach,
    judgement,
    judgementSource,
    thinking: taught.thinking,
    teaching: taught.teaching,
    teachingTokens: taught.teaching ? run.counter.count(taught.teaching) : 0,
    solution,
    ...(baseline ? { baseline } : {}),
    warnings,
  };
  if (verify) await scoreRun(result, verify, run, solutionRecord, baselineRecord);
  return result;
}
