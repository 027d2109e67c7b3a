import type { TenantSchemas } from "../schemas/index.ts";
import type { Feedback, Trace } from "../trace/index.ts";
import type { Verifier } from "../verify/index.ts";
import type { DetectionConfig } from "./detection-config.ts";
import type { Verdict } from "./verdict.ts";

/** What a detector may consult besides the trace. */
export interface DetectContext {
  config: DetectionConfig;
  /** Feedback received for this trace so far (may arrive after the trace: detect again then). */
  feedback: readonly Feedback[];
  /** The verifier registered for an env id, if any. */
  verifierFor(env: string): Verifier | undefined;
  /** The reference solution of a trace, if known: `metadata.solution`, else the tenant's solution resolver. */
  solutionFor(trace: Trace): unknown;
  /** The tenant's compiled JSON Schemas: check a value against a schema the tenant sent, within its bounds. */
  schemas: TenantSchemas;
}

/**
 * A small, explainable detector: looks at one trace and says what it sees. It returns no verdict when it
 * has nothing to say (a heuristic that did not fire), and never throws on odd input. It may answer later (a
 * promise), e.g. when it asks a model: the registry awaits it up to the tenant's `detectorTimeoutMs`.
 */
export interface Detector {
  id: string;
  /** One line a tenant reads when choosing which detectors to enable. */
  description: string;
  detect(trace: Trace, context: DetectContext): Verdict[] | Promise<Verdict[]>;
}
