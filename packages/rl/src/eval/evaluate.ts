import {
  type GenRequest,
  getTaskFamily,
  type InferenceEngine,
  type Task,
  taskPrompt,
  type VerifyResult,
  verifyTask,
} from "@arc/core";
import { MultiTurnWorkflow } from "../workflow/index.ts";

/** What `evaluate` measured on a set of tasks. */
export interface EvalResult {
  /** Share of tasks the verifier passed. */
  accuracy: number;
  /** 1 - accuracy: the figure the failure pipeline tracks. */
  failureRate: number;
  /** Mean output tokens per task. */
  meanTokens: number;
  /** Whether each task passed, in the order of the tasks given. */
  passed: boolean[];
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

/** The request for a task's first turn. */
function firstTurn(task: Task, id: string, options: { maxTokens?: number; temperature: number }): GenRequest {
  const prompt = taskPrompt(getTaskFamily(task.env), task);
  return {
    id,
    messages: prompt.messages,
    ...(prompt.tools ? { tools: prompt.tools } : {}),
    maxTokens: options.maxTokens ?? 96,
    temperature: options.temperature,
  };
}

/** Whether the task family's verifier passes `text` as the answer to `task`. */
const passes = (task: Task, text: string) => verifyTask(task, [text]).status === "pass";

/** A greedy multi-turn episode in the task family's environment: whether its final verdict passed, and its tokens. */
async function episodeOutcome(
  engine: InferenceEngine,
  task: Task,
  options: { maxTokens?: number; temperature: number; seed: number; signal?: AbortSignal },
): Promise<{ pass: boolean; tokens: number }> {
  const episode = await new MultiTurnWorkflow({
    sampling: { maxTokens: options.maxTokens ?? 96, temperature: options.temperature, seed: options.seed },
    signal: options.signal,
  }).runEpisode(engine, task);
  if (!episode) return { pass: false, tokens: 0 };
  const verdict = (episode.info.steps as { verdict?: VerifyResult }[]).at(-1)?.verdict;
  return {
    pass: verdict?.status === "pass",
    tokens: episode.turns.reduce((a, turn) => a + turn.outputTokens.length, 0),
  };
}

/**
 * Judges an inference engine on tasks with their family's verifier: the first turn of a single-turn task, a whole
 * episode in the family's environment for a multi-turn one.
 */
export async function evaluate(
  engine: InferenceEngine,
  tasks: readonly Task[],
  options: EvaluateOptions = {},
): Promise<EvalResult> {
  if (tasks.length === 0) throw new RangeError("tasks: expected at least one task to evaluate, got none");
  const temperature = options.temperature ?? 0;
  const multiTurn = tasks.map((task) => getTaskFamily(task.env).session !== undefined);
  const single = tasks.flatMap((task, i) => (multiTurn[i] ? [] : [{ task, i }]));
  const [results, episodes] = await Promise.all([
    single.length
      ? engine.generate(
          single.map(({ task, i }) => ({
            ...firstTurn(task, task.id, { maxTokens: options.maxTokens, temperature }),
            seed: i,
          })),
          { signal: options.signal },
        )
      : Promise.resolve([]),
    Promise.all(
      tasks.map((task, i) =>
        multiTurn[i]
          ? episodeOutcome(engine, task, {
              maxTokens: options.maxTokens,
              temperature,
              seed: i,
              signal: options.signal,
            })
          : undefined,
      ),
    ),
  ]);
  const passed = tasks.map(() => false);
  let tokens = 0;
  single.forEach(({ task, i }, k) => {
    passed[i] = passes(task, results[k].text);
    tokens += results[k].outputTokens.length;
  });
  episodes.forEach((outcome, i) => {
    if (!outcome) return;
    passed[i] = outcome.pass;
    tokens += outcome.tokens;
  });
  const accuracy = passed.filter(Boolean).length / tasks.length;
  return {
    accuracy,
    failureRate: 1 - accuracy,
    meanTokens: tokens / tasks.length,
    passed,
    tasks: tasks.length,
  };
}

/** What `sampledPassRate` measured: how often sampling finds an answer the verifier passes. */
export interface SampledPassResult {
  /**
   * Share of tasks with at least one passed answer among `samples` (pass@k). Training on the model's own verified
   * samples (DPO's chosen answers, GRPO's rewarded ones) reinforces answers it samples, so this estimates how far
   * it can reach; more samples per task, partial rewards and generalization reach somewhat further.
   */
  passAtK: number;
  /** Share of all sampled answers that passed. */
  meanPass: number;
  /** Passed samples of each task, in the order of the tasks given. */
  passedPerTask: number[];
  samples: number;
  tasks: number;
}

/** Options of `sampledPassRate`. */
export interface SampledPassOptions {
  /** Answers sampled per task (default 8). */
  samples?: number;
  /** Sampling temperature (default 1, the temperature RL samples at). */
  temperature?: number;
  /** Output budget per answer (default 96). */
  maxTokens?: number;
  signal?: AbortSignal;
}

/** Samples several answers per task and judges each with its family's verifier (first turn of each task). */
export async function sampledPassRate(
  engine: InferenceEngine,
  tasks: readonly Task[],
  options: SampledPassOptions = {},
): Promise<SampledPassResult> {
  if (tasks.length === 0) throw new RangeError("tasks: expected at least one task to sample, got none");
  const samples = options.samples ?? 8;
  if (!Number.isInteger(samples) || samples < 1) {
    throw new RangeError(`samples: expected a positive integer, got ${samples}`);
  }
  const results = await engine.generate(
    tasks.map((task, i) => ({
      ...firstTurn(task, String(i), { maxTokens: options.maxTokens, temperature: options.temperature ?? 1 }),
      n: samples,
      seed: i,
    })),
    { signal: options.signal },
  );
  const passedPerTask = tasks.map(() => 0);
  for (const result of results) {
    const i = Number(result.requestId);
    const task = tasks[i];
    if (result.requestId === undefined || task === undefined) {
      throw new TypeError(
        `engine result: expected the requestId of one of the ${tasks.length} requests echoed, got ${JSON.stringify(result.requestId)}`,
      );
    }
    if (passes(task, result.text)) passedPerTask[i]++;
  }
  const passed = passedPerTask.reduce((a, b) => a + b, 0);
  return {
    passAtK: passedPerTask.filter((p) => p > 0).length / tasks.length,
    meanPass: passed / (tasks.length * samples),
    passedPerTask,
    samples,
    tasks: tasks.length,
  };
}
