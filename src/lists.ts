/** Growing lists without copying them: results can hold hundreds of thousands of entries. */

/** Appends `value` to the list under `key`, starting the list when there is none. */
export function addToList<K, V>(lists: Map<K, V[]>, key: K, value: V): void {
  const list = lists.get(key);
  if (list === undefined) lists.set(key, [value]);
  else list.push(value);
}

/** `target.push(...items)` without passing every item as an argument (which overflows the stack past ~100,000). */
export function appendAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

/** Per kind, how many items came and the first few of them: a report counts every kind and shows a few of each. */
export class FirstsByKind<T> {
  readonly counts = new Map<string, number>();
  readonly firsts = new Map<string, T[]>();

  constructor(private readonly kept: number) {}

  add(kind: string, item: T): void {
    const count = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, count);
    if (count <= this.kept) addToList(this.firsts, kind, item);
  }
}
