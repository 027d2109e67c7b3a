/** Options of {@link waitUntil}. */
export interface WaitUntilOptions {
  /** How long to keep checking before giving up; a test must fail rather than hang (node:test has no default timeout). Default 10 000 ms. */
  timeoutMs?: number;
  /** Pause between checks, so a poll against a server does not spin a core. Default 25 ms; 0 checks again on the next macrotask. */
  intervalMs?: number;
}

/**
 * Calls `check` until it returns a value other than `undefined`, `null` or `false`, and returns that value.
 * Throws `timed out after <timeoutMs> ms waiting for <what>` when the deadline passes; an error thrown by
 * `check` propagates at once. A test helper: a timer loop, no I/O of its own.
 */
export async function waitUntil<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  what: string,
  options: WaitUntilOptions = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 25 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
