import type { OutputGrammar, ToolCallSyntax } from "@arc/core";

/** A function the client offers (`tools[].function`). */
export interface FunctionTool {
  name: string;
  parameters: Record<string, unknown>;
}

/** One call read from the model's output; `arguments` is the text the model wrote, valid JSON or not. */
export interface ParsedCall {
  name: string;
  arguments: string;
}

/** A model's output split into its text and its tool calls. */
export interface ParsedOutput {
  content: string | null;
  toolCalls: ParsedCall[];
}

/**
 * How one model family writes tool calls in text (as vLLM's `--tool-call-parser`): reading them out of an output,
 * finding where a call starts while streaming, and the grammar that makes the model write one.
 */
export interface ToolCallFormat {
  readonly syntax: ToolCallSyntax;
  /** Splits a finished output into content and calls; text that is not a well-formed call stays content. */
  parse(text: string): ParsedOutput;
  /** How much of a partial output is surely content: the rest is, or may yet become, a tool call. */
  contentLength(text: string): number;
  /** The grammar of one call of one of `tools`. */
  callGrammar(tools: readonly FunctionTool[]): OutputGrammar;
}

const STRING = String.raw`"(?:[^"\\]|\\.)*"`;

/**
 * The arguments after a call's header, as written: the rest of the text less the brace that closes the call. When
 * the model left off that brace (or wrote nothing after the arguments), the rest is taken whole.
 */
function argumentsText(rest: string): string {
  const text = rest.trim();
  const parses = (s: string) => {
    try {
      JSON.parse(s);
      return true;
    } catch {
      return false;
    }
  };
  if (parses(text) || !text.endsWith("}")) return text;
  return text.slice(0, -1).trimEnd();
}

/** Reads `{"<nameKey>": "<name>", "<argsKey>": <arguments>}`; undefined when the header is not there. */
function readCall(block: string, nameKey: string, argsKey: string): ParsedCall | undefined {
  const header = new RegExp(String.raw`^\s*\{\s*"${nameKey}"\s*:\s*(${STRING})\s*,\s*"${argsKey}"\s*:`).exec(
    block,
  );
  if (!header) return undefined;
  return { name: JSON.parse(header[1]) as string, arguments: argumentsText(block.slice(header[0].length)) };
}

/** The length of the longest end of `text` that is a beginning of `marker`. */
function partialMarkerLength(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--)
    if (marker.startsWith(text.slice(-n))) return n;
  return 0;
}

/** Arc's byte models: the whole output is one call, `{"tool":"name","args":{...}}`. */
export const arcJsonFormat: ToolCallFormat = {
  syntax: "arc-json",
  parse(text) {
    const call = readCall(text, "tool", "args");
    return call ? { content: null, toolCalls: [call] } : { content: text, toolCalls: [] };
  },
  contentLength(text) {
    const start = text.trimStart();
    const mayBeCall = /^\{\s*("(t(o(o(l"?)?)?)?)?)?$/.test(start) || /^\{\s*"tool"/.test(start);
    return mayBeCall || start === "" ? 0 : text.length;
  },
  callGrammar(tools) {
    return {
      kind: "any-of",
      grammars: tools.map((t) => ({
        kind: "json-schema" as const,
        before: `{"tool":"${t.name}","args":`,
        schema: t.parameters,
        after: "}",
      })),
    };
  },
};

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";

/** Hermes (Qwen, NousResearch): content, then `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks. */
export const hermesFormat: ToolCallFormat = {
  syntax: "hermes",
  parse(text) {
    const first = text.indexOf(OPEN);
    if (first < 0) return { content: text, toolCalls: [] };
    const calls: ParsedCall[] = [];
    for (const block of text.slice(first + OPEN.length).split(OPEN)) {
      const end = block.indexOf(CLOSE);
      const call = readCall(end < 0 ? block : block.slice(0, end), "name", "arguments");
      if (!call) return { content: text, toolCalls: [] };
      calls.push(call);
    }
    const content = text.slice(0, first).trim();
    return { content: content === "" ? null : content, toolCalls: calls };
  },
  contentLength(text) {
    const at = text.indexOf(OPEN);
    return at >= 0 ? at : text.length - partialMarkerLength(text, OPEN);
  },
  callGrammar(tools) {
    return {
      kind: "any-of",
      grammars: tools.map((t) => ({
        kind: "json-schema" as const,
        before: `${OPEN}{"name": "${t.name}", "arguments": `,
        schema: t.parameters,
        after: `}${CLOSE}`,
      })),
    };
  },
};

/** The format of a syntax name. */
export function toolCallFormat(syntax: ToolCallSyntax): ToolCallFormat {
  return syntax === "hermes" ? hermesFormat : arcJsonFormat;
}
