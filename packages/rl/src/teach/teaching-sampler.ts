import type { GroupSampler } from "../rollout/index.ts";
import type { ScoredGroup } from "../rollout/scored-group.ts";
import { teacherMessages } from "./teacher-messages.ts";
import type { TeachingRewarder } from "./teaching-rewarder.ts";

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/**
 * Teacher GRPO's rollouts: for each task, the frozen student's probe (cached by the rewarder), n teachings sampled
 * from the teacher being trained, each rewarded by what it does to the student (`TeachingRewarder.score`). A sample
 * passes when the taught student is right. The step's record gets the teachings' NDR (share that left the student no
 * worse), their mean length in the student's tokens and, with the reference-likelihood score, the mean gain in the
 * student's probability of the reference answer.
 */
export function teachingSampler(rewarder: TeachingRewarder): GroupSampler {
  return async (generator, tasks, options) => {
    const approaches = await Promise.all(tasks.map((task) => rewarder.probe(task)));
    const samples = await generator.generate(
      tasks.map((task, i) => ({
        id: task.id,
        messages: teacherMessages(rewarder.templates, "adaptive", task.question, approaches[i]),
        n: options.n,
        temperature: options.temperature,
        maxTokens: options.maxTokens,
        seed: options.seedOf(task),
      })),
      options.signal ? { signal: options.signal } : {},
    );
    const groups: ScoredGroup[] = [];
    const scores = [];
    for (const [i, task] of tasks.entries()) {
      const group = samples.slice(i * options.n, (i + 1) * options.n);
      if (group.length < options.n) continue;
      const scored = await Promise.all(group.map((sample) => rewarder.score(task, sample.text)));
      scores.push(...scored);
      const versions = group.flatMap((s) => s.outputVersions);
      const version = generator.getVersion();
      groups.push({
        task,
        samples: group,
        rewards: scored.map((s) => s.reward),
        passed: scored.map((s) => s.taughtScore === 1),
        versionRange:
          versions.length > 0 ? [Math.min(...versions), Math.max(...versions)] : [version, version],
      });
    }
    const gains = scores.flatMap((s) => (s.likelihood ? [s.likelihood.taught - s.likelihood.baseline] : []));
    return {
      groups,
      extra: {
        teachingNdr: mean(scores.map((s) => (s.taughtScore >= s.baselineScore ? 1 : 0))),
        teachingTokens: mean(scores.map((s) => s.teachingTokens)),
        ...(gains.length > 0 ? { likelihoodGain: mean(gains) } : {}),
      },
    };
  };
}
