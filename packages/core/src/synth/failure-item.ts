import {
  type Judgement,
  modelTurns,
  traceModelVersion,
  traceQuestion,
  traceSolution,
} from "../detect/index.ts";
import type { ChatTurn } from "../tasks/index.ts";
import type { Trace } from "../trace/index.ts";

/** A failed production trace, reduced to what datasets need. The server builds these from stored traces. */
export interface FailureItem {
  traceId: string;
  patternId: string;
  env: string;
  question: string;
  /** The conversation the failed output answered (default: the question as one user turn). */
  messages?: ChatTurn[];
  /** Reference solution when known (`trace.metadata.solution`); rows that need verification skip items without it. */
  solution?: unknown;
  /** The failed output (a preference pair's `rejected`). */
  output: string;
  /** Model outputs of earlier turns (multi-turn episodes), replayed before a candidate when verifying it. */
  priorOutputs?: string[];
  modelVersion?: string;
}

const ROLES = new Set(["system", "user", "assistant", "tool"]);

/** The failure item of a judged, failed trace in a pattern; null when the trace did not fail or has no env. */
export function failureItemFromTrace(
  trace: Trace,
  judgement: Judgement,
  patternId: string,
): FailureItem | null {
  if (judgement.status !== "failed" || !trace.env) return null;
  const turns = modelTurns(trace);
  const found = turns.findIndex((t) => t.step.id === judgement.primary?.stepId);
  const at = found >= 0 ? found : Math.max(0, turns.length - 1);
  const failed = turns[at];
  const question = traceQuestion(trace);
  const messages = (failed?.step.llm?.messages ?? [])
    .filter((m) => ROLES.has(m.role) && typeof m.content === "string")
    .map((m) => ({ role: m.role as ChatTurn["role"], content: m.content as string }));
  return {
    traceId: trace.id,
    patternId,
    env: trace.env,
    question,
    messages: messages.length ? messages : [{ role: "user", content: question }],
    solution: traceSolution(trace),
    output: failed?.text ?? "",
    priorOutputs: turns.slice(0, at).map((t) => t.text),
    modelVersion: traceModelVersion(trace),
  };
}
