import type { Detector } from "./detector.ts";
import { llmSteps, toolCallArguments } from "./trace-view.ts";
import { failedVerdict } from "./verdict.ts";

/**
 * Fails a trace where the model called a tool with `arguments` that are not a JSON object (the gateway returns them
 * as the model wrote them, never repaired). Traces of an env with a verifier are left to it: it reads the same call.
 */
export const malformedArgumentsDetector: Detector = {
  id: "malformed_tool_arguments",
  description: "a tool call's arguments are not a JSON object",
  detect(trace, context) {
    if (trace.env && context.verifierFor(trace.env)) return [];
    for (const step of llmSteps(trace)) {
      const call = step.llm?.output?.toolCalls?.find(
        (c) => toolCallArguments(c.function.arguments) === undefined,
      );
      if (!call) continue;
      return [
        failedVerdict(trace.id, "malformed_tool_arguments", {
          class: "parse_error",
          severity: "high",
          message: `the call of ${call.function.name} has arguments that are not a JSON object`,
          stepId: step.id,
          path: `${call.function.name}.arguments`,
          signature: "malformed tool arguments",
          actual: call.function.arguments,
        }),
      ];
    }
    return [];
  },
};
