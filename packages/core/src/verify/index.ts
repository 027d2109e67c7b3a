export { BUILTIN_VERIFIERS } from "./builtin-verifiers.ts";
export { differingArgs, normalizedEqual, normalizeValue } from "./normalize-value.ts";
export {
  fail,
  PASS,
  unknown,
  type Verifier,
  type VerifierFailure,
  type VerifierFailureClass,
  type VerifyInput,
  type VerifyResult,
} from "./verifier.ts";
export { verifyArith } from "./verify-arith.ts";
export { verifyOrderdesk } from "./verify-orderdesk.ts";
export { verifyTask } from "./verify-task.ts";
export { verifyToolCall, verifyToolcall } from "./verify-toolcall.ts";
