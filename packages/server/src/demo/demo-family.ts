import { DEFAULT_ENV, type TaskFamily, taskFamilies } from "@arc/core";

/** A family that generates its own tasks, as the demo's agent needs. */
type GeneratingFamily = TaskFamily & Required<Pick<TaskFamily, "generate">>;

/** The default family, which generates its tasks. */
function defaultFamily(): GeneratingFamily {
  const family = taskFamilies.get(DEFAULT_ENV);
  if (!family.generate) throw new Error(`the demo's family ${family.env} generates no tasks`);
  return family as GeneratingFamily;
}

/**
 * The family the demo's agent works in: the default one (`DEFAULT_ENV`). Its hooks give the agent its tasks, prompt
 * and tools and the corrections their reference answers; its shipped base model and recipes are named after it.
 */
export const DEMO_FAMILY: GeneratingFamily = defaultFamily();

/** A shipped recipe of the demo's family, `recipes/<env>-<kind>.yaml`. */
export function demoRecipe(kind: "sft" | "dpo" | "lora-sft"): string {
  return `recipes/${DEMO_FAMILY.env}-${kind}.yaml`;
}

/** The name a model of the demo's family registers under: `<env>-<what>` (its shipped base is `<env>-base`). */
export function demoModelName(what: string): string {
  return `${DEMO_FAMILY.env}-${what}`;
}
