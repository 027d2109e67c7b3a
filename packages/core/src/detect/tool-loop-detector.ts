import { parseToolCall } from "../tasks/parse-tool-call.ts";
import type { Detector } from "./detector.ts";
import { modelTurns } from "./trace-view.ts";
import { failedVerdict } from "./verdict.ts";

/**
 * Fails a trace where the same tool call (same name, same arguments) was made `loopThreshold` times or more:
 * the agent is going round in circles. Counts the model's calls, and the trace's tool steps when it logged them.
 */
export const toolLoopDetector: Detector = {
  id: "tool_loop",
  description: "the same tool call repeated many times",
  detect(trace, context) {
    const fromModel = modelTurns(trace).flatMap((t) => {
      const parsed = parseToolCall(t.text);
      return parsed.ok
        ? [{ tool: parsed.call.tool, key: JSON.stringify(parsed.call), stepId: t.step.id }]
        : [];
    });
    const fromTools = trace.steps
      .filter((s) => s.kind === "tool" && s.name)
      .map((s) => ({
        tool: s.name as string,
        key: `${s.name}:${JSON.stringify(s.input ?? null)}`,
        stepId: s.id,
      }));
    for (const calls of [fromModel, fromTools]) {
      const counts = new Map<string, number>();
      for (const call of calls) {
        const n = (counts.get(call.key) ?? 0) + 1;
        counts.set(call.key, n);
        if (n === context.config.loopThreshold) {
          const total = calls.filter((c) => c.key === call.key).length;
          return [
            failedVerdict(trace.id, "tool_loop", {
              class: "tool_loop",
              severity: "medium",
              message: `${call.tool} called ${total} times with the same arguments`,
              stepId: call.stepId,
              path: call.tool,
            }),
          ];
        }
      }
    }
    return [];
  },
};
