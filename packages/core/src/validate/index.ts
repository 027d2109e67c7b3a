export { binomialUpperTail, type PairedWorseTest, pairedWorseTest } from "./binomial-test.ts";
export {
  decideValidation,
  type GateCheck,
  MIN_COUNTED_GENERAL_ITEMS,
  type ModelOutcome,
  type SliceReport,
  type ValidationItem,
  type ValidationReport,
} from "./decide-validation.ts";
export { GeneralCheck, GeneralItem, generalMessages, judgeGeneral } from "./general-slice.ts";
export { type HolmDecision, holmBonferroni } from "./holm-bonferroni.ts";
export { nonDegradationRate, type PairedScore } from "./non-degradation-rate.ts";
export {
  builtinSafetySlice,
  judgeSafety,
  type SafetyCheck,
  type SafetyItem,
  type SafetyJudgement,
} from "./safety-slice.ts";
export { ValidationGates, type ValidationGatesInput } from "./validation-gates.ts";
