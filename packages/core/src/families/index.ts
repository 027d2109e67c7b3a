export { arithFamily } from "./arith.ts";
export { checkTaskFamily, defineTaskFamily } from "./define-task-family.ts";
export { JsonFamilySpec, jsonTaskFamily } from "./json-family.ts";
export { orderdeskFamily } from "./orderdesk.ts";
export { familyPrompt, generateTasks, TaskFamilyRegistry, taskPrompt } from "./registry.ts";
export { DEFAULT_BASE_MODEL, DEFAULT_ENV, getTaskFamily, taskFamilies } from "./task-families.ts";
export { toolcallFamily } from "./toolcall.ts";
export { verifyTask } from "./verify-task.ts";
