import type { TokenCounter } from "@arc/core";
import type { ChatTokenizer } from "../tokenizer/chat-tokenizer.ts";

/**
 * Exact token counts in a checkpoint's own tokenizer (byte-level or BPE), so a teaching's probe budget and lengths
 * are in the student's units whatever its vocabulary. `truncate` keeps the longest prefix of whole characters whose
 * encoding has at most `maxTokens` tokens.
 */
export function tokenizerTokenCounter(tokenizer: Pick<ChatTokenizer, "encode">): TokenCounter {
  const count = (text: string) => tokenizer.encode(text).length;
  return {
    count,
    truncate(text, maxTokens) {
      if (count(text) <= maxTokens) return text;
      const chars = Array.from(text);
      let fits = 0;
      let over = chars.length;
      while (over - fits > 1) {
        const middle = (fits + over) >> 1;
        if (count(chars.slice(0, middle).join("")) <= maxTokens) fits = middle;
        else over = middle;
      }
      return chars.slice(0, fits).join("");
    },
  };
}
