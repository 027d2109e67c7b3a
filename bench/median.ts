/** The middle value of `xs` (the upper of the two middles when their number is even); the benches' median of runs. */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
}
