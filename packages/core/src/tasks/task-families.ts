import { InvalidInputError } from "../errors/index.ts";
import { arithFamily } from "./arith.ts";
import { orderdeskFamily } from "./orderdesk.ts";
import type { TaskFamily } from "./task-family.ts";
import { toolcallFamily } from "./toolcall.ts";

/** The built-in families by env id. */
export const TASK_FAMILIES: Readonly<Record<string, TaskFamily>> = {
  toolcall: toolcallFamily,
  arith: arithFamily,
  orderdesk: orderdeskFamily,
};

/** The built-in family of an env id; throws an InvalidInputError listing the known ids otherwise. */
export function getTaskFamily(env: string): TaskFamily {
  const family = Object.hasOwn(TASK_FAMILIES, env) ? TASK_FAMILIES[env] : undefined;
  if (!family) {
    throw new InvalidInputError(
      `env: expected one of ${Object.keys(TASK_FAMILIES).join(", ")}, got ${JSON.stringify(env)}`,
      {
        field: "env",
      },
    );
  }
  return family;
}
