import type { InferenceEngine, StepMetrics, Task, TrainEngine } from "@arc/core";
import { grpoBatch } from "../algo/grpo-batch.ts";
import type { AdvantageNormalization } from "../algo/index.ts";
import type { ScoredGroup } from "../rollout/index.ts";
import { teacherMessages } from "./teacher-messages.ts";
import type { TeachingRewarder, TeachingScore } from "./teaching-rewarder.ts";

/** Settings of one teacher GRPO step. */
export interface TeacherGrpoSettings {
  /** G: teacher samples per task. */
  samplesPerPrompt: number;
  /** Sampling temperature of the teacher. */
  temperature: number;
  /** Budget of each teacher output, thinking included. */
  maxTokens: number;
  /** Advantage normalization (`grpo` or `dr-grpo`). */
  normalization: AdvantageNormalization;
  /** PPO clip range. */
  clipEpsilon: number;
  /** Weight of KL(policy || reference); 0 disables. */
  klCoef: number;
  /** Seed of this step's sampling. */
  seed: number;
}

/** What one teacher GRPO step did. */
export interface TeacherGrpoStepResult {
  /** The optimizer step's metrics; null when every group's rewards tied (no signal, no step). */
  metrics: StepMetrics | null;
  /** Mean reward over every sample. */
  meanReward: number;
  /** Share of samples whose teaching did not make the student worse. */
  ndr: number;
  /** Share of samples after which the taught student was right. */
  taughtAccuracy: number;
  /** Mean teaching tokens per sample. */
  meanTeachingTokens: number;
  /** With a reward on the reference's likelihood: the mean gain in the student's probability of it; else null. */
  meanLikelihoodGain: number | null;
  /** Groups that carried signal / groups whose rewards tied. */
  groups: number;
  uniform: number;
  /** Every sample's score, task by task. */
  scores: TeachingScore[][];
}

/**
 * One GRPO step of the teacher against a frozen student: for each task, the student's probe
 * (cached), G teacher samples from `generator`, each scored by `rewarder` (the student with and
 * without the teaching), group-relative advantages, one clipped-ratio step of `trainer` with the
 * generator's logprobs as the behaviour policy. The caller syncs the generator's weights.
 */
export async function teacherGrpoStep(args: {
  generator: InferenceEngine;
  trainer: TrainEngine;
  rewarder: TeachingRewarder;
  tasks: readonly Task[];
  settings: TeacherGrpoSettings;
  signal?: AbortSignal;
}): Promise<TeacherGrpoStepResult> {
  const { generator, trainer, rewarder, tasks, settings } = args;
  const approaches = await Promise.all(tasks.map((task) => rewarder.probe(task)));
  const samples = await generator.generate(
    tasks.map((task, i) => ({
      id: task.id,
      messages: teacherMessages(rewarder.templates, "adaptive", task.question, approaches[i]),
      n: settings.samplesPerPrompt,
      temperature: settings.temperature,
      maxTokens: settings.maxTokens,
      seed: settings.seed * 1000 + i,
    })),
    args.signal ? { signal: args.signal } : {},
  );
  const groups: ScoredGroup[] = [];
  const scores: TeachingScore[][] = [];
  for (const [i, task] of tasks.entries()) {
    const group = samples.slice(i * settings.samplesPerPrompt, (i + 1) * settings.samplesPerPrompt);
    const scored = await Promise.all(group.map((sample) => rewarder.score(task, sample.text)));
    scores.push(scored);
    const versions = group.flatMap((s) => s.outputVersions);
    groups.push({
      task,
      samples: group,
      rewards: scored.map((s) => s.reward),
      passed: scored.map((s) => s.taughtScore === 1),
      versionRange:
        versions.length > 0
          ? [Math.min(...versions), Math.max(...versions)]
          : [generator.getVersion(), generator.getVersion()],
    });
  }
  const built = grpoBatch(groups, settings.normalization, true);
  const metrics =
    built.groups === 0
      ? null
      : await trainer.step(built.batch, {
          kind: "grpo",
          clipEpsilon: settings.clipEpsilon,
          klCoef: settings.klCoef,
          aggregation: settings.normalization === "dr-grpo" ? "dr-grpo" : "token",
        });
  const flat = scores.flat();
  const gains = flat.flatMap((s) => (s.likelihood ? [s.likelihood.taught - s.likelihood.baseline] : []));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return {
    metrics,
    meanReward: mean(flat.map((s) => s.reward)),
    ndr: mean(flat.map((s) => (s.taughtScore >= s.baselineScore ? 1 : 0))),
    taughtAccuracy: mean(flat.map((s) => s.taughtScore)),
    meanTeachingTokens: mean(flat.map((s) => s.teachingTokens)),
    meanLikelihoodGain: gains.length > 0 ? mean(gains) : null,
    groups: built.groups,
    uniform: built.uniform,
    scores,
  };
}
