import type { Verifier } from "./verifier.ts";
import { verifyArith } from "./verify-arith.ts";
import { verifyOrderdesk } from "./verify-orderdesk.ts";
import { verifyToolcall } from "./verify-toolcall.ts";

/** The verifiers of the built-in task families, by env id. */
export const BUILTIN_VERIFIERS: Readonly<Record<string, Verifier>> = {
  toolcall: verifyToolcall,
  arith: verifyArith,
  orderdesk: verifyOrderdesk,
};
