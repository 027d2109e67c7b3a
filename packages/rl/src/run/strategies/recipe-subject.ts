import { evaluate } from "../../eval/index.ts";
import type { Recipe } from "../../recipe/index.ts";
import { DEFAULT_MIN_JUDGE_SCORED_SHARE, judgeCoverageShortfall } from "../../reward/index.ts";
import { workflowSampler } from "../../rollout/sync-rollout-source.ts";
import { buildReward } from "../build-reward.ts";
import type { RenderExample } from "../engine-factory.ts";
import { loadTrainingData } from "../training-data.ts";
import type { RunSubject } from "./run-subject.ts";

/** A run of the recipe's own data and reward: samples scored by `reward`, the policy judged by the family's verifier. */
export async function recipeSubject(recipe: Recipe, renderExample: RenderExample): Promise<RunSubject> {
  const t = recipe.trainer;
  const data = await loadTrainingData(recipe, renderExample);
  const { reward, judgeUsage } = await buildReward(recipe.reward);
  return {
    data,
    reward,
    sample: workflowSampler(reward, t.algorithm === "sft" ? undefined : t.workflow),
    async evaluate(engine) {
      const result = await evaluate(engine, data.evalTasks, { maxTokens: t.maxTokens });
      return { evalAccuracy: result.accuracy, evalFailureRate: result.failureRate, extra: {} };
    },
    stepExtra(): Record<string, number> {
      // the judge's own calls, not the evaluations'
      const judge = judgeUsage?.();
      if (!judge) return {};
      return {
        judgeCalls: judge.calls,
        judgeTokens: judge.tokens,
        judgeScored: judge.scored,
        judgeUnjudged: judge.unjudged,
      };
    },
    finalShortfall() {
      const judge = judgeUsage?.();
      if (!judge || t.algorithm === "sft") return undefined;
      return judgeCoverageShortfall(
        judge,
        recipe.reward.judge?.minScoredShare ?? DEFAULT_MIN_JUDGE_SCORED_SHARE,
      );
    },
    close: async () => {},
  };
}
