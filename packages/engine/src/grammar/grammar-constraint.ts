import type { OutputGrammar } from "@arc/core";
import { grammarMatcher, type Matcher } from "./json-matcher.ts";

/** What a token writes: its UTF-8 bytes, or null for a special token (which writes no text). */
export type TokenBytesOf = (id: number) => Uint8Array | null;

/**
 * Constrained decoding for one sample: before each token, every token that would take the output outside the
 * grammar is masked out; a turn-ending token is allowed only once the output is complete.
 */
export class GrammarConstraint {
  private states: Matcher[];

  constructor(
    grammar: OutputGrammar,
    private readonly bytesOf: TokenBytesOf,
    private readonly stopIds: ReadonlySet<number>,
  ) {
    this.states = [grammarMatcher(grammar)];
  }

  /** Whether the output written so far is complete. */
  get complete(): boolean {
    return this.states.some((s) => s.accepts);
  }

  /** A copy of `logits[offset .. offset+V)` with every token the grammar forbids set to -Infinity. */
  mask(logits: Float32Array, offset: number, V: number): Float32Array {
    const row = logits.slice(offset, offset + V);
    const complete = this.complete;
    const memo = new Map<number, boolean>();
    for (let id = 0; id < V; id++) {
      const bytes = this.bytesOf(id);
      const allowed =
        bytes === null ? complete && this.stopIds.has(id) : bytes.length > 0 && this.allows(bytes, memo);
      if (!allowed) row[id] = Number.NEGATIVE_INFINITY;
    }
    return row;
  }

  /** Moves past `token` (which `mask` allowed). */
  advance(token: number): void {
    const bytes = this.bytesOf(token);
    if (bytes) this.states = step(this.states, bytes);
  }

  private allows(bytes: Uint8Array, firstByte: Map<number, boolean>): boolean {
    let allowed = firstByte.get(bytes[0]);
    if (allowed === undefined) {
      allowed = step(this.states, bytes.subarray(0, 1)).length > 0;
      firstByte.set(bytes[0], allowed);
    }
    return allowed && (bytes.length === 1 || step(this.states, bytes).length > 0);
  }
}

function step(states: Matcher[], bytes: Uint8Array): Matcher[] {
  let current = states;
  for (const byte of bytes) {
    current = current.flatMap((s) => s.next(byte));
    if (current.length === 0) return current;
  }
  return current;
}
