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
 * What of a partial output can be sent while it streams: content up to `contentLength` (the rest is, or may become,
 * a call), and the calls begun so far with the part of their arguments no later text changes.
 */
export interface PartialOutput {
  contentLength: number;
  calls: ParsedCall[];
}

/**
 * How one model family writes tool calls in text (as vLLM's `--tool-call-parser`): reading them out of an output,
 * whole or while it streams, and the grammar that makes the model write one.
 */
export interface ToolCallFormat {
  readonly syntax: ToolCallSyntax;
  /** Splits a finished output into content and calls; text that is not a well-formed call stays content. */
  parse(text: string): ParsedOutput;
  /** What of a partial output is final: `parse` of any longer output extends each call's arguments given here. */
  partial(text: string): PartialOutput;
  /** The grammar of one call of one of `tools`. */
  callGrammar(tools: readonly FunctionTool[]): OutputGrammar;
  /** The text of one call exactly as `callGrammar` makes the model write it (`args`: the arguments' JSON text). */
  write(name: string, args: string): string;
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

/** The call's name and where its arguments start, once the header is written whole. */
function callHeader(
  block: string,
  nameKey: string,
  argsKey: string,
): { name: string; length: number } | undefined {
  const pattern = String.raw`^\s*\{\s*"${nameKey}"\s*:\s*(${STRING})\s*,\s*"${argsKey}"\s*:\s*`;
  const header = new RegExp(pattern).exec(block);
  return header ? { name: JSON.parse(header[1]) as string, length: header[0].length } : undefined;
}

/** Reads `{"<nameKey>": "<name>", "<argsKey>": <arguments>}`; undefined when the header is not there. */
function readCall(block: string, nameKey: string, argsKey: string): ParsedCall | undefined {
  const header = callHeader(block, nameKey, argsKey);
  return header && { name: header.name, arguments: argumentsText(block.slice(header.length)) };
}

/**
 * A call still being written: its name and its arguments so far, less a closing brace and spaces at the end, which
 * may yet turn out to close the call rather than the arguments.
 */
function partialCall(block: string, nameKey: string, argsKey: string): ParsedCall | undefined {
  const header = callHeader(block, nameKey, argsKey);
  return header && { name: header.name, arguments: block.slice(header.length).replace(/\s*\}?\s*$/, "") };
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
  partial(text) {
    const start = text.trimStart();
    const mayBeCall = /^\{\s*("(t(o(o(l"?)?)?)?)?)?$/.test(start) || /^\{\s*"tool"/.test(start);
    if (!mayBeCall && start !== "") return { contentLength: text.length, calls: [] };
    const call = partialCall(text, "tool", "args");
    return { contentLength: 0, calls: call ? [call] : [] };
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
  write: (name, args) => `{"tool":"${name}","args":${args}}`,
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
      if (!call) break;
      calls.push(call);
    }
    if (calls.length === 0) return { content: text, toolCalls: [] };
    const content = text.slice(0, first).trim();
    return { content: content === "" ? null : content, toolCalls: calls };
  },
  partial(text) {
    const first = text.indexOf(OPEN);
    if (first < 0) return { contentLength: text.length - partialMarkerLength(text, OPEN), calls: [] };
    const blocks = text.slice(first + OPEN.length).split(OPEN);
    const calls: ParsedCall[] = [];
    for (const [i, block] of blocks.entries()) {
      const end = block.indexOf(CLOSE);
      const call =
        end >= 0 || i < blocks.length - 1
          ? readCall(end < 0 ? block : block.slice(0, end), "name", "arguments")
          : partialCall(
              block.slice(0, block.length - partialMarkerLength(block, CLOSE)),
              "name",
              "arguments",
            );
      if (!call) break;
      calls.push(call);
    }
    return { contentLength: first, calls };
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
  write: (name, args) => `${OPEN}{"name": "${name}", "arguments": ${args}}${CLOSE}`,
};

/** The format of a syntax name. */
export function toolCallFormat(syntax: ToolCallSyntax): ToolCallFormat {
  return syntax === "hermes" ? hermesFormat : arcJsonFormat;
}
