/** A cached value: its read (settled or not), when it was made, and the read refreshing it, if one is under way. */
interface Entry<V> {
  value: Promise<V>;
  readAt: number;
  refresh: Promise<V> | null;
}

/** Options of a `RefreshingCache`. */
export interface RefreshingCacheOptions<V> {
  /** How long a read value may be used, in ms; past it, callers wait for a new read. */
  ttlMs: number;
  /** From this age on (ms, less than `ttlMs`), a call starts a read in the background and is answered at once. */
  refreshAfterMs: number;
  /** Whether a read value is kept (default: all are); one that is not is read again by the next call. */
  keep?: (value: V) => boolean;
  /** Most keys held; past it, the cache is emptied (default 10,000). */
  maxKeys?: number;
  /** The clock (default Date.now). */
  now?: () => number;
}

/**
 * Values read from the database per key, so that requests do not query it. Calls that miss together share one read.
 * A value is read again ahead of its expiry: from `refreshAfterMs` on, a call is answered from memory while one read
 * runs in the background, so under steady traffic no request waits for the database, and no value is used past
 * `ttlMs` (a change made elsewhere shows within it).
 */
export class RefreshingCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly now: () => number;

  constructor(
    private readonly read: (key: string) => Promise<V>,
    private readonly options: RefreshingCacheOptions<V>,
  ) {
    if (!(options.refreshAfterMs < options.ttlMs)) {
      throw new Error(`RefreshingCache: refreshAfterMs (${options.refreshAfterMs}) must be less than ttlMs`);
    }
    this.now = options.now ?? Date.now;
  }

  /** The key's value: from memory while it is young enough, else from a read (shared with other callers). */
  get(key: string): Promise<V> {
    const entry = this.entries.get(key);
    if (entry) {
      const age = this.now() - entry.readAt;
      if (age < this.options.ttlMs) {
        if (age >= this.options.refreshAfterMs && !entry.refresh) this.refresh(key, entry);
        return entry.value;
      }
      if (entry.refresh) return entry.refresh;
    }
    return this.readInto(key);
  }

  /** Forgets a key: its next call reads the database and waits for it. */
  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets every key. */
  clear(): void {
    this.entries.clear();
  }

  private readInto(key: string): Promise<V> {
    if (this.entries.size >= (this.options.maxKeys ?? 10_000)) this.entries.clear();
    const entry: Entry<V> = { value: this.read(key), readAt: this.now(), refresh: null };
    this.entries.set(key, entry);
    entry.value.then(
      (value) => {
        if (this.entries.get(key) === entry && !this.kept(value)) this.entries.delete(key);
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry.value;
  }

  private refresh(key: string, entry: Entry<V>): void {
    entry.refresh = this.read(key);
    entry.refresh.then(
      (value) => {
        if (this.entries.get(key) !== entry) return;
        if (this.kept(value)) {
          this.entries.set(key, { value: Promise.resolve(value), readAt: this.now(), refresh: null });
        } else this.entries.delete(key);
      },
      () => {
        // the database could not answer: the next call reads again and waits, so that it sees the error
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
  }

  private kept(value: V): boolean {
    return this.options.keep ? this.options.keep(value) : true;
  }
}
