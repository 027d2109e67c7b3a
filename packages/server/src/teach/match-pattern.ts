import { textTerms } from "@arc/core";

/** What a pattern offers for matching a live request: its id and the terms of its failed requests. */
export interface PatternTerms {
  /** The pattern id. */
  id: string;
  /** The pattern's top request terms, from the failure pipeline. */
  topTerms: readonly string[];
}

/**
 * The pattern a live request belongs to: the one whose top request terms the request shares most,
 * with at least `minShared` in common (or all of them when the pattern has fewer). A request has no
 * failure yet, so its terms are all there is to go on; clients that know can name the pattern
 * (header `x-arc-pattern`) instead.
 */
export function matchPattern(text: string, patterns: readonly PatternTerms[], minShared = 2): string | null {
  const terms = textTerms(text);
  let best: { id: string; shared: number } | null = null;
  for (const p of patterns) {
    const shared = p.topTerms.filter((t) => terms.has(t)).length;
    const needed = Math.min(minShared, p.topTerms.length);
    if (needed > 0 && shared >= needed && (!best || shared > best.shared)) best = { id: p.id, shared };
  }
  return best?.id ?? null;
}
