import { headDim, type LlamaConfig } from "./llama-config.ts";

/**
 * Keys and values of past positions for incremental decoding, per layer [rows, kvHeads, capacity, headDim] in
 * plain Float32Arrays. Attention writes each new position into it in place (model/llama.ts), so a decoding step
 * copies nothing; the buffers grow by half when they are full. Row operations (select, join, trim) copy whole
 * position blocks, and happen only when rows join or leave the running batch.
 */
export class KvCache {
  readonly keys: Float32Array[];
  readonly values: Float32Array[];
  /** Cached positions of every row, its left padding included. */
  length = 0;

  constructor(
    readonly rows: number,
    readonly kvHeads: number,
    readonly headDim: number,
    readonly layers: number,
    public capacity: number,
  ) {
    const size = rows * kvHeads * capacity * headDim;
    this.keys = Array.from({ length: layers }, () => new Float32Array(size));
    this.values = Array.from({ length: layers }, () => new Float32Array(size));
  }

  /** An empty cache for `rows` rows of this model, with room for `capacity` positions before it grows. */
  static forModel(config: LlamaConfig, rows: number, capacity: number): KvCache {
    return new KvCache(
      rows,
      config.num_key_value_heads,
      headDim(config),
      config.num_hidden_layers,
      Math.min(capacity, config.max_position_embeddings),
    );
  }

  /** Makes room for `more` positions after the cached ones, moving to larger buffers when these are full. */
  reserve(more: number): void {
    const need = this.length + more;
    if (need <= this.capacity) return;
    const grown = this.emptyLike(this.rows, Math.max(need, Math.ceil(this.capacity * 1.5)));
    for (let r = 0; r < this.rows; r++) copyRow(this, r, grown, r, 0);
    this.adopt(grown);
  }

  /** A cache of the given rows of this one, in that order (a row may be taken more than once). */
  selectRows(rows: number[]): KvCache {
    const out = this.emptyLike(rows.length, this.capacity);
    out.length = this.length;
    rows.forEach((from, to) => {
      copyRow(this, from, out, to, 0);
    });
    return out;
  }

  /** The rows of `a` then those of `b`, the shorter one's positions shifted right (left padding) to end together. */
  static concatRows(a: KvCache, b: KvCache): KvCache {
    const length = Math.max(a.length, b.length);
    const out = a.emptyLike(a.rows + b.rows, Math.max(a.capacity, b.capacity, length));
    out.length = length;
    for (let r = 0; r < a.rows; r++) copyRow(a, r, out, r, length - a.length);
    for (let r = 0; r < b.rows; r++) copyRow(b, r, out, a.rows + r, length - b.length);
    return out;
  }

  /**
   * Overwrites rows `into` of this cache with the rows of `src`, in order, their positions shifted right to end with
   * this cache's (the positions before them become left padding); `src` holds no more positions than this cache.
   */
  placeRows(src: KvCache, into: readonly number[]): void {
    if (src.length > this.length) {
      throw new RangeError(`placeRows: ${src.length} positions do not fit before ${this.length}`);
    }
    into.forEach((to, from) => {
      copyRow(src, from, this, to, this.length - src.length);
    });
  }

  /** Drops the first `count` positions of every row (padding no row needs any more). */
  dropLeading(count: number): void {
    if (count <= 0) return;
    const D = this.headDim;
    for (let l = 0; l < this.layers; l++) {
      for (let block = 0; block < this.rows * this.kvHeads; block++) {
        const start = block * this.capacity * D;
        this.keys[l].copyWithin(start, start + count * D, start + this.length * D);
        this.values[l].copyWithin(start, start + count * D, start + this.length * D);
      }
    }
    this.length -= count;
  }

  /** Layer `layer`'s keys or values of positions [0, positions) as one dense [rows, kvHeads, positions, headDim] array. */
  dense(layer: number, which: "keys" | "values", positions: number): Float32Array {
    const source = this[which][layer];
    const D = this.headDim;
    if (positions === this.capacity) return source;
    const out = new Float32Array(this.rows * this.kvHeads * positions * D);
    for (let block = 0; block < this.rows * this.kvHeads; block++) {
      const start = block * this.capacity * D;
      out.set(source.subarray(start, start + positions * D), block * positions * D);
    }
    return out;
  }

  /**
   * Writes T new positions of layer `layer` (keys and values [rows, T, kvHeads, headDim]) after the `length`
   * cached ones; the caller advances `length` once every layer has its new positions.
   */
  write(layer: number, keys: Float32Array, values: Float32Array, T: number): void {
    const { kvHeads: K, headDim: D } = this;
    for (let r = 0; r < this.rows; r++) {
      for (let t = 0; t < T; t++) {
        for (let k = 0; k < K; k++) {
          const from = ((r * T + t) * K + k) * D;
          const to = ((r * K + k) * this.capacity + this.length + t) * D;
          this.keys[layer].set(keys.subarray(from, from + D), to);
          this.values[layer].set(values.subarray(from, from + D), to);
        }
      }
    }
  }

  private emptyLike(rows: number, capacity: number): KvCache {
    return new KvCache(rows, this.kvHeads, this.headDim, this.layers, capacity);
  }

  /** Takes over another cache's buffers (same rows), as after growing. */
  private adopt(other: KvCache): void {
    for (let l = 0; l < this.layers; l++) {
      this.keys[l] = other.keys[l];
      this.values[l] = other.values[l];
    }
    this.capacity = other.capacity;
  }
}

/** Copies row `from` of `src` (positions [0, src.length)) into row `to` of `dst`, starting at position `shift`. */
function copyRow(src: KvCache, from: number, dst: KvCache, to: number, shift: number): void {
  const D = src.headDim;
  for (let l = 0; l < src.layers; l++) {
    for (let k = 0; k < src.kvHeads; k++) {
      const at = (from * src.kvHeads + k) * src.capacity * D;
      const into = ((to * dst.kvHeads + k) * dst.capacity + shift) * D;
      dst.keys[l].set(src.keys[l].subarray(at, at + src.length * D), into);
      dst.values[l].set(src.values[l].subarray(at, at + src.length * D), into);
    }
  }
}
