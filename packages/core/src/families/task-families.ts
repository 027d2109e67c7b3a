import type { TaskFamily } from "../tasks/task-family.ts";
import { arithFamily } from "./arith.ts";
import { orderdeskFamily } from "./orderdesk.ts";
import { TaskFamilyRegistry } from "./registry.ts";
import { toolcallFamily } from "./toolcall.ts";

/** The process's families: the built-ins, then whatever a module path, a recipe or a tenant registers. */
export const taskFamilies = new TaskFamilyRegistry()
  .register(toolcallFamily)
  .register(arithFamily)
  .register(orderdeskFamily);

/** The family of an env id in the process's registry; throws an InvalidInputError listing the known ids otherwise. */
export function getTaskFamily(env: string): TaskFamily {
  return taskFamilies.get(env);
}
