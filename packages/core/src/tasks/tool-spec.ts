import type { JsonSchema } from "./json-schema.ts";
import type { FamilyTool } from "./task-family.ts";

/** What running a tool gave: a value, or an error message the agent would see. */
export type ToolResult = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** A tool an agent may call: its JSON schema (OpenAI `parameters`) and a deterministic implementation. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
  /** Pure and deterministic: the same arguments always give the same result, so results can be verified. */
  execute(args: Record<string, unknown>): ToolResult;
}

/** A tool call as the models in Arc's built-in families write it: `{"tool":"name","args":{...}}`. */
export interface ToolCallJson {
  tool: string;
  args: Record<string, unknown>;
}

/**
 * Renders a tool call in the exact compact form the models are trained to emit. Given the tools' parameter
 * schemas by name, the arguments come in the order the tool's schema lists them: a call read back from storage
 * may have its keys in another order (PostgreSQL's jsonb sorts them), and a model trained on that order forgets
 * the one it answers in.
 */
export function formatToolCall(
  call: ToolCallJson,
  schemas: Readonly<Record<string, JsonSchema>> = {},
): string {
  const order = Object.keys(schemas[call.tool]?.properties ?? {});
  const rank = (key: string) => (order.includes(key) ? order.indexOf(key) : order.length);
  const args = Object.fromEntries(Object.entries(call.args).sort(([a], [b]) => rank(a) - rank(b)));
  return JSON.stringify({ tool: call.tool, args });
}

/** The tools in OpenAI's `{type:"function", function:{name, description, parameters}}` form, for traces. */
export function toOpenAiTools(tools: readonly FamilyTool[]): Record<string, unknown>[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}
