import { InvalidInputError } from "../errors/index.ts";
import { familyPrompt, type TaskFamilyRegistry } from "../families/registry.ts";
import { taskFamilies } from "../families/task-families.ts";
import type { PreferenceRow, PromptContext } from "../synth/index.ts";
import { offeredToolCall, offeredToolNames, offeredTools } from "../tasks/offered-tools.ts";
import type { ChatMessage } from "../trace/index.ts";

/** One fine-tuning conversation in OpenAI's chat format: the assistant turns are what the model learns. */
export interface ChatExample {
  messages: ChatMessage[];
  /** The tools offered, in OpenAI's `{type:"function", function:{...}}` form. */
  tools?: Record<string, unknown>[];
}

/** A row a chat example can be made of: a task with its reference, and the agent's prompt where recorded. */
interface ReferenceRow {
  question: string;
  solution?: unknown;
  env?: string;
  context?: PromptContext;
}

/**
 * An assistant turn as OpenAI's format writes it: a call to an offered tool (`{"tool","args"}` text) becomes
 * `tool_calls`, anything else plain content.
 */
function assistantTurn(text: string, offered: Set<string>, id: string): ChatMessage {
  const call = offeredToolCall(text, offered, id);
  return call
    ? { role: "assistant", content: null, tool_calls: [call] }
    : { role: "assistant", content: text };
}

/** Whether a row has what a chat example needs: a family that knows it and a reference solution. */
export function hasReference(row: ReferenceRow): row is ReferenceRow & { env: string } {
  return row.env !== undefined && row.solution !== undefined;
}

/**
 * The full correct conversation of a task row: the agent's recorded prompt (else the family's), then the family's
 * reference output for every model turn, with the tool observations in between for multi-turn families (the
 * family's session replays them). Tool calls to offered tools are written as `tool_calls`. Throws an
 * InvalidInputError for a reference-free row.
 */
export function chatExampleOf(row: ReferenceRow, families: TaskFamilyRegistry = taskFamilies): ChatExample {
  if (!hasReference(row)) {
    throw new InvalidInputError(
      "row: a chat example needs a task family and a reference solution; this row is reference-free",
      { field: "solution" },
    );
  }
  const family = families.get(row.env);
  const task = { id: "export", env: row.env, question: row.question, solution: row.solution };
  const outputs = family.reference(task);
  const session = family.session?.(task);
  const tools = offeredTools(row.context?.tools, family);
  const offered = offeredToolNames(tools);
  const messages: ChatMessage[] =
    row.context && !session ? structuredClone(row.context.messages) : familyPrompt(family, task);
  for (const [i, output] of (session ? outputs : outputs.slice(0, 1)).entries()) {
    const turn = assistantTurn(output, offered, `call_${i}`);
    messages.push(turn);
    if (session && !session.done) {
      const step = session.act(output);
      if (!step.done) {
        messages.push({
          role: "tool",
          content: step.observation,
          ...(turn.tool_calls ? { tool_call_id: `call_${i}` } : {}),
        });
      }
    }
  }
  return { messages, ...(tools?.length ? { tools } : {}) };
}

/** The chosen side of each preference pair as a chat example (SFT on corrections), with the tools offered. */
export function chatExamplesFromPreferences(rows: readonly PreferenceRow[]): ChatExample[] {
  return rows.map((r) => ({
    messages: [...structuredClone(r.prompt), assistantTurn(r.chosen, offeredToolNames(r.tools), "call_0")],
    ...(r.tools?.length ? { tools: r.tools } : {}),
  }));
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

/** Throws an InvalidInputError naming the example and field when a conversation cannot train a model. */
export function assertChatExample(example: ChatExample, index: number): void {
  const at = `examples.${index}.messages`;
  if (!Array.isArray(example.messages) || example.messages.length === 0) {
    throw new InvalidInputError(`${at}: expected a non-empty list of messages`, { field: at });
  }
  for (const [i, m] of example.messages.entries()) {
    if (!ROLES.has(m.role)) {
      throw new InvalidInputError(
        `${at}.${i}.role: expected system, developer, user, assistant or tool, got ${JSON.stringify(m.role)}`,
        { field: `${at}.${i}.role` },
      );
    }
    const content = m.content;
    const callsOnly = content === null && Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    if (typeof content !== "string" && !Array.isArray(content) && !callsOnly) {
      throw new InvalidInputError(
        `${at}.${i}.content: expected a string, content parts, or null beside tool_calls, got ${content === null ? "null" : typeof content}`,
        { field: `${at}.${i}.content` },
      );
    }
  }
  if (example.messages.at(-1)?.role !== "assistant") {
    throw new InvalidInputError(
      `${at}: expected the last message to be the assistant's (the training target)`,
      { field: at },
    );
  }
}
