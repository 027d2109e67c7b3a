/**
 * A fixed-capacity FIFO on a ring: `push` and `shift` are O(1) and never allocate once full, so the
 * agent's call path pays the same small cost however far behind the exporter is.
 */
export class BoundedQueue<T> {
  private readonly slots: (T | undefined)[];
  private head = 0;
  private count = 0;

  constructor(
    /** The most items held at once. */
    readonly capacity: number,
  ) {
    this.slots = new Array(capacity);
  }

  /** How many items are held. */
  get size(): number {
    return this.count;
  }

  /** Appends `item`; when full, evicts and returns the oldest item to make room. */
  push(item: T): T | undefined {
    let evicted: T | undefined;
    if (this.count === this.capacity) {
      evicted = this.shift();
    }
    this.slots[(this.head + this.count) % this.capacity] = item;
    this.count++;
    return evicted;
  }

  /** Puts `item` back in front (it is older than everything held); false, and nothing changes, when full. */
  unshift(item: T): boolean {
    if (this.count === this.capacity) return false;
    this.head = (this.head - 1 + this.capacity) % this.capacity;
    this.slots[this.head] = item;
    this.count++;
    return true;
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    return item;
  }

  /** The oldest item, left in place. */
  peek(): T | undefined {
    return this.count === 0 ? undefined : this.slots[this.head];
  }
}
