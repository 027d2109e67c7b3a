/** Counts and cuts text in model tokens; inject a real tokenizer's where exact counts matter. */
export interface TokenCounter {
  /** Number of tokens in `text`. */
  count(text: string): number;
  /** The longest prefix of `text` that has at most `maxTokens` tokens. */
  truncate(text: string, maxTokens: number): string;
}

// Letter runs, digit runs, and single other non-space characters.
const PIECE = /[\p{L}\p{M}]+|\p{N}+|[^\s\p{L}\p{M}\p{N}]/gu;

function pieceTokens(piece: string): number {
  if (/^\p{N}/u.test(piece)) return Math.ceil(piece.length / 3); // BPE vocabularies split digits in groups of up to 3
  if (/^[\p{L}\p{M}]/u.test(piece)) return Math.ceil(piece.length / 6); // most short words are one token
  return 1;
}

/**
 * A tokenizer-free estimate close to common BPE vocabularies on English text (words of up to 6
 * letters count 1, digit runs 1 per 3 digits, punctuation 1). Core has no tokenizer; the protocol
 * uses this unless the caller injects the student's or teacher's real one.
 */
export const approximateTokenCounter: TokenCounter = {
  count(text) {
    let total = 0;
    for (const match of text.matchAll(PIECE)) total += pieceTokens(match[0]);
    return total;
  },
  truncate(text, maxTokens) {
    let total = 0;
    let end = 0;
    for (const match of text.matchAll(PIECE)) {
      const cost = pieceTokens(match[0]);
      if (total + cost > maxTokens) break;
      total += cost;
      end = match.index + match[0].length;
    }
    return text.slice(0, end);
  },
};
