/** Ids drawn per fill of the pool: 16 bytes each, 65,536 bytes in all, the most `getRandomValues` fills at once. */
const IDS_PER_FILL = 4096;
const pool = new Uint8Array(16 * IDS_PER_FILL);
let nextId = IDS_PER_FILL;
const hex = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/**
 * A random (version 4) UUID, as `crypto.randomUUID()` makes it, from a pool of random bytes filled once per 4,096
 * ids rather than once per 128: a refill costs tens of microseconds, and with two ids per traced call the runtime's
 * own pool makes it land on more than 1% of calls.
 */
export function randomId(): string {
  if (nextId === IDS_PER_FILL) {
    crypto.getRandomValues(pool);
    nextId = 0;
  }
  const at = 16 * nextId++;
  const b = pool;
  b[at + 6] = (b[at + 6] & 0x0f) | 0x40;
  b[at + 8] = (b[at + 8] & 0x3f) | 0x80;
  return (
    `${hex[b[at]]}${hex[b[at + 1]]}${hex[b[at + 2]]}${hex[b[at + 3]]}-${hex[b[at + 4]]}${hex[b[at + 5]]}-` +
    `${hex[b[at + 6]]}${hex[b[at + 7]]}-${hex[b[at + 8]]}${hex[b[at + 9]]}-` +
    `${hex[b[at + 10]]}${hex[b[at + 11]]}${hex[b[at + 12]]}${hex[b[at + 13]]}${hex[b[at + 14]]}${hex[b[at + 15]]}`
  );
}
