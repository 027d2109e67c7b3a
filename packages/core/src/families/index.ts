/**
 * `@arc/core/families`: the built-in task families and what their tests, teachings and tools import of them. The
 * registry (`taskFamilies` in `@arc/core`) holds them without this import.
 */
export {
  type ArithSolution,
  arithFamily,
  calculator,
  generateArithTasks,
} from "./arith/index.ts";
export {
  generateOrderdeskTasks,
  type Order,
  type OrderdeskSolution,
  orderdeskFamily,
} from "./orderdesk/index.ts";
export {
  generateToolcallTasks,
  TOOLCALL_GUIDED_STUDENT_TEMPLATE,
  TOOLCALL_TOOLS,
  type ToolcallSolution,
  toolcallConversionClaims,
  toolcallConversionKind,
  toolcallConversions,
  toolcallFamily,
  toolcallRightApproachHint,
  toolcallTeachingHint,
  ungroundedToolcallConversions,
  verifyToolcall,
} from "./toolcall/index.ts";
