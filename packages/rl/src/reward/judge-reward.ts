import {
  createGroupJudge,
  createJudgeDetector,
  getTaskFamily,
  type JudgeBudget,
  type JudgeClient,
  type Rubric,
  taskAnswerTrace,
  taskPrompt,
} from "@arc/core";
import type { GroupReward } from "./group-reward.ts";

/** What a judge reward spent: calls made and tokens they took, samples scored, and samples it could not score. */
export interface JudgeUsage {
  calls: number;
  tokens: number;
  /** Samples given a score (a cached score costs no call). */
  scored: number;
  /** Samples the judge could not score (budget, outage, malformed reply): their groups were left out. */
  unjudged: number;
}

/** Options of a judge reward. */
export interface JudgeRewardOptions {
  rubric: Rubric;
  /** The judge model's name, as its endpoint knows it. */
  model: string;
  client: JudgeClient;
  budget?: JudgeBudget;
  /** `pointwise` (default): each sample judged alone; `group`: the group's samples scored together in one call. */
  mode?: "pointwise" | "group";
}

/**
 * A judge reward (`reward.kind: judge`). Pointwise, each sample, as the answer to its task's prompt (the agent's
 * recorded messages where the task has them), is judged against the rubric by the judge model, and its reward is
 * the verdict's score in [0, 1] (1 − the judge's confidence for a failure, its confidence for a pass). By group
 * (RULER), the judge scores the group's samples against each other in one call. Replies are cached (by prompt,
 * samples, rubric version and model); the calls and tokens are counted.
 */
export function judgeReward(options: JudgeRewardOptions): { reward: GroupReward; usage: () => JudgeUsage } {
  const usage: JudgeUsage = { calls: 0, tokens: 0, scored: 0, unjudged: 0 };
  const counting: JudgeClient = {
    async complete(request) {
      usage.calls++;
      const answer = await options.client.complete(request);
      usage.tokens += answer.tokens ?? 0;
      return answer;
    },
  };
  const settings = {
    rubric: options.rubric,
    model: options.model,
    client: counting,
    ...(options.budget ? { budget: options.budget } : {}),
  };
  const byGroup =
    (group: ReturnType<typeof createGroupJudge>): GroupReward =>
    async ({ task, samples }) => {
      const { messages } = taskPrompt(getTaskFamily(task.env), task);
      const verdict = await group.score(
        messages,
        samples.map((s) => s.text),
      );
      if ("unscored" in verdict) {
        usage.unjudged += samples.length;
        return null;
      }
      usage.scored += samples.length;
      return verdict.scores;
    };
  const pointwise =
    (judge: ReturnType<typeof createJudgeDetector>): GroupReward =>
    async ({ task, samples }) => {
      const family = getTaskFamily(task.env);
      const scores = await Promise.all(
        samples.map(async (sample) => {
          const trace = taskAnswerTrace(family, task, sample.text);
          const verdict = await judge.judge(trace);
          if (verdict.status === "unknown") {
            usage.unjudged++;
            return null;
          }
          usage.scored++;
          return verdict.score;
        }),
      );
      return scores.some((s) => s === null) ? null : (scores as number[]);
    };
  const reward =
    options.mode === "group" ? byGroup(createGroupJudge(settings)) : pointwise(createJudgeDetector(settings));
  return { reward, usage: () => ({ ...usage }) };
}
