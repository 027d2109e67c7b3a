/**
 * How long to wait before retry number `failures` (1-based): exponential from `initialMs`, capped at
 * `maxMs`, with "equal jitter" (a random point in the upper half) so that many agents do not retry in step.
 */
export function backoffDelay(
  failures: number,
  initialMs: number,
  maxMs: number,
  random = Math.random,
): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.max(0, failures - 1));
  return ceiling / 2 + random() * (ceiling / 2);
}

/** The server's `Retry-After` header (seconds or an HTTP date) in milliseconds, or undefined when absent/unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
