/**
 * FNV-1a over UTF-16 code units, then MurmurHash3's 32-bit finalizer: FNV alone barely moves the high bits when only
 * the last characters differ (`conv-1`, `conv-2`...), and the bucket is read from the high bits.
 */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A key's place in [0, 1) for a deployment: the same user or conversation always lands in the same place, so it keeps
 * seeing the same model as the canary grows (a key under 10% is still under 50%). `salt` (the deployment id) gives
 * each deployment its own draw, so the same users are not always the guinea pigs.
 */
export function stickyBucket(key: string, salt: string): number {
  return hash32(`${salt}\u0000${key}`) / 2 ** 32;
}

/** Whether a request with this sticky key goes to the canary at this share. */
export function routesToCanary(key: string, salt: string, share: number): boolean {
  return stickyBucket(key, salt) < share;
}
