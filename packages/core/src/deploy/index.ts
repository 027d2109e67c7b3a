export { CanaryPolicy, type CanaryPolicyInput } from "./canary-policy.ts";
export { type ArmCounts, canarySprt, type SprtResult } from "./canary-sprt.ts";
export { type CanaryState, type CanaryStep, decideCanaryStep } from "./canary-step.ts";
export { routesToCanary, stickyBucket } from "./sticky-bucket.ts";
