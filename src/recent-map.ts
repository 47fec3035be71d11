/**
 * A bounded map that keeps what was set most recently. Setting a key moves it to the newest
 * end, so the map is ordered by when each entry was last set; a full map lets go of its
 * oldest entry, one at a time. Hot-path bookkeeping (verified tokens, last-use writes) uses it
 * instead of clearing a whole map when full: clearing would make every entry a miss at once,
 * and every miss costs a store call.
 */
export class RecentMap<K, V> {
  private readonly map = new Map<K, V>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error('max must be a positive integer');
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Sets `key` as the newest entry; the oldest goes when the map is full. */
  set(key: K, value: V): void {
    // A Map keeps a key's first insertion position on update: delete first to make it the newest.
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }

  /**
   * Drops entries from the oldest end while `stale` holds for them. Entries set in time order
   * with a fixed lifetime expire from that end, so this costs only the entries it drops.
   */
  dropOldestWhile(stale: (value: V, key: K) => boolean): void {
    for (const [key, value] of this.map) {
      if (!stale(value, key)) return;
      this.map.delete(key);
    }
  }

  /** Every entry, oldest first. */
  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }
}
