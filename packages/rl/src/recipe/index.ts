export {
  applyOverrides,
  loadRecipe,
  parseOverrideValue,
  parseRecipe,
  readRecipeYaml,
} from "./load-recipe.ts";
export {
  DataBlock,
  ModelBlock,
  Recipe,
  type RecipeInput,
  RewardBlock,
  TrainerBlock,
} from "./recipe-schema.ts";
