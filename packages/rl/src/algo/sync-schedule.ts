/**
 * How often the generator that samples rollouts takes the trained policy's weights, in optimizer steps:
 * 1 = online, `inf` = offline (the generator stays the initial model), s in between = semi-online.
 */
export type SyncInterval = number | "inf";

/** True when the generator must take the policy's weights right after optimizer step `step` (1-based). */
export function syncDue(step: number, interval: SyncInterval): boolean {
  if (interval === "inf") return false;
  return step > 0 && step % interval === 0;
}

/** The policy step whose weights the generator holds while step `step` (1-based) is being prepared. */
export function generatorStepAt(step: number, interval: SyncInterval): number {
  if (interval === "inf") return 0;
  const done = step - 1;
  return done - (done % interval);
}
