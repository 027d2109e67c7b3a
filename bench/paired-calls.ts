/**
 * Times `pairs` pairs of calls, one of `a` and one of `b` per pair in random order (so neither always goes first);
 * each call resolves with its own time in ms. Returns the times of each side, pair by pair.
 */
export async function pairedCalls(
  a: () => Promise<number>,
  b: () => Promise<number>,
  pairs: number,
): Promise<{ a: number[]; b: number[] }> {
  const times = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < pairs; i++) {
    if (Math.random() < 0.5) {
      times.a.push(await a());
      times.b.push(await b());
    } else {
      times.b.push(await b());
      times.a.push(await a());
    }
  }
  return times;
}
