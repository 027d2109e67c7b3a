import { BUILTIN_VERIFIERS, getTaskFamily, type InferenceEngine, type Task } from "@arc/core";

/** What `evaluate` measured on a set of tasks. */
export interface EvalResult {
  /** Share of tasks the verifier passed. */
  accuracy: number;
  /** 1 - accuracy: the figure the failure pipeline tracks. */
  failureRate: number;
  /** Mean output tokens per task. */
  meanTokens: number;
  tasks: number;
}

/** Options of `evaluate`. */
export interface EvaluateOptions {
  /** Output budget per task (default 96). */
  maxTokens?: number;
  /** 0 (default) is greedy decoding: the deterministic answer a deployed model gives. */
  temperature?: number;
  signal?: AbortSignal;
}

/** Judges an inference engine on tasks with their family's verifier (first turn of each task). */
export async function evaluate(
  engine: InferenceEngine,
  tasks: readonly Task[],
  options: EvaluateOptions = {},
): Promise<EvalResult> {
  if (tasks.length === 0) throw new RangeError("tasks: expected at least one task to evaluate, got none");
  const results = await engine.generate(
    tasks.map((task, i) => ({
      id: task.id,
      messages: getTaskFamily(task.env).prompt(task),
      maxTokens: options.maxTokens ?? 96,
      temperature: options.temperature ?? 0,
      seed: i,
    })),
    { signal: options.signal },
  );
  let passed = 0;
  let tokens = 0;
  results.forEach((result, i) => {
    const task = tasks[i];
    const verify = BUILTIN_VERIFIERS[task.env];
    if (verify({ outputs: [result.text], solution: task.solution }).status === "pass") passed++;
    tokens += result.outputTokens.length;
  });
  const accuracy = passed / tasks.length;
  return { accuracy, failureRate: 1 - accuracy, meanTokens: tokens / tasks.length, tasks: tasks.length };
}
