import { DEFAULT_ENV } from "@arc/core";

/** The shipped recipe (`recipes/<name>.yaml`) a run trains when it names none: the default family's DPO recipe. */
export const DEFAULT_RECIPE_NAME = `${DEFAULT_ENV}-dpo`;

/** The default recipe's file, relative to the repository root. */
export const DEFAULT_RECIPE_FILE = `recipes/${DEFAULT_RECIPE_NAME}.yaml`;
