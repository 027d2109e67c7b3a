import {
  type Judgement,
  modelTurns,
  traceModelVersion,
  traceQuestion,
  traceSolution,
} from "../detect/index.ts";
import type { ChatMessage, Trace } from "../trace/index.ts";
import type { PromptContext } from "./dataset.ts";

/** A failed production trace, reduced to what datasets need. The server builds these from stored traces. */
export interface FailureItem {
  traceId: string;
  patternId: string;
  /** The task family that knows the trace (`trace.env`); absent for an agent no family describes. */
  env?: string;
  question: string;
  /** The prompt the failed output answered, verbatim: messages in OpenAI's chat format and the tools offered. */
  context: PromptContext;
  /** Reference solution when known (`trace.metadata.solution`); rows that need verification skip items without it. */
  solution?: unknown;
  /** The failed output (a preference pair's `rejected`). */
  output: string;
  /** Model outputs of earlier turns (multi-turn episodes), replayed before a candidate when verifying it. */
  priorOutputs?: string[];
  modelVersion?: string;
}

/** The failure item of a judged, failed trace in a pattern; null when the trace did not fail. */
export function failureItemFromTrace(
  trace: Trace,
  judgement: Judgement,
  patternId: string,
): FailureItem | null {
  if (judgement.status !== "failed") return null;
  const turns = modelTurns(trace);
  const found = turns.findIndex((t) => t.step.id === judgement.primary?.stepId);
  const at = found >= 0 ? found : Math.max(0, turns.length - 1);
  const failed = turns[at];
  const question = traceQuestion(trace);
  const recorded = failed?.step.llm?.messages ?? [];
  const messages: ChatMessage[] = recorded.length
    ? structuredClone(recorded)
    : [{ role: "user", content: question }];
  const tools = failed?.step.llm?.tools;
  return {
    traceId: trace.id,
    patternId,
    ...(trace.env ? { env: trace.env } : {}),
    question,
    context: { messages, ...(tools?.length ? { tools: structuredClone(tools) } : {}) },
    solution: traceSolution(trace),
    output: failed?.text ?? "",
    priorOutputs: turns.slice(0, at).map((t) => t.text),
    modelVersion: traceModelVersion(trace),
  };
}
