import { InvalidInputError } from "../errors/index.ts";
import type { Task } from "../rollout/index.ts";
import { BUILTIN_VERIFIERS } from "./builtin-verifiers.ts";
import type { Verifier, VerifyResult } from "./verifier.ts";

/**
 * Verifies a task's outputs (one per model turn) with the verifier of its env: the reward function of RL
 * (`result.reward`) and the judge of evaluation. Throws an InvalidInputError for an env without a verifier.
 */
export function verifyTask(
  task: Pick<Task, "env" | "solution">,
  outputs: string[],
  verifiers: Readonly<Record<string, Verifier>> = BUILTIN_VERIFIERS,
): VerifyResult {
  const verifier = Object.hasOwn(verifiers, task.env) ? verifiers[task.env] : undefined;
  if (!verifier) {
    throw new InvalidInputError(
      `task.env: expected one of ${Object.keys(verifiers).join(", ")}, got ${JSON.stringify(task.env)}`,
      {
        field: "task.env",
      },
    );
  }
  return verifier({ outputs, solution: task.solution });
}
