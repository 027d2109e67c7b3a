import { createRng, deriveSeed } from "@arc/core";

/**
 * The data order of a run as a pure function of (seed, position): epoch e is a seeded shuffle of
 * `0..size-1`, so the item at any position can be recomputed after a crash without saved state.
 */
export function itemAt(position: number, size: number, seed: number): number {
  if (size <= 0) throw new RangeError(`size: expected a positive dataset size, got ${size}`);
  const epoch = Math.floor(position / size);
  return epochPermutation(size, seed, epoch)[position % size];
}

const cache = new Map<string, number[]>();

/** The seeded Fisher-Yates permutation of epoch `epoch`. */
export function epochPermutation(size: number, seed: number, epoch: number): number[] {
  const key = `${size}:${seed}:${epoch}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const rng = createRng(deriveSeed(seed, `epoch:${epoch}`));
  const order = Array.from({ length: size }, (_, i) => i);
  for (let i = size - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  if (cache.size > 16) cache.clear();
  cache.set(key, order);
  return order;
}

/** The items of optimizer step `step` (1-based) with `perStep` items per step. */
export function batchAt(step: number, perStep: number, size: number, seed: number): number[] {
  const start = (step - 1) * perStep;
  return Array.from({ length: perStep }, (_, k) => itemAt(start + k, size, seed));
}
