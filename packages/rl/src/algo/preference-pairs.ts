/** A (chosen, rejected) choice among the samples of one prompt, by index into the group. */
export interface PairChoice {
  chosen: number;
  rejected: number;
  /** reward(chosen) - reward(rejected); always > 0. */
  margin: number;
}

/**
 * Semi-online DPO pairing (Lanchantin et al. 2025): the best and the worst sample of a prompt's group.
 * Returns `null` when every reward ties (no preference to learn). Among equal rewards the earliest sample
 * wins, so the choice is deterministic.
 */
export function bestWorstPair(rewards: readonly number[]): PairChoice | null {
  if (rewards.length < 2) return null;
  let best = 0;
  let worst = 0;
  for (let i = 1; i < rewards.length; i++) {
    if (rewards[i] > rewards[best]) best = i;
    if (rewards[i] < rewards[worst]) worst = i;
  }
  const margin = rewards[best] - rewards[worst];
  return margin > 0 ? { chosen: best, rejected: worst, margin } : null;
}
