import { randomBytes } from "node:crypto";
import type { FinishReason, OutputGrammar, ToolCallSyntax } from "@arc/core";
import type { ChatCompletionRequest } from "./chat-request.ts";
import { OpenAIError } from "./openai-error.ts";
import { type ParsedCall, type ToolCallFormat, toolCallFormat } from "./tool-calls/tool-call-format.ts";

/** How a request's output is constrained and read: the grammar the engine follows, the tool-call format to parse. */
export interface OutputPlan {
  grammar?: OutputGrammar;
  /** The request field the grammar comes from, which a grammar error names. */
  grammarParam?: string;
  /** Set when the output may hold tool calls. */
  format?: ToolCallFormat;
  /** `tool_choice` named this function: OpenAI then ends the choice with `stop`, not `tool_calls`. */
  forcedFunction?: string;
}

/** An OpenAI tool call as a choice carries it. */
export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * Decides the grammar and parsing of a request: `tool_choice` `required` or a named function constrains the output to
 * a call, `response_format` to JSON, and with `auto` the model may write a call or (under `response_format`) the JSON.
 */
export function planOutput(req: ChatCompletionRequest, syntax: ToolCallSyntax | undefined): OutputPlan {
  const json: OutputGrammar | undefined =
    req.responseFormat.type === "json_object"
      ? { kind: "json-schema", schema: { type: "object" } }
      : req.responseFormat.type === "json_schema"
        ? { kind: "json-schema", schema: req.responseFormat.schema }
        : undefined;
  const jsonParam =
    req.responseFormat.type === "json_schema" ? "response_format.json_schema.schema" : "response_format";
  if (req.tools.length === 0 || req.toolChoice === "none")
    return json ? { grammar: json, grammarParam: jsonParam } : {};
  if (!syntax) {
    throw new OpenAIError(
      400,
      "this model's chat template writes no tool calls Arc can read, so tools cannot be offered to it",
      { param: "tools" },
    );
  }
  const format = req.parallelToolCalls ? toolCallFormat(syntax) : firstCallOnly(toolCallFormat(syntax));
  const choice = req.toolChoice;
  if (choice === "auto") {
    return json
      ? {
          format,
          grammar: { kind: "any-of", grammars: [format.callGrammar(req.tools), json] },
          grammarParam: "tools",
        }
      : { format };
  }
  if (choice === "required") return { format, grammar: format.callGrammar(req.tools), grammarParam: "tools" };
  return {
    format,
    grammar: format.callGrammar(req.tools.filter((t) => t.name === choice.name)),
    grammarParam: "tools",
    forcedFunction: choice.name,
  };
}

/** A format that reads at most one call of an answer (`parallel_tool_calls: false`). */
function firstCallOnly(format: ToolCallFormat): ToolCallFormat {
  return {
    ...format,
    parse: (text) => {
      const parsed = format.parse(text);
      return { ...parsed, toolCalls: parsed.toolCalls.slice(0, 1) };
    },
    partial: (text) => {
      const partial = format.partial(text);
      return { ...partial, calls: partial.calls.slice(0, 1) };
    },
  };
}

/** A new tool call id, as OpenAI's look (`call_` and 24 characters). */
export function toolCallId(): string {
  return `call_${randomBytes(12).toString("hex")}`;
}

/** The parsed calls with ids, in OpenAI's shape. */
export function openAiToolCalls(calls: ParsedCall[]): OpenAIToolCall[] {
  return calls.map((call) => ({
    id: toolCallId(),
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  }));
}

/** The `finish_reason` of a choice: `tool_calls` when it called a tool it chose, else the engine's reason. */
export function finishReason(reason: FinishReason, calls: number, plan: OutputPlan): string {
  if (reason === "length") return "length";
  return calls > 0 && !plan.forcedFunction ? "tool_calls" : "stop";
}
