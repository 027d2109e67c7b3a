import { InvalidInputError } from "../errors/index.ts";
import type { Task } from "../rollout/index.ts";
import type { VerifyResult } from "../verify/verifier.ts";
import type { TaskFamilyRegistry } from "./registry.ts";
import { taskFamilies } from "./task-families.ts";

/**
 * Verifies a task's outputs (one per model turn) with its family's verifier: the reward function of RL
 * (`result.reward`) and the judge of evaluation. Throws an InvalidInputError for an unknown env or a family
 * without a verifier (judge-only).
 */
export function verifyTask(
  task: Pick<Task, "env" | "solution">,
  outputs: string[],
  registry: TaskFamilyRegistry = taskFamilies,
): VerifyResult {
  const family = registry.get(task.env, "task.env");
  if (!family.verify) {
    throw new InvalidInputError(
      `task.env: the ${JSON.stringify(task.env)} family has no verifier (it is judged, not verified)`,
      { field: "task.env" },
    );
  }
  return family.verify({ outputs, solution: task.solution });
}
