/**
 * Runs `attempt` on all of `items`; when it throws, on each half, down to single items, so that the items at fault
 * are found in about 2·log2(n) attempts per bad item and every other item still goes through. `onAlone` receives
 * each item that fails by itself, with its error.
 */
export async function isolateFailures<T>(
  items: T[],
  attempt: (items: T[]) => Promise<void>,
  onAlone: (item: T, error: unknown) => Promise<void> | void,
): Promise<void> {
  try {
    await attempt(items);
  } catch (error) {
    if (items.length === 1) return onAlone(items[0], error);
    const half = Math.ceil(items.length / 2);
    await isolateFailures(items.slice(0, half), attempt, onAlone);
    await isolateFailures(items.slice(half), attempt, onAlone);
  }
}
