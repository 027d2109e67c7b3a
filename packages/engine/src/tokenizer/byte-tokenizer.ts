/**
 * Byte-level tokenizer: ids 0-255 are the bytes of UTF-8 text, followed by special tokens.
 * No merges, so any string round-trips and the vocabulary is tiny (264), which keeps small models small.
 */

/** Special tokens in id order, starting at 256. `<|end|>` closes a chat turn and is the stop token. */
export const SPECIAL_TOKENS = [
  "<|bos|>",
  "<|eos|>",
  "<|pad|>",
  "<|system|>",
  "<|user|>",
  "<|assistant|>",
  "<|tool|>",
  "<|end|>",
] as const;

/** One of the special token strings. */
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

/** Number of ids the tokenizer can produce: 256 bytes plus the special tokens. */
export const VOCAB_SIZE = 256 + SPECIAL_TOKENS.length;

/** The id of a special token. */
export function specialId(token: SpecialToken): number {
  return 256 + SPECIAL_TOKENS.indexOf(token);
}

/** Ids generation stops at: end of turn and end of text. */
export const STOP_IDS: ReadonlySet<number> = new Set([specialId("<|end|>"), specialId("<|eos|>")]);

const encoder = new TextEncoder();

/** UTF-8 bytes of `text` as token ids; special-token strings inside `text` stay plain bytes (no injection). */
export function encodeText(text: string): number[] {
  return Array.from(encoder.encode(text));
}

/** Text of `ids`: bytes decoded as UTF-8 (invalid sequences become U+FFFD); special tokens are dropped. */
export function decodeTokens(ids: readonly number[]): string {
  const bytes = ids.filter((id) => id >= 0 && id < 256);
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

/** Display form of one id: its special-token string, or the byte's character when printable. */
export function tokenString(id: number): string {
  if (id >= 256) return SPECIAL_TOKENS[id - 256] ?? `<|unk_${id}|>`;
  return new TextDecoder().decode(Uint8Array.of(id));
}

/** Raw bytes of one id (empty for special tokens), for OpenAI `logprobs[].bytes`. */
export function tokenBytes(id: number): number[] {
  return id < 256 ? [id] : [];
}

const BYTE_ARRAYS = Array.from({ length: 256 }, (_, b) => Uint8Array.of(b));

/** The bytes one id writes, or null for a special token (constrained decoding). */
export function tokenTextBytes(id: number): Uint8Array | null {
  return id >= 0 && id < 256 ? BYTE_ARRAYS[id] : null;
}
