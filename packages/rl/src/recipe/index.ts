export {
  applyOverrides,
  loadRecipe,
  parseOverrideValue,
  parseRecipe,
  readRecipeYaml,
} from "./load-recipe.ts";
export {
  DataBlock,
  LEARNING_RATE_DECAY,
  ModelBlock,
  Recipe,
  type RecipeInput,
  RewardBlock,
  TrainerBlock,
} from "./recipe-schema.ts";
