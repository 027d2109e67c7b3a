import { scheduledSftBatch } from "../../algo/sft-batch.ts";
import { type AlgorithmStrategy, type TrainerOf, trainedStep } from "./objective.ts";

/** SFT: each step learns the next `promptsPerStep` examples of the data's schedule by next-token likelihood. */
export const sftStrategy: AlgorithmStrategy<TrainerOf<"sft">> = {
  updatesPerStep: () => 1,
  async open({ recipe, trainer, train, data, renderExample }) {
    return {
      async train(step) {
        const batch = scheduledSftBatch(
          data.examples,
          renderExample,
          recipe.data.skipSteps + step,
          trainer.promptsPerStep,
          recipe.data,
        );
        const m = await train.step(batch, { kind: "sft" });
        return trainedStep(step, "sft", m, {
          reward: null,
          accuracy: null,
          advantageMean: null,
          advantageStd: null,
          used: trainer.promptsPerStep,
          skipped: 0,
          generatorStep: step - 1,
          staleness: 0,
          generatedTokens: 0,
        });
      },
    };
  },
};
