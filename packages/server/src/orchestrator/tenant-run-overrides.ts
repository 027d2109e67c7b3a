import { InvalidInputError, type TaskFamilyRegistry } from "@arc/core";
import { checkTunableOverrides, parseOverride } from "@arc/rl";

/**
 * Checks the overrides of a run a tenant asked for: `data.env` may name a task family the tenant can train (one it
 * registered, or one of the server's), every other key must be a tunable knob within its cap (TUNABLE_RECIPE_KEYS).
 * Throws naming the key and the reason; the model, datasets and modules stay the server's.
 */
export function checkTenantRunOverrides(
  overrides: readonly string[],
  families: Pick<TaskFamilyRegistry, "find" | "envs">,
): void {
  const knobs: string[] = [];
  for (const override of overrides) {
    const { key, value } = parseOverride(override);
    if (key !== "data.env") {
      knobs.push(override);
      continue;
    }
    if (typeof value !== "string" || !families.find(value)) {
      throw new InvalidInputError(
        `overrides: data.env=${String(value)} names no task family of yours; register it first (PUT /v1/task-families/<env> with its spec as JSON; "arc families" lists only the families of a local process) or name one of ${families.envs().join(", ")}`,
        { field: "overrides" },
      );
    }
  }
  try {
    checkTunableOverrides(knobs);
  } catch (error) {
    if (!InvalidInputError.isInstance(error) || !/is not a key/.test(error.message)) throw error;
    throw new InvalidInputError(`${error.message}, and data.env (a task family of yours to train)`, {
      field: "overrides",
    });
  }
}
