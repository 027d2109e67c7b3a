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
