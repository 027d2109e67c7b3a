import type { DetectorRegistry, Judgement } from "../detect/index.ts";
import { type Feedback, Trace } from "../trace/index.ts";
import type { FailureClusterer } from "./failure-clusterer.ts";
import { type FailureRecord, failureRecord } from "./failure-record.ts";

/** What happened to one trace in the failure pipeline. */
export interface TraceOutcome {
  judgement: Judgement;
  /** The failure as clustered; null when the trace did not fail (or could not be read). */
  failure: FailureRecord | null;
  /** The pattern the failure joined; null when there was no failure. */
  patternId: string | null;
  /** True when this failure started its pattern. */
  createdPattern: boolean;
}

/**
 * One step of the failure pipeline, as a server worker runs it on ingest: validate the trace (an unreadable
 * one is judged `unknown`, never dropped), detect, and put a failure into its tenant's pattern. Call it once
 * per trace (with the feedback known so far); persist the judgement, the assignment and `clusterer.toJSON()`.
 */
export async function detectAndCluster(
  input: unknown,
  registry: DetectorRegistry,
  clusterer: FailureClusterer,
  feedback: readonly Feedback[] = [],
): Promise<TraceOutcome> {
  const parsed = Trace.safeParse(input);
  if (!parsed.success)
    return {
      judgement: await registry.judgeInput(input, feedback),
      failure: null,
      patternId: null,
      createdPattern: false,
    };
  const judgement = await registry.judge(parsed.data, feedback);
  const failure = failureRecord(parsed.data, judgement);
  if (!failure) return { judgement, failure: null, patternId: null, createdPattern: false };
  const { patternId, created } = clusterer.assign(failure);
  return { judgement, failure, patternId, createdPattern: created };
}
