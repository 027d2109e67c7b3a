import { dpoBatch } from "../../algo/dpo-batch.ts";
import { batchAt } from "../../data/index.ts";
import { type AlgorithmStrategy, type TrainerOf, trainedStep } from "./objective.ts";
import { rolloutFigures, stepRollouts, withRolloutExtra } from "./step-rollouts.ts";

/**
 * Semi-online DPO: each step pairs the best and worst of each prompt's samples (plus `data.preferenceMix` of the
 * production preference pairs); the generator takes the policy every `syncInterval` steps, and with
 * `syncReference` the reference model does too.
 */
export const dpoStrategy: AlgorithmStrategy<TrainerOf<"dpo">> = {
  updatesPerStep: () => 1,
  async open({ recipe, trainer: t, train, data, openRollouts }) {
    const source = await openRollouts({
      mode: "sync",
      trainer: t,
      syncInterval: t.syncInterval,
      onSync: t.syncReference ? () => train.syncReference() : undefined,
    });
    const mixCount =
      data.preferences.length > 0 ? Math.round(recipe.data.preferenceMix * t.promptsPerStep) : 0;
    return {
      async train(step, signal) {
        const rollouts = await stepRollouts(source, recipe, data, step, signal);
        if (!rollouts) return undefined;
        const mixed =
          mixCount > 0
            ? batchAt(step, mixCount, data.preferences.length, recipe.data.seed + 1).map(
                (i) => data.preferences[i],
              )
            : [];
        const out = dpoBatch(rollouts.groups, mixed);
        const pairs = out.sampledPairs + out.mixedPairs;
        const m =
          pairs > 0
            ? await train.step(out.batch, {
                kind: "dpo",
                beta: t.beta,
                loss: t.loss,
                entropyCoef: t.entropyCoef,
                nllCoef: t.nllCoef,
              })
            : null;
        const figures = { advantageMean: out.meanMargin, advantageStd: null, used: pairs, skipped: out.ties };
        return withRolloutExtra(
          trainedStep(step, "dpo", m, { ...rolloutFigures(step, rollouts), ...figures }),
          rollouts,
        );
      },
    };
  },
};
