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

/** A call in Hermes tags, as models whose chat template uses them write it: `<tool_call>{json}</tool_call>`. */
const HERMES = /^<tool_call>\s*([\s\S]*?)\s*<\/tool_call>$/;

/**
 * `{"name", "arguments"}` (a Hermes call's fields) as `{"tool", "args"}`; any other value is returned as it is, and
 * then fails the shape check.
 */
function fromHermes(value: unknown): unknown {
  if (typeof value !== "object" || value === null || !("name" in value)) return value;
  const { name, arguments: args } = value as { name: unknown; arguments?: unknown };
  return { tool: name, args: args ?? {} };
}

/**
 * Reads `{"tool": string, "args": object}` from model output, or the same call in Hermes tags
 * (`<tool_call>{"name": string, "arguments": object}</tool_call>`, what a real instruct model served with Arc's tool
 * template writes). `stage: "json"` means the text is not JSON (malformed, truncated, prose); `stage: "shape"` means
 * it is JSON but not a tool call.
 */
export function parseToolCall(text: string): ParsedToolCall {
  const hermes = HERMES.exec(text.trim());
  let value: unknown;
  try {
    value = hermes ? fromHermes(JSON.parse(hermes[1])) : JSON.parse(unfence(text));
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
