import {
  type ChatModel,
  runTeaching,
  type Task,
  type TeachingMetrics,
  type TeachingMode,
  type TeachingOutcome,
  type TeachingRun,
  type TeachingTemplatesInput,
  type TokenCounter,
  teachingMetrics,
  teachingMetricsBy,
  type UngroundedClaims,
  type Verify,
} from "@arc/core";

/** What `evaluateTeaching` measured: every run, its outcomes, the metrics overall and by probe judgement. */
export interface TeachingEvaluation {
  /** One run per task, in task order. */
  runs: TeachingRun[];
  /** One outcome per task (with its baseline). */
  outcomes: TeachingOutcome[];
  /** Metrics over every task. */
  overall: TeachingMetrics;
  /** Metrics of the tasks the probe judged strong, weak, or could not judge. */
  byJudgement: Map<string, TeachingMetrics>;
}

/** Options of `evaluateTeaching`. */
export interface EvaluateTeachingOptions {
  /** The student being helped (greedy). */
  student: ChatModel;
  /** The teacher; none with mode `off`. */
  teacher?: ChatModel;
  /** How the teacher intervenes. */
  mode: TeachingMode;
  /** The held-out tasks. */
  tasks: readonly Task[];
  /** Judges an attempt. */
  verify: Verify<Task>;
  /** Protocol templates. */
  templates?: TeachingTemplatesInput;
  /** Counts tokens in the student's units. */
  tokenCounter?: TokenCounter;
  /** Budget of the teacher's output (default 200). */
  maxTeacherTokens?: number;
  /** Budget of each student solution (default 128). */
  maxSolutionTokens?: number;
  /**
   * Whether an output is a complete answer, for families whose student does not write `<solution>`
   * (a student trained on bare answers writes none); default: the protocol's closed `<solution>`.
   */
  completed?: (text: string) => boolean;
  /** The values a task's teaching must not reveal (redacted when it does); default: the protocol's own. */
  answersOf?: (task: Task) => string[];
  /** The claims of a teaching its question does not support, cut out before the student reads it (see `runTeaching`). */
  ungroundedClaims?: UngroundedClaims;
  /** Most interactions in flight (default 16). */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * Runs the teaching protocol with a baseline on every task and computes the learning metrics
 * (accuracy, NDR, teaching tokens, TES...), overall and split by the probe's judgement.
 */
export async function evaluateTeaching(options: EvaluateTeachingOptions): Promise<TeachingEvaluation> {
  const runs: TeachingRun[] = new Array(options.tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < options.tasks.length) {
      const i = next++;
      runs[i] = await runTeaching({
        student: options.student,
        teacher: options.teacher,
        task: options.tasks[i],
        mode: options.mode,
        verify: options.verify,
        baseline: true,
        templates: options.templates,
        tokenCounter: options.tokenCounter,
        maxTeacherTokens: options.maxTeacherTokens ?? 200,
        maxSolutionTokens: options.maxSolutionTokens ?? 128,
        ...(options.answersOf ? { answers: options.answersOf(options.tasks[i]) } : {}),
        ungroundedClaims: options.ungroundedClaims,
        signal: options.signal,
      });
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(options.concurrency ?? 16, options.tasks.length) }, worker),
  );
  const outcomes = runs.map((run) => {
    const outcome = run.outcome as TeachingOutcome;
    return options.completed ? { ...outcome, completed: options.completed(run.solution.text) } : outcome;
  });
  return {
    runs,
    outcomes,
    overall: teachingMetrics(outcomes),
    byJudgement: teachingMetricsBy(outcomes, "judgement"),
  };
}
