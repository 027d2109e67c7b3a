import { parseToolCall } from "./parse-tool-call.ts";
import type { FamilyTool } from "./task-family.ts";
import { toOpenAiTools } from "./tool-spec.ts";

/** A tool call in OpenAI's form, as traces and chat examples hold it. */
export interface OpenAiToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** The tools a prompt offers the agent: those it recorded, else its family's, in OpenAI's form. */
export function offeredTools(
  recorded: readonly object[] | undefined,
  family: { tools?: readonly FamilyTool[] } | undefined,
): Record<string, unknown>[] | undefined {
  if (recorded) return recorded as Record<string, unknown>[];
  return family?.tools ? toOpenAiTools(family.tools) : undefined;
}

/** The names of the functions a tool list in OpenAI's form offers. */
export function offeredToolNames(tools: readonly object[] | undefined): Set<string> {
  return new Set(
    (tools ?? [])
      .map((t) => (t as { function?: { name?: unknown } }).function?.name)
      .filter((n): n is string => typeof n === "string"),
  );
}

/** A model's `{"tool","args"}` output that calls one of the offered tools, as an OpenAI tool call; else null. */
export function offeredToolCall(
  text: string,
  offered: ReadonlySet<string>,
  id: string,
): OpenAiToolCall | null {
  const parsed = parseToolCall(text);
  if (!parsed.ok || !offered.has(parsed.call.tool)) return null;
  return {
    id,
    type: "function",
    function: { name: parsed.call.tool, arguments: JSON.stringify(parsed.call.args) },
  };
}
