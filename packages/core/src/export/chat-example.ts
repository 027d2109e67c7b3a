import { InvalidInputError } from "../errors/index.ts";
import { getTaskFamily } from "../families/index.ts";
import type { PreferenceRow } from "../synth/index.ts";
import type { ChatTurn } from "../tasks/index.ts";

/** One fine-tuning conversation in OpenAI's chat format; the assistant turns are what the model learns. */
export interface ChatExample {
  messages: ChatTurn[];
}

/**
 * The full correct conversation of a task row: the family's prompt, then its reference output for every model
 * turn, with the tool observations in between for multi-turn families (a multi-turn family replays its session).
 */
export function chatExampleOf(row: { question: string; solution: unknown; env: string }): ChatExample {
  const family = getTaskFamily(row.env);
  const task = { id: "export", env: row.env, question: row.question, solution: row.solution };
  const messages: ChatTurn[] = [...family.prompt(task)];
  const outputs = family.reference(task);
  const session = family.session?.(task);
  for (const output of outputs) {
    messages.push({ role: "assistant", content: output });
    if (session && !session.done) {
      const step = session.act(output);
      if (!step.done) messages.push({ role: "tool", content: step.observation });
    }
  }
  return { messages };
}

/** The chosen side of each preference pair as a chat example (SFT on corrections). */
export function chatExamplesFromPreferences(rows: readonly PreferenceRow[]): ChatExample[] {
  return rows.map((r) => ({ messages: [...r.prompt, { role: "assistant", content: r.chosen }] }));
}

/** Throws an InvalidInputError naming the example and field when a conversation cannot train a model. */
export function assertChatExample(example: ChatExample, index: number): void {
  const at = `examples.${index}.messages`;
  if (!Array.isArray(example.messages) || example.messages.length === 0) {
    throw new InvalidInputError(`${at}: expected a non-empty list of messages`, { field: at });
  }
  for (const [i, m] of example.messages.entries()) {
    if (!["system", "user", "assistant", "tool"].includes(m.role)) {
      throw new InvalidInputError(
        `${at}.${i}.role: expected system, user, assistant or tool, got ${JSON.stringify(m.role)}`,
        {
          field: `${at}.${i}.role`,
        },
      );
    }
    if (typeof m.content !== "string") {
      throw new InvalidInputError(`${at}.${i}.content: expected a string, got ${typeof m.content}`, {
        field: `${at}.${i}.content`,
      });
    }
  }
  if (example.messages.at(-1)?.role !== "assistant") {
    throw new InvalidInputError(
      `${at}: expected the last message to be the assistant's (the training target)`,
      { field: at },
    );
  }
}
