import type { Recipe } from "../../recipe/index.ts";
import { dpoStrategy } from "./dpo-objective.ts";
import { grpoStrategy } from "./grpo-objective.ts";
import type { AlgorithmStrategy, TrainerOf } from "./objective.ts";
import { sftStrategy } from "./sft-objective.ts";

/** The strategy of each `trainer.algorithm`. */
const STRATEGIES: { [A in Recipe["trainer"]["algorithm"]]: AlgorithmStrategy<TrainerOf<A>> } = {
  sft: sftStrategy,
  dpo: dpoStrategy,
  grpo: grpoStrategy,
};

/** The strategy that trains `trainer`'s algorithm. */
export function algorithmStrategy(trainer: Recipe["trainer"]): AlgorithmStrategy<Recipe["trainer"]> {
  // each strategy takes its own algorithm's trainer block, which is the block it is looked up by
  return STRATEGIES[trainer.algorithm] as AlgorithmStrategy<Recipe["trainer"]>;
}
