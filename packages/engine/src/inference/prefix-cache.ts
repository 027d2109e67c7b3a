import { createHash } from "node:crypto";
import type { KvCache } from "../model/kv-cache.ts";

/** Keys then values of `blockSize` positions of every layer and kv head: [layers, 2, kvHeads, blockSize, headDim]. */
type Block = Float32Array;

/** What the cache holds and has saved. */
export interface PrefixCacheStats {
  /** Blocks held, and their bytes (at most the cache's `maxBytes`). */
  blocks: number;
  bytes: number;
  /** Prompts that reused at least one block, and the positions they did not compute again. */
  hits: number;
  reusedTokens: number;
  /** Blocks dropped, least recently used first, to stay within `maxBytes`. */
  evicted: number;
}

/** A prompt's reusable prefix: its length in positions and the blocks that hold its keys and values. */
export interface PrefixHit {
  length: number;
  blocks: Block[];
}

/**
 * Automatic prefix caching (as vLLM's): the keys and values a prompt's prefill computed are kept by blocks of
 * `blockSize` tokens, each found by a hash of every token up to its end, so that a later prompt that begins with the
 * same tokens (an agent's system prompt and tools, sent on every call; a rollout group's shared prompt) skips them and
 * runs only the rest. Bounded: past `maxBytes`, the least recently used blocks go. Scoped: a block's hash starts from
 * the weight version and the request's cache salt, so nothing computed under other weights or in another scope is
 * ever reused (the gateway runs one engine, with its own cache, per tenant's model version).
 */
export class PrefixCache {
  private readonly blocks = new Map<string, Block>();
  private readonly blockFloats: number;
  private readonly counts = { hits: 0, reusedTokens: 0, evicted: 0 };

  constructor(
    private readonly layout: { layers: number; kvHeads: number; headDim: number },
    readonly maxBytes: number,
    readonly blockSize = 16,
  ) {
    this.blockFloats = layout.layers * 2 * layout.kvHeads * blockSize * layout.headDim;
  }

  get stats(): PrefixCacheStats {
    return { blocks: this.blocks.size, bytes: this.blocks.size * this.blockFloats * 4, ...this.counts };
  }

  /** The hash of each full block of `prompt`, chained from the version and salt. */
  private keys(prompt: readonly number[], version: number, salt: string, blocks: number): string[] {
    const keys: string[] = [];
    let parent = `${version}\u0000${salt}`;
    for (let b = 0; b < blocks; b++) {
      const tokens = Int32Array.from(prompt.slice(b * this.blockSize, (b + 1) * this.blockSize));
      parent = createHash("sha256").update(parent).update(new Uint8Array(tokens.buffer)).digest("base64");
      keys.push(parent);
    }
    return keys;
  }

  /** The longest cached prefix of `prompt` that leaves at least one token to run (its logits start the answer). */
  lookup(prompt: readonly number[], version: number, salt = ""): PrefixHit {
    const most = Math.floor((prompt.length - 1) / this.blockSize);
    const found: Block[] = [];
    for (const key of this.keys(prompt, version, salt, most)) {
      const block = this.blocks.get(key);
      if (!block) break;
      this.blocks.delete(key); // most recently used goes last
      this.blocks.set(key, block);
      found.push(block);
    }
    if (found.length > 0) {
      this.counts.hits++;
      this.counts.reusedTokens += found.length * this.blockSize;
    }
    return { length: found.length * this.blockSize, blocks: found };
  }

  /** Keeps the full blocks of `prompt`, whose positions sit in row `row` of `cache` from position `start` on. */
  store(
    prompt: readonly number[],
    version: number,
    salt: string,
    cache: KvCache,
    row: number,
    start: number,
  ): void {
    const { layers, kvHeads, headDim: D } = this.layout;
    const B = this.blockSize;
    if (this.blockFloats * 4 > this.maxBytes) return;
    this.keys(prompt, version, salt, Math.floor(prompt.length / B)).forEach((key, b) => {
      if (this.blocks.has(key)) return;
      const block = new Float32Array(this.blockFloats);
      let at = 0;
      for (let l = 0; l < layers; l++) {
        for (const source of [cache.keys[l], cache.values[l]]) {
          for (let k = 0; k < kvHeads; k++) {
            const from = ((row * kvHeads + k) * cache.capacity + start + b * B) * D;
            block.set(source.subarray(from, from + B * D), at);
            at += B * D;
          }
        }
      }
      this.blocks.set(key, block);
      while (this.blocks.size * this.blockFloats * 4 > this.maxBytes) {
        const oldest = this.blocks.keys().next().value as string;
        this.blocks.delete(oldest);
        this.counts.evicted++;
      }
    });
  }

  /** Writes a hit's blocks into row `row` of `cache`, positions [0, hit.length); the caller sets the cache's length. */
  fill(cache: KvCache, row: number, hit: PrefixHit): void {
    const { layers, kvHeads, headDim: D } = this.layout;
    const B = this.blockSize;
    hit.blocks.forEach((block, b) => {
      let at = 0;
      for (let l = 0; l < layers; l++) {
        for (const target of [cache.keys[l], cache.values[l]]) {
          for (let k = 0; k < kvHeads; k++) {
            target.set(block.subarray(at, at + B * D), ((row * kvHeads + k) * cache.capacity + b * B) * D);
            at += B * D;
          }
        }
      }
    });
  }

  /** Drops every block (new weights make them all stale). */
  clear(): void {
    this.blocks.clear();
  }
}
