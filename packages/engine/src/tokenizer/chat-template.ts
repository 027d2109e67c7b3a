import { encodeText, specialId } from "./byte-tokenizer.ts";

/** A chat message as the gateway and trainer see it; `content` may be null (e.g. an assistant tool call). */
export interface ChatMessage {
  role: string;
  content: string | null;
}

/** The roles the template knows; each has its own marker token. */
export const CHAT_ROLES = ["system", "user", "assistant", "tool"] as const;

/**
 * The chat template, as HF `tokenizer_config.json` stores it (Jinja). `renderChat` produces exactly
 * the same tokens: `<|bos|>` then per message `<|role|>content<|end|>`, then `<|assistant|>` to prompt a reply.
 */
export const CHAT_TEMPLATE_JINJA =
  "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>' + (message['content'] or '') + '<|end|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}";

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
    ids.push(roleId(message.role, i), ...encodeText(message.content ?? ""), specialId("<|end|>"));
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
