/** A seeded pseudo-random source: the same seed gives the same sequence on every machine (mulberry32). */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both ends included. */
  int(min: number, max: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
}

/** Creates a seeded generator; seeds are truncated to 32 bits. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      if (items.length === 0) throw new RangeError("cannot pick from an empty list");
      return items[Math.floor(next() * items.length)];
    },
    chance: (p) => next() < p,
  };
}

/** FNV-1a 32-bit hash of a string: a cheap, stable way to derive seeds and ids from text. */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Derives an independent seed for a named sub-stream (e.g. a split), so streams never share draws. */
export function deriveSeed(seed: number, salt: string): number {
  return fnv1a(`${seed >>> 0}:${salt}`);
}
