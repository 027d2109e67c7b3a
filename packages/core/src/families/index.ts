import { arithFamily } from "./arith.ts";
import { orderdeskFamily } from "./orderdesk.ts";
import { TaskFamilyRegistry } from "./registry.ts";
import { toolcallFamily } from "./toolcall.ts";

export { arithFamily } from "./arith.ts";
export { checkTaskFamily, defineTaskFamily } from "./define-task-family.ts";
export { JsonFamilySpec, jsonTaskFamily } from "./json-family.ts";
export { orderdeskFamily } from "./orderdesk.ts";
export { familyPrompt, generateTasks, TaskFamilyRegistry } from "./registry.ts";
export { toolcallFamily } from "./toolcall.ts";
export { verifyTask } from "./verify-task.ts";

/** The process's families: the built-ins, then whatever a module path, a recipe or a tenant registers. */
export const taskFamilies = new TaskFamilyRegistry()
  .register(toolcallFamily)
  .register(arithFamily)
  .register(orderdeskFamily);

/** The family of an env id in the process's registry; throws an InvalidInputError listing the known ids otherwise. */
export function getTaskFamily(env: string): ReturnType<TaskFamilyRegistry["get"]> {
  return taskFamilies.get(env);
}
