import type { TaskFamily } from "../tasks/task-family.ts";
import { arithFamily } from "./arith/arith-family.ts";
import { orderdeskFamily } from "./orderdesk/orderdesk-family.ts";
import { TaskFamilyRegistry } from "./registry.ts";
import { toolcallFamily } from "./toolcall/toolcall-family.ts";

/** The process's families: the built-ins, then whatever a module path, a recipe or a tenant registers. */
export const taskFamilies = new TaskFamilyRegistry()
  .register(toolcallFamily)
  .register(arithFamily)
  .register(orderdeskFamily);

/** The family a recipe or a request trains and serves when it names none. */
export const DEFAULT_ENV = toolcallFamily.env;

/** The shipped base model of the default family (`models/README.md`): the starting model a recipe names none. */
export const DEFAULT_BASE_MODEL = "models/toolcall-base";

/** The family of an env id in the process's registry; throws an InvalidInputError listing the known ids otherwise. */
export function getTaskFamily(env: string): TaskFamily {
  return taskFamilies.get(env);
}
