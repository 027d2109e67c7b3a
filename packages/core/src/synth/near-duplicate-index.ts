import { fnv1a } from "../tasks/rng.ts";

const HASHES = 64;
const BANDS = 16;
const ROWS = HASHES / BANDS;

/** Text as compared for duplicates: lowercased, punctuation dropped, whitespace collapsed (numbers kept: other numbers make another item). */
export function duplicateKey(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
}

/** Word unigrams and bigrams: one changed slot value (another currency, another date) moves the text well apart. */
function shingles(key: string): Set<number> {
  const words = key.split(" ");
  const out = new Set<number>();
  for (let i = 0; i < words.length; i++) {
    out.add(fnv1a(words[i]));
    if (i + 1 < words.length) out.add(fnv1a(`${words[i]} ${words[i + 1]}`));
  }
  return out;
}

const MULTIPLIERS = Array.from({ length: HASHES }, (_, i) => (fnv1a(`minhash-a-${i}`) | 1) >>> 0);
const OFFSETS = Array.from({ length: HASHES }, (_, i) => fnv1a(`minhash-b-${i}`));

function minhash(set: Set<number>): Uint32Array {
  const sig = new Uint32Array(HASHES).fill(0xffffffff);
  for (const x of set) {
    for (let i = 0; i < HASHES; i++) {
      const h = Math.imul(x ^ OFFSETS[i], MULTIPLIERS[i]) >>> 0;
      if (h < sig[i]) sig[i] = h;
    }
  }
  return sig;
}

/** Exact Jaccard similarity of two shingle sets. */
function jaccard(a: Set<number>, b: Set<number>): number {
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / (a.size + b.size - shared || 1);
}

/**
 * Finds duplicates and near-duplicates among texts: exact after normalization, or Jaccard similarity of
 * word unigrams+bigrams >= `threshold` (0.8: "Please convert 50 USD to EUR" ≈ "Convert 50 USD to EUR", while
 * "Convert 50 USD to GBP" is another item), found with MinHash + LSH banding (64 hashes, 16 bands) and confirmed exactly.
 */
export class NearDuplicateIndex {
  private readonly exact = new Map<string, string>();
  private readonly sets = new Map<string, Set<number>>();
  private readonly buckets = new Map<string, string[]>();

  constructor(readonly threshold = 0.8) {}

  /** The id of an indexed text that `text` duplicates, or undefined. */
  find(text: string): string | undefined {
    const key = duplicateKey(text);
    const same = this.exact.get(key);
    if (same !== undefined) return same;
    const set = shingles(key);
    const sig = minhash(set);
    for (let b = 0; b < BANDS; b++) {
      for (const id of this.buckets.get(bandKey(sig, b)) ?? []) {
        if (jaccard(set, this.sets.get(id) as Set<number>) >= this.threshold) return id;
      }
    }
    return undefined;
  }

  /** Indexes a text under an id. */
  add(id: string, text: string): void {
    const key = duplicateKey(text);
    if (!this.exact.has(key)) this.exact.set(key, id);
    const set = shingles(key);
    this.sets.set(id, set);
    const sig = minhash(set);
    for (let b = 0; b < BANDS; b++) {
      const k = bandKey(sig, b);
      const bucket = this.buckets.get(k);
      if (bucket) bucket.push(id);
      else this.buckets.set(k, [id]);
    }
  }

  /** An index over many texts (ids are their positions). */
  static of(texts: Iterable<string>, threshold = 0.8): NearDuplicateIndex {
    const index = new NearDuplicateIndex(threshold);
    let i = 0;
    for (const t of texts) index.add(`x${i++}`, t);
    return index;
  }
}

function bandKey(sig: Uint32Array, band: number): string {
  let k = `${band}`;
  for (let r = 0; r < ROWS; r++) k += `:${sig[band * ROWS + r]}`;
  return k;
}
