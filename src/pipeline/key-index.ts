/**
 * A set of 16-byte keys with an int32 value each, in typed arrays with open addressing:
 * about 24 bytes a key at the table's lowest load, against ~200 for a Set of hex strings.
 * Slots come from all four words mixed, so keys that are not digests spread too.
 */

const EMPTY = -1;

/**
 * Slots for the distinct keys a tree of `bytes` may hold (about one record per 1.5 KB), within
 * reason: a table made this size up front is not rehashed while it fills (`grow` took 22-28 ms
 * of a one-thread `stats` or `dedupe` profile of the 200 MB bench tree).
 */
export function slotsForTree(bytes: number): number {
  return Math.min(1 << 20, Math.ceil(bytes / 1536));
}

export class KeyIndex {
  private keys: Uint32Array;
  private values: Int32Array;
  private capacity: number;
  size = 0;

  constructor(initialCapacity = 1 << 12) {
    this.capacity = 1 << Math.ceil(Math.log2(Math.max(16, initialCapacity)));
    this.keys = new Uint32Array(this.capacity * 4);
    this.values = new Int32Array(this.capacity).fill(EMPTY);
  }

  /** Bytes held by the table, for the benchmark's bytes-per-key figure. */
  get byteSize(): number {
    return this.keys.byteLength + this.values.byteLength;
  }

  private slotOf(k0: number, k1: number, k2: number, k3: number): number {
    const mask = this.capacity - 1;
    // Digests would need no mixing, but position keys (filter) and other callers' keys do.
    let h = k0 ^ Math.imul(k1, 0x9e3779b1) ^ Math.imul(k2, 0x85ebca77) ^ Math.imul(k3, 0xc2b2ae3d);
    h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
    let slot = (h ^ (h >>> 16)) & mask;
    for (;;) {
      if (this.values[slot] === EMPTY) return slot;
      const base = slot * 4;
      if (this.keys[base] === k0 && this.keys[base + 1] === k1 && this.keys[base + 2] === k2 && this.keys[base + 3] === k3) {
        return slot;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** The value stored for the key, or -1 when absent. */
  get(key: Uint32Array): number {
    return this.values[this.slotOf(key[0], key[1], key[2], key[3])];
  }

  /** Stores `value` (>= 0) for the key, replacing any earlier value. */
  set(key: Uint32Array, value: number): void {
    const slot = this.slotOf(key[0], key[1], key[2], key[3]);
    if (this.values[slot] === EMPTY) this.insert(slot, key, value);
    else this.values[slot] = value;
  }

  /** Stores the key with `value` when absent; returns the value it already had, or -1. */
  addIfAbsent(key: Uint32Array, value: number): number {
    const slot = this.slotOf(key[0], key[1], key[2], key[3]);
    const existing = this.values[slot];
    if (existing !== EMPTY) return existing;
    this.insert(slot, key, value);
    return EMPTY;
  }

  private insert(slot: number, key: Uint32Array, value: number): void {
    this.keys.set(key, slot * 4);
    this.values[slot] = value;
    this.size++;
    // Past 70% load, probe chains grow quickly.
    if (this.size * 10 > this.capacity * 7) this.grow();
  }

  /**
   * The keys, 16 bytes each with every word big-endian, in blocks of at most `blockKeys` keys
   * (a block is reused: write it out before asking for the next). No array per key.
   */
  *keyBlocks(blockKeys = 4096): Generator<Uint8Array> {
    const block = new Uint8Array(16 * blockKeys);
    const view = new DataView(block.buffer);
    let used = 0;
    for (let slot = 0; slot < this.capacity; slot++) {
      if (this.values[slot] === EMPTY) continue;
      const base = slot * 4;
      view.setUint32(used, this.keys[base]);
      view.setUint32(used + 4, this.keys[base + 1]);
      view.setUint32(used + 8, this.keys[base + 2]);
      view.setUint32(used + 12, this.keys[base + 3]);
      used += 16;
      if (used === block.length) {
        yield block;
        used = 0;
      }
    }
    if (used > 0) yield block.subarray(0, used);
  }

  *entries(): Generator<[Uint32Array, number]> {
    for (let slot = 0; slot < this.capacity; slot++) {
      if (this.values[slot] !== EMPTY) yield [this.keys.subarray(slot * 4, slot * 4 + 4), this.values[slot]];
    }
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    const oldCapacity = this.capacity;
    this.capacity *= 2;
    this.keys = new Uint32Array(this.capacity * 4);
    this.values = new Int32Array(this.capacity).fill(EMPTY);
    for (let slot = 0; slot < oldCapacity; slot++) {
      const value = oldValues[slot];
      if (value === EMPTY) continue;
      const base = slot * 4;
      const target = this.slotOf(oldKeys[base], oldKeys[base + 1], oldKeys[base + 2], oldKeys[base + 3]);
      this.keys.set(oldKeys.subarray(base, base + 4), target * 4);
      this.values[target] = value;
    }
  }
}
