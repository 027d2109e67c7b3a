/**
 * The bounds a request's grammar runs under. A grammar comes from a tenant (`response_format`, `tools`), so what it
 * costs to compile and to follow is capped; `docs/tenant-bounds.md` states these numbers.
 */

/** Schemas nested deeper than this along any path (`$ref` hops included) are refused. */
export const MAX_SCHEMA_DEPTH = 64;

/**
 * The most states the schemas of one request compile to, counted as the compiler builds them: each schema once per
 * place it is used (a `$ref` used in two places counts twice, one used twice in the same place once), each `enum`
 * value once. A recursive `$ref` counts once; it unfolds as the output goes, under the bounds below.
 */
export const MAX_GRAMMAR_STATES = 20_000;

/**
 * The most nodes a request's grammar compiles to (each byte of a key, `const` or `enum` value is one): what the
 * engines hold and what crosses to the PyTorch worker for one request stays a few megabytes at most.
 */
export const MAX_PROGRAM_NODES = 250_000;

/**
 * The most different nestings of values (call stacks of the grammar program) one request's output and the tokens
 * tried for it may open: each is kept for the request's life, so this bounds its memory.
 */
export const MAX_CALL_STACKS = 1_000_000;

/** The most matcher states one step of the output may hold at once (the states reached by one byte). */
export const MAX_LIVE_STATES = 10_000;

/**
 * The most matcher steps one token's mask may take over the whole vocabulary: ten times what a JSON string takes
 * under a 49,152-token vocabulary (SmolLM2's, about 100,000 steps), about 0.1 s of one core.
 */
export const MAX_MASK_STEPS = 1_000_000;

/** A grammar the engine cannot follow within its bounds, or at all; answered 400 naming the field it came from. */
export class GrammarError extends Error {
  override readonly name = "GrammarError";
}

/** Counts matcher steps against a bound and throws a GrammarError past it. */
export class StepBudget {
  private left: number;

  constructor(
    private readonly limit: number,
    private readonly what: string,
  ) {
    this.left = limit;
  }

  /** Takes `n` steps. */
  spend(n = 1): void {
    this.left -= n;
    if (this.left < 0) throw new GrammarError(`${this.what} took more than ${this.limit} matcher steps`);
  }
}
