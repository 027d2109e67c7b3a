import { grpoBatch } from "../../algo/grpo-batch.ts";
import { grpoUpdates } from "../grpo-updates.ts";
import { type AlgorithmStrategy, type TrainerOf, trainedStep } from "./objective.ts";
import { rolloutFigures, stepRollouts, withRolloutExtra } from "./step-rollouts.ts";

/** Mean and population standard deviation; nulls for no values. */
function meanStd(values: readonly number[]): [number | null, number | null] {
  if (values.length === 0) return [null, null];
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const std = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
  return [mean, std];
}

/**
 * GRPO: each step's groups get group-relative advantages (uniform groups dropped) and take `ppoEpochs` clipped
 * updates. It samples on-policy: in the trainer's thread the generator takes the policy after every step, and
 * rollouts run ahead of the policy only with `asyncRollouts`, by at most `maxStaleness` steps.
 */
export const grpoStrategy: AlgorithmStrategy<TrainerOf<"grpo">> = {
  updatesPerStep: (t) => t.ppoEpochs,
  async open({ recipe, trainer: t, train, data, openRollouts }) {
    const source = await openRollouts(
      t.asyncRollouts ? { mode: "async", trainer: t } : { mode: "sync", trainer: t, syncInterval: 1 },
    );
    return {
      async train(step, signal) {
        const rollouts = await stepRollouts(source, recipe, data, step, signal);
        if (!rollouts) return undefined;
        const figures = rolloutFigures(step, rollouts);
        // stale rollouts sampled at temperature 1 carry the behaviour policy's own log-probs
        const out = grpoBatch(
          rollouts.groups,
          t.normalization,
          t.decoupled || (figures.staleness > 0 && t.temperature === 1),
        );
        const m =
          out.groups > 0
            ? await grpoUpdates(
                train,
                out.batch,
                {
                  kind: "grpo",
                  clipEpsilon: t.clipEpsilon,
                  klCoef: t.klCoef,
                  entropyCoef: t.entropyCoef,
                  aggregation: t.normalization === "dr-grpo" ? "dr-grpo" : "token",
                  decoupled: t.decoupled,
                  behaviourWeightCap: t.behaviourWeightCap,
                },
                t.ppoEpochs,
              )
            : null;
        const [advantageMean, advantageStd] = meanStd(out.advantages);
        const counts = { advantageMean, advantageStd, used: out.groups, skipped: out.uniform };
        return withRolloutExtra(trainedStep(step, "grpo", m, { ...figures, ...counts }), rollouts);
      },
    };
  },
};
