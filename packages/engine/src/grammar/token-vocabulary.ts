/** What a token writes: its UTF-8 bytes, or null for a special token (which writes no text). */
export type TokenBytesOf = (id: number) => Uint8Array | null;

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * A vocabulary as constrained decoding walks it: the ids of tokens that write text, sorted by their bytes, each with
 * the length of the prefix it shares with the one before. Walking them in this order steps the grammar once per
 * distinct prefix (a walk of the vocabulary's byte trie) instead of once per byte of every token. Built once per
 * tokenizer.
 */
export class TokenVocabulary {
  /** Ids of the tokens that write text, in byte order. */
  readonly order: Int32Array;
  /** `shared[i]`: the bytes `order[i]` has in common with `order[i - 1]` at its start. */
  readonly shared: Int32Array;
  /** Ids of the special tokens (no text). */
  readonly special: Int32Array;
  /** Each id's bytes. */
  readonly bytes: (Uint8Array | null)[];

  constructor(
    readonly size: number,
    bytesOf: TokenBytesOf,
  ) {
    this.bytes = Array.from({ length: size }, (_, id) => bytesOf(id));
    const text: number[] = [];
    const special: number[] = [];
    this.bytes.forEach((b, id) => {
      if (b === null) special.push(id);
      else if (b.length > 0) text.push(id);
    });
    text.sort((a, b) => compareBytes(this.bytes[a] as Uint8Array, this.bytes[b] as Uint8Array));
    this.order = Int32Array.from(text);
    this.special = Int32Array.from(special);
    this.shared = new Int32Array(text.length);
    for (let i = 1; i < text.length; i++) {
      const a = this.bytes[text[i - 1]] as Uint8Array;
      const b = this.bytes[text[i]] as Uint8Array;
      let n = 0;
      while (n < a.length && n < b.length && a[n] === b[n]) n++;
      this.shared[i] = n;
    }
  }
}
