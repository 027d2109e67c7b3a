import { assertChatExample, type ChatExample } from "./chat-example.ts";

/** Chat fine-tune JSONL in OpenAI's format: one `{"messages":[...], "tools":[...]}` per line, messages verbatim. */
export function toChatJsonl(examples: readonly ChatExample[]): string {
  return examples
    .map((example, i) => {
      assertChatExample(example, i);
      return `${JSON.stringify({ messages: example.messages, ...(example.tools ? { tools: example.tools } : {}) })}\n`;
    })
    .join("");
}
