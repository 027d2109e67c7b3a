import { GrammarError, MAX_CALL_STACKS, MAX_LIVE_STATES, type StepBudget } from "./grammar-bounds.ts";
import { BYTES, CALL, type GrammarProgram, RETURN, SPLIT } from "./grammar-program.ts";

/** The calls open at a state: the node each returns to, innermost first. Equal stacks are one object. */
interface Stack {
  readonly id: number;
  readonly ret: number;
  readonly parent: Stack | null;
  /** The stacks one call deeper, by the node they return to, made on first use. */
  readonly children: Map<number, Stack>;
  /** What a node reached by a byte stands for with this stack, by node, kept as met (see `expandOne`). */
  readonly expansions: Map<number, LiveStates>;
}

/**
 * Where the output may be after the bytes read so far: the byte-reading nodes with the calls open at each, and whether
 * the output may end here. Immutable, so the engine can try every candidate token from the same states.
 */
export interface LiveStates {
  readonly nodes: readonly number[];
  readonly stacks: readonly (Stack | null)[];
  readonly accepts: boolean;
  /** For states the machine keeps (see `expandOne`): the states after each byte, filled in as they are met. */
  readonly next?: (LiveStates | undefined)[];
}

const DEAD: LiveStates = { nodes: [], stacks: [], accepts: false, next: undefined };

/**
 * The most states a machine keeps with their steps (a request's walks of the vocabulary meet them again and again):
 * at most 10,000 tables of 256 entries, about 20 MB.
 */
const KEPT_EXPANSIONS = 10_000;

/** Whether any output goes on from `states` (or ends there). */
export const alive = (states: LiveStates) => states.accepts || states.nodes.length > 0;

/**
 * Follows a grammar program (grammar-program.ts) over UTF-8 bytes. The PyTorch worker's `GrammarMachine`
 * (`python/arc_torch/grammar.py`) is the same interpreter line for line; grammar-agreement.test.ts holds them to the
 * same verdicts.
 */
export class GrammarMachine {
  /** Each byte-reading node of several ranges: its next node by byte (-1: none), built on first use. */
  private readonly tables: (Int32Array | undefined)[];
  private readonly roots = new Map<number, Stack>();
  private stacksMade = 0;
  /** What a node reached by a byte stands for with no call open, by node (the other stacks keep their own). */
  private readonly rootExpansions = new Map<number, LiveStates>();
  private expansionsKept = 0;

  constructor(private readonly program: GrammarProgram) {
    this.tables = new Array(program.nodes.length);
  }

  /** The states before the first byte of the output. */
  start(): LiveStates {
    return this.expand([this.program.start], [null]);
  }

  /** The states after `byte`; dead (see `alive`) when no state takes it. Throws a GrammarError past MAX_LIVE_STATES. */
  step(states: LiveStates, byte: number, budget?: StepBudget): LiveStates {
    const known = states.next?.[byte];
    if (known) {
      budget?.spend(states.nodes.length);
      return known;
    }
    let after: LiveStates;
    if (states.nodes.length === 1) {
      budget?.spend();
      const to = this.target(states.nodes[0], byte);
      after = to < 0 ? DEAD : this.expandOne(to, states.stacks[0], budget);
    } else {
      const nodes: number[] = [];
      const stacks: (Stack | null)[] = [];
      for (let i = 0; i < states.nodes.length; i++) {
        budget?.spend();
        const to = this.target(states.nodes[i], byte);
        if (to < 0) continue;
        nodes.push(to);
        stacks.push(states.stacks[i]);
      }
      if (nodes.length === 0) after = DEAD;
      else if (nodes.length === 1) after = this.expandOne(nodes[0], stacks[0], budget);
      else after = this.expand(nodes, stacks, budget);
    }
    if (states.next) states.next[byte] = after;
    return after;
  }

  /** `expand` of one node and its stack, kept with its steps: most steps go from one state to one met before. */
  private expandOne(node: number, stack: Stack | null, budget?: StepBudget): LiveStates {
    const kept = stack ? stack.expansions : this.rootExpansions;
    let states = kept.get(node);
    if (!states) {
      states = this.expand([node], [stack], budget);
      if (this.expansionsKept < KEPT_EXPANSIONS) {
        this.expansionsKept++;
        states = {
          nodes: states.nodes,
          stacks: states.stacks,
          accepts: states.accepts,
          next: new Array<LiveStates | undefined>(256).fill(undefined),
        };
        kept.set(node, states);
      }
    }
    return states;
  }

  /**
   * The byte-reading states that `nodes` (with `stacks`) stand for, each once: splits followed, calls entered,
   * returns taken; a return with no call open is the end of the output.
   */
  private expand(nodes: number[], stacks: (Stack | null)[], budget?: StepBudget): LiveStates {
    const size = this.program.nodes.length;
    const seen = new Set<number>();
    const out: number[] = [];
    const outStacks: (Stack | null)[] = [];
    let accepts = false;
    const pending = nodes.slice().reverse();
    const pendingStacks = stacks.slice().reverse();
    while (pending.length > 0) {
      const node = pending.pop() as number;
      const stack = pendingStacks.pop() as Stack | null;
      const key = (stack ? stack.id : 0) * size + node;
      if (seen.has(key)) continue;
      seen.add(key);
      if (seen.size > MAX_LIVE_STATES)
        throw new GrammarError(
          `the grammar holds more than ${MAX_LIVE_STATES} states at once (the bound on live states)`,
        );
      budget?.spend();
      const n = this.program.nodes[node];
      switch (n[0]) {
        case BYTES:
          out.push(node);
          outStacks.push(stack);
          break;
        case SPLIT:
          for (let i = n.length - 1; i >= 1; i--) {
            pending.push(n[i]);
            pendingStacks.push(stack);
          }
          break;
        case CALL:
          pending.push(n[1]);
          pendingStacks.push(this.push(stack, n[2]));
          break;
        case RETURN:
          if (stack) {
            pending.push(stack.ret);
            pendingStacks.push(stack.parent);
          } else accepts = true;
          break;
      }
    }
    return { nodes: out, stacks: outStacks, accepts, next: undefined };
  }

  /** `stack` with one more call open, returning to `ret`. */
  private push(stack: Stack | null, ret: number): Stack {
    const siblings = stack ? stack.children : this.roots;
    let child = siblings.get(ret);
    if (!child) {
      if (this.stacksMade >= MAX_CALL_STACKS)
        throw new GrammarError(
          `the grammar opened more than ${MAX_CALL_STACKS} different nestings of values (the bound on call stacks)`,
        );
      child = { id: ++this.stacksMade, ret, parent: stack, children: new Map(), expansions: new Map() };
      siblings.set(ret, child);
    }
    return child;
  }

  /** Where byte-reading node `node` goes on `byte`, or -1: one range read directly, several through a table. */
  private target(node: number, byte: number): number {
    const n = this.program.nodes[node];
    if (n.length === 4) return byte >= n[1] && byte <= n[2] ? n[3] : -1;
    let table = this.tables[node];
    if (!table) {
      table = new Int32Array(256).fill(-1);
      for (let i = 1; i < n.length; i += 3) table.fill(n[i + 2], n[i], n[i + 1] + 1);
      this.tables[node] = table;
    }
    return table[byte];
  }
}
