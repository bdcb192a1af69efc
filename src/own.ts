/**
 * Objects keyed by what users write: recorded JSON keys, rule names, step kinds. A name
 * such as `__proto__`, `toString` or `constructor` is data like any other there, never
 * Object's own: assignment to `__proto__` sets the prototype, and `counts.toString` is
 * a function before it is ever counted.
 */

/** Sets an own data property, whatever the key. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** Adds `n` to the count of `key` (0 when it has none of its own). */
export function addCount(counts: Record<string, number>, key: string, n = 1): void {
  setOwn(counts, key, (Object.hasOwn(counts, key) ? counts[key] : 0) + n);
}
