import type { Step, Trace } from "../trace/index.ts";

/** One model turn of a trace: the LLM step and its output as text (tool calls rendered as `{"tool","args"}` JSON). */
export interface ModelTurn {
  step: Step;
  text: string;
  hasOutput: boolean;
}

/** The LLM steps of a trace, in order. */
export function llmSteps(trace: Trace): Step[] {
  return trace.steps.filter((s) => s.kind === "llm" && s.llm);
}

/**
 * A tool call as the verifiers read it: `{"tool":name,"args":...}`, its raw `arguments` kept as they are (empty is
 * `{}`), so malformed ones fail to parse.
 */
export function toolCallText(call: { name: string; arguments: string }): string {
  return `{"tool":${JSON.stringify(call.name)},"args":${call.arguments.trim() || "{}"}}`;
}

/**
 * The model's output of each LLM step as the verifiers read it: the text content, or the first tool call
 * as `{"tool":name,"args":...}` (raw `arguments` kept as they are, so malformed ones fail to parse).
 */
export function modelTurns(trace: Trace): ModelTurn[] {
  return llmSteps(trace).map((step) => {
    const output = step.llm?.output;
    const call = output?.toolCalls?.[0];
    if (call) return { step, text: toolCallText(call.function), hasOutput: true };
    const text = output?.content ?? "";
    return {
      step,
      text,
      hasOutput: output !== undefined && output.content !== undefined && output.content !== null,
    };
  });
}

/** The reference solution the sender attached (`trace.metadata.solution`), if any. */
export function traceSolution(trace: Trace): unknown {
  return trace.metadata?.solution;
}

/** The user's request: `trace.input` (a string or `{question}`), else the first user message of the first LLM step. */
export function traceQuestion(trace: Trace): string {
  const input = trace.input as { question?: unknown } | string | undefined;
  if (typeof input === "string") return input;
  if (typeof input?.question === "string") return input.question;
  for (const step of llmSteps(trace)) {
    const user = step.llm?.messages.find((m) => m.role === "user");
    if (typeof user?.content === "string") return user.content;
  }
  return "";
}

/** The model version that answered: the first LLM step that says. */
export function traceModelVersion(trace: Trace): string | undefined {
  for (const step of llmSteps(trace)) {
    const version = step.llm?.modelVersion ?? step.llm?.modelServed;
    if (version) return version;
  }
  return undefined;
}

/** Wall time of the trace in ms: endedAt − startedAt, else the sum of step latencies, else undefined. */
export function traceLatencyMs(trace: Trace): number | undefined {
  if (trace.endedAt) return Date.parse(trace.endedAt) - Date.parse(trace.startedAt);
  const latencies = trace.steps.map((s) => s.latencyMs).filter((l): l is number => l !== undefined);
  return latencies.length ? latencies.reduce((a, b) => a + b, 0) : undefined;
}

/** The tool name in a (possibly cut-off) tool-call output, e.g. `get_weather` from `{"tool":"get_weather","ar`. */
export function toolNameIn(text: string): string | undefined {
  return /"tool"\s*:\s*"([^"]{1,64})"/.exec(text)?.[1];
}

/** A tool call's `arguments` text as the JSON object a tool runs on, or undefined when it is not one. */
export function toolCallArguments(argumentsText: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(argumentsText) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
