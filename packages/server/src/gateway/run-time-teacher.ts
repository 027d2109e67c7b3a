import type { Trace } from "@arc/core";
import type { ModelAnswer } from "./model-answer.ts";
import type { RouteChoice } from "./routing-table.ts";

/** Facts of one gateway call that run-time teaching needs. */
export interface TeachCallContext {
  /** `x-arc-env`: selects the verifier that judges live answers and the family's check of a teaching's claims. */
  env?: string;
  /** `x-arc-pattern`: the client names the failure pattern of the request. */
  pattern?: string;
  userId?: string;
  sessionId?: string;
  signal?: AbortSignal;
}

/** A request answered under teaching: the OpenAI-shaped answer and its trace (one step per phase). */
export interface TaughtAnswer {
  answer: ModelAnswer;
  trace: Trace;
}

/** What the gateway asks of run-time teaching (the teaching runtime in `teach/` is one). */
export interface RunTimeTeacher {
  /** Answers a request under teaching, or returns null when it is not to be taught (the gateway then forwards it). */
  teach(
    tenantId: string,
    request: Record<string, unknown>,
    choice: RouteChoice,
    context?: TeachCallContext,
  ): Promise<TaughtAnswer | null>;
}
