import type { Task } from "../rollout/index.ts";
import type { Trace } from "../trace/index.ts";
import { traceQuestion } from "./trace-view.ts";

/** Finds the reference solution of a trace that does not carry one; undefined when unknown. */
export type SolutionResolver = (trace: Trace) => unknown;

function questionKey(env: string | undefined, question: string): string {
  return `${env ?? ""}|${question.trim().replace(/\s+/g, " ").toLowerCase()}`;
}

/**
 * A resolver that knows the solutions of a set of tasks and finds them by env and question text (case and
 * whitespace folded): how a simulated agent's traffic, recorded without metadata by the gateway, gets verified.
 */
export function solutionsByQuestion(tasks: readonly Task[]): SolutionResolver {
  const index = new Map<string, unknown>();
  for (const t of tasks) index.set(questionKey(t.env, t.question), t.solution);
  return (trace) => index.get(questionKey(trace.env, traceQuestion(trace)));
}
