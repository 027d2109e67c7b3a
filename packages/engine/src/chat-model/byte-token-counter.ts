import type { TokenCounter } from "@arc/core";
import { encodeText } from "../tokenizer/byte-tokenizer.ts";

/**
 * Exact token counts for the embedded byte-level models: one token per UTF-8 byte. Inject it into
 * the teaching protocol when the student is embedded, so the probe budget and teaching lengths are
 * in the student's own tokens. `truncate` never splits a character.
 */
export const byteTokenCounter: TokenCounter = {
  count: (text) => encodeText(text).length,
  truncate(text, maxTokens) {
    let bytes = 0;
    let end = 0;
    for (const char of text) {
      const size = encodeText(char).length;
      if (bytes + size > maxTokens) break;
      bytes += size;
      end += char.length;
    }
    return text.slice(0, end);
  },
};
