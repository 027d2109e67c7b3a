import { assertChatExample, type ChatExample } from "./chat-example.ts";

/** Chat fine-tune JSONL (OpenAI format): one `{"messages":[{role,content},...]}` per line. */
export function toChatJsonl(examples: readonly ChatExample[]): string {
  return examples
    .map((example, i) => {
      assertChatExample(example, i);
      return `${JSON.stringify({ messages: example.messages.map((m) => ({ role: m.role, content: m.content })) })}\n`;
    })
    .join("");
}
