/**
 * AReaL's bounded staleness (`max_head_offpolicyness`, eta): a rollout may start only while
 * `currentVersion - startVersion <= maxStaleness`, where `startVersion` is the policy version the trainer
 * will be at when it consumes the rollout's batch. Counting rollouts: the trainer consumes `batchSize`
 * rollouts per version, so with `started` rollouts begun so far the next one lands in batch
 * `floor(started / batchSize)`, trained at version `floor(started / batchSize)`; it may start only if that
 * is at most `currentVersion + maxStaleness`. `maxStaleness = 0` is synchronous: a batch is generated
 * only by the weights it is trained from.
 */
export interface StalenessGateInput {
  /** The policy version the generator holds now. */
  currentVersion: number;
  /** Rollouts started so far (accepted, running and rejected-then-retried all count once they began). */
  started: number;
  /** Rollouts the trainer consumes per optimizer step. */
  batchSize: number;
  maxStaleness: number;
  /** Rollouts in flight now, bounded by `maxConcurrentRollouts`. */
  running: number;
  maxConcurrentRollouts: number;
}

/** True when one more rollout may start now. */
export function mayStartRollout(input: StalenessGateInput): boolean {
  if (input.running >= input.maxConcurrentRollouts) return false;
  const consumedAt = Math.floor(input.started / input.batchSize);
  return consumedAt - input.currentVersion <= input.maxStaleness;
}

/** Staleness of a trajectory consumed at `trainVersion`: how many versions behind its oldest token is. */
export function trajectoryStaleness(versionRange: readonly [number, number], trainVersion: number): number {
  return trainVersion - versionRange[0];
}
