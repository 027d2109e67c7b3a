import type { Detector } from "./detector.ts";
import { traceLatencyMs } from "./trace-view.ts";
import { failedVerdict } from "./verdict.ts";

/** Fails a trace (or an LLM step) slower than the tenant's `latencyBudgetMs`. */
export const latencyDetector: Detector = {
  id: "latency",
  description: "slower than the latency budget",
  detect(trace, context) {
    const budget = context.config.latencyBudgetMs;
    const slowStep = trace.steps.find((s) => s.kind === "llm" && (s.latencyMs ?? 0) > budget);
    const total = traceLatencyMs(trace);
    const ms = slowStep?.latencyMs ?? total;
    if (ms === undefined || ms <= budget) return [];
    return [
      failedVerdict(trace.id, "latency", {
        class: "latency_over_budget",
        severity: "low",
        message: `${slowStep ? "an LLM step" : "the trace"} took ${Math.round(ms)} ms, over the ${budget} ms budget`,
        stepId: slowStep?.id,
        expected: budget,
        actual: ms,
        score: Math.min(1, budget / ms),
      }),
    ];
  },
};
