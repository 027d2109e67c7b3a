import type { InferenceEngine, StepMetrics, Task, TrainEngine } from "@arc/core";
import { sftBatch } from "../algo/index.ts";
import { batchAt } from "../data/index.ts";
import type { RenderExample } from "../run/engine-factory.ts";
import {
  type TeacherGrpoSettings,
  type TeacherGrpoStepResult,
  teacherGrpoStep,
} from "./teacher-grpo-step.ts";
import type { TeachingExample } from "./teaching-examples.ts";
import type { TeachingRewarder } from "./teaching-rewarder.ts";

/**
 * SFT warm-up of a teacher: masked NLL on the reference teacher output of each example (the prompt
 * carries no loss), seeded data order, `steps` optimizer steps of `batchSize` examples.
 */
export async function trainTeacherSft(args: {
  trainer: TrainEngine;
  examples: readonly TeachingExample[];
  render: RenderExample;
  steps: number;
  batchSize: number;
  seed: number;
  signal?: AbortSignal;
  onStep?: (step: number, metrics: StepMetrics) => void | Promise<void>;
}): Promise<void> {
  if (args.examples.length === 0)
    throw new RangeError("examples: expected at least one teaching example, got none");
  const rows = args.examples.map((e) => ({ messages: e.messages, reply: e.reply, guided: false }));
  for (let step = 1; step <= args.steps; step++) {
    args.signal?.throwIfAborted();
    const metrics = await args.trainer.step(sftBatch(rows, args.render, step, args.batchSize, args.seed), {
      kind: "sft",
    });
    await args.onStep?.(step, metrics);
  }
}

/**
 * GRPO of a teacher against a frozen student: each step takes `promptsPerStep` tasks in a seeded
 * order, runs `teacherGrpoStep` and, when the trainer stepped, syncs the generator to the new policy
 * (on-policy: the generator is never more than the current step behind).
 */
export async function trainTeacherGrpo(args: {
  generator: InferenceEngine;
  trainer: TrainEngine;
  rewarder: TeachingRewarder;
  tasks: readonly Task[];
  steps: number;
  promptsPerStep: number;
  settings: Omit<TeacherGrpoSettings, "seed">;
  seed: number;
  signal?: AbortSignal;
  onStep?: (step: number, result: TeacherGrpoStepResult) => void | Promise<void>;
}): Promise<void> {
  if (args.tasks.length === 0) throw new RangeError("tasks: expected at least one task, got none");
  for (let step = 1; step <= args.steps; step++) {
    args.signal?.throwIfAborted();
    const tasks = batchAt(step, args.promptsPerStep, args.tasks.length, args.seed).map((i) => args.tasks[i]);
    const result = await teacherGrpoStep({
      generator: args.generator,
      trainer: args.trainer,
      rewarder: args.rewarder,
      tasks,
      settings: { ...args.settings, seed: args.seed + step },
      signal: args.signal,
    });
    if (result.metrics) await args.generator.setWeights(step, await args.trainer.weights());
    await args.onStep?.(step, result);
  }
}
