import type { GenMessage } from "@arc/core";
import { encodeText, specialId } from "./byte-tokenizer.ts";

/** A chat message as the gateway and trainer see it; `content` may be null (e.g. an assistant tool call). */
export type ChatMessage = GenMessage;

/** The roles the template knows; each has its own marker token. */
export const CHAT_ROLES = ["system", "user", "assistant", "tool"] as const;

/**
 * The chat template, as HF `tokenizer_config.json` stores it (Jinja). `renderChat` produces exactly
 * the same tokens: `<|bos|>` then per message `<|role|>content<|end|>`, then `<|assistant|>` to prompt a reply.
 * An assistant's `tool_calls` are written after its content, one per line, in the text the byte models were trained
 * to write: `{"tool":"name","args":<arguments as sent>}` (function names are
 * `[a-zA-Z0-9_-]`, as OpenAI requires, so they need no escaping). Tool schemas (`tools`) are not rendered: the byte models
 * were trained without them, and four tool schemas would fill most of their 1024-token context.
 */
export const CHAT_TEMPLATE_JINJA =
  "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>' + (message['content'] or '') }}{% if message['tool_calls'] %}{% for call in message['tool_calls'] %}{% if message['content'] or not loop.first %}{{ '\n' }}{% endif %}{{ '{\"tool\":\"' + call['function']['name'] + '\",\"args\":' + call['function']['arguments'] + '}' }}{% endfor %}{% endif %}{{ '<|end|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}";

/** An assistant message's text as the byte models write it: its content, then each tool call on its own line. */
export function assistantText(message: ChatMessage): string {
  const calls = (message.tool_calls ?? []).map(
    ({ function: { name, arguments: args } }) =>
      `{"tool":"${name}","args":${typeof args === "string" ? args : JSON.stringify(args)}}`,
  );
  return [...(message.content ? [message.content] : []), ...calls].join("\n");
}

function roleId(role: string, index: number): number {
  if (!(CHAT_ROLES as readonly string[]).includes(role)) {
    throw new TypeError(
      `messages[${index}].role: expected one of ${CHAT_ROLES.join(", ")}, got ${JSON.stringify(role)}`,
    );
  }
  return specialId(`<|${role}|>` as "<|user|>");
}

/** Token ids of a conversation; with `addGenerationPrompt` (default true) it ends ready for the assistant's reply. */
export function renderChat(
  messages: readonly ChatMessage[],
  options: { addGenerationPrompt?: boolean } = {},
): number[] {
  const ids = [specialId("<|bos|>")];
  messages.forEach((message, i) => {
    const text = message.tool_calls?.length ? assistantText(message) : (message.content ?? "");
    ids.push(roleId(message.role, i), ...encodeText(text), specialId("<|end|>"));
  });
  if (options.addGenerationPrompt ?? true) ids.push(specialId("<|assistant|>"));
  return ids;
}

/**
 * A prompt and its assistant reply as training tokens: the reply is followed by `<|end|>` so that
 * the model learns to stop. Trainer and gateway share this, so what is trained is what is served.
 */
export function renderChatExample(
  messages: readonly ChatMessage[],
  reply: string,
): { promptTokens: number[]; outputTokens: number[] } {
  return { promptTokens: renderChat(messages), outputTokens: [...encodeText(reply), specialId("<|end|>")] };
}
