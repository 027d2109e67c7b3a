import { GrammarError, MAX_MASK_STEPS, StepBudget } from "./grammar-bounds.ts";
import { alive, GrammarMachine, type LiveStates } from "./grammar-machine.ts";
import type { GrammarProgram } from "./grammar-program.ts";
import type { TokenVocabulary } from "./token-vocabulary.ts";

/**
 * Constrained decoding for one sample: before each token, every token that would take the output outside the
 * grammar is masked out; a turn-ending token is allowed only once the output is complete. Masking one token takes
 * at most MAX_MASK_STEPS matcher steps; past that, or when the grammar allows no token at all, it throws a
 * GrammarError (which fails this sample's request, no other).
 */
export class GrammarConstraint {
  private readonly machine: GrammarMachine;
  private states: LiveStates;

  constructor(
    program: GrammarProgram,
    private readonly vocabulary: TokenVocabulary,
    private readonly stopIds: ReadonlySet<number>,
  ) {
    this.machine = new GrammarMachine(program);
    this.states = this.machine.start();
  }

  /** Whether the output written so far is complete. */
  get complete(): boolean {
    return this.states.accepts;
  }

  /** A copy of `logits[offset .. offset+V)` with every token the grammar forbids set to -Infinity. */
  mask(logits: Float32Array, offset: number, V: number): Float32Array {
    const allowed = this.allowed(V);
    const row = logits.slice(offset, offset + V);
    for (let id = 0; id < V; id++) if (!allowed[id]) row[id] = Number.NEGATIVE_INFINITY;
    return row;
  }

  /** Moves past `token` (which `mask` allowed). */
  advance(token: number): void {
    const bytes = this.vocabulary.bytes[token];
    if (!bytes) return;
    for (const byte of bytes) this.states = this.machine.step(this.states, byte);
  }

  /** 1 for each id below V the grammar allows next. */
  private allowed(V: number): Uint8Array {
    const allowed = new Uint8Array(V);
    const { order, shared, bytes, special } = this.vocabulary;
    const budget = new StepBudget(MAX_MASK_STEPS, "masking the vocabulary for one token");
    /** `levels[d]` for d < depth: the states after the first d bytes of the token in hand. */
    const levels: LiveStates[] = [this.states];
    let depth = 1;
    let any = false;
    for (let i = 0; i < order.length; i++) {
      const id = order[i];
      const b = bytes[id] as Uint8Array;
      if (depth > shared[i] + 1) depth = shared[i] + 1;
      let last = levels[depth - 1];
      while (alive(last) && depth <= b.length) {
        last = this.machine.step(last, b[depth - 1], budget);
        levels[depth++] = last;
      }
      if (alive(last) && id < V) {
        allowed[id] = 1;
        any = true;
      }
    }
    if (this.complete) {
      for (const id of special) {
        if (id < V && this.stopIds.has(id)) {
          allowed[id] = 1;
          any = true;
        }
      }
    }
    if (!any)
      throw new GrammarError("the grammar allows no token of the vocabulary here (it matches no output)");
    return allowed;
  }
}
