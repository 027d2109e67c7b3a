export {
  applyOverrides,
  checkTunableOverrides,
  loadRecipe,
  parseOverride,
  parseOverrideValue,
  parseRecipe,
  readRecipeYaml,
  registerRecipeFamilies,
} from "./load-recipe.ts";
export {
  DataBlock,
  LEARNING_RATE_DECAY,
  ModelBlock,
  overridesForAlgorithm,
  Recipe,
  type RecipeInput,
  RewardBlock,
  type SftWarmUp,
  SftWarmUpBlock,
  TrainerBlock,
  TUNABLE_RECIPE_KEYS,
} from "./recipe-schema.ts";
