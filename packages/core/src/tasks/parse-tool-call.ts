import type { ToolCallJson } from "./tool-spec.ts";

/** The outcome of reading a model's output as a tool call. `stage` says which step failed. */
export type ParsedToolCall =
  | { ok: true; call: ToolCallJson; value: Record<string, unknown> }
  | { ok: false; stage: "json" | "shape"; error: string; value?: unknown };

/** Removes a Markdown code fence a model may wrap its JSON in. */
function unfence(text: string): string {
  const m = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(text.trim());
  return m ? m[1] : text.trim();
}

/**
 * Reads `{"tool": string, "args": object}` from model output. `stage: "json"` means the text is not JSON
 * (malformed, truncated, prose); `stage: "shape"` means it is JSON but not a tool call.
 */
export function parseToolCall(text: string): ParsedToolCall {
  let value: unknown;
  try {
    value = JSON.parse(unfence(text));
  } catch (error) {
    return { ok: false, stage: "json", error: (error as Error).message };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      stage: "shape",
      error: `expected a JSON object, got ${JSON.stringify(value)}`,
      value,
    };
  }
  const record = value as Record<string, unknown>;
  if (typeof record.tool !== "string") {
    return { ok: false, stage: "shape", error: 'expected a string field "tool"', value };
  }
  const args = record.args ?? {};
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { ok: false, stage: "shape", error: 'expected "args" to be an object', value };
  }
  return { ok: true, call: { tool: record.tool, args: args as Record<string, unknown> }, value: record };
}
