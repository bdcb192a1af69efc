/**
 * One span's attributes and events as the extractors (extractors/*.ts) see them: an extractor
 * *takes* what it reads, and what one took is gone for the extractors after it, so no value is
 * read twice (modelled on LangWatch's span data bag). The markers that say which dialect a span
 * speaks are looked at without taking them (`peek`).
 *
 * What a related record holds (a parent step span's input, a tool span's result, the log
 * records of the call) joins the bag before the chain runs: `seed` adds attributes the span
 * lacks and `seedEvents` adds events, read by the extractors as if the span held them.
 */
import { isObject, type Json } from '../json-values.js';
import { structured, type Attributes } from './values.js';

/** A taken attribute's value in the map: overwriting in place costs less than deleting. */
const TAKEN: unique symbol = Symbol('taken');

export class SpanBag {
  /** What the span's text values said about being cut: the first attribute whose JSON ends early. */
  cutAt: string | null = null;
  private readonly attributes: Map<string, unknown>;
  /** The span's events and any seeded, a taken one null. */
  private readonly eventList: (Json | null)[];

  constructor(
    readonly span: Json,
    attrs: Attributes,
  ) {
    this.attributes = attrs.map;
    this.eventList = Array.isArray(span.events) ? span.events.filter(isObject) : [];
  }

  /** The span's name, as recorded (`''` when none). */
  get name(): string {
    return typeof this.span.name === 'string' ? this.span.name : '';
  }

  /** A value no extractor took yet, left in the bag: for markers. */
  peek(key: string): unknown {
    const v = this.attributes.get(key);
    return v === TAKEN ? undefined : v;
  }

  peekStr(key: string): string | null {
    const v = this.attributes.get(key);
    return typeof v === 'string' ? v : null;
  }

  has(key: string): boolean {
    const v = this.attributes.get(key);
    return v !== undefined && v !== TAKEN;
  }

  /** A value, taken out of the bag. */
  take(key: string): unknown {
    const v = this.attributes.get(key);
    if (v === undefined || v === TAKEN) return undefined;
    this.attributes.set(key, TAKEN);
    return v;
  }

  takeStr(key: string): string | null {
    const v = this.take(key);
    return typeof v === 'string' ? v : null;
  }

  /** A value taken and parsed when it is a JSON text; undefined when it is one cut at a length limit (noted in `cutAt`) or broken. */
  takeParsed(key: string): unknown {
    const note = { value: false };
    const value = structured(this.take(key), note);
    if (note.value && this.cutAt === null) this.cutAt = `${key} ends early (cut at a length limit)`;
    return value;
  }

  /** The keys still in the bag that start with `prefix`, in the order written; none taken. */
  keysWith(prefix: string): string[] {
    const keys: string[] = [];
    for (const [key, value] of this.attributes) if (value !== TAKEN && key.startsWith(prefix)) keys.push(key);
    return keys;
  }

  /** Every key still in the bag with `prefix`, taken: [key without the prefix, value] in the order written. */
  takeWith(prefix: string): [string, unknown][] {
    const out: [string, unknown][] = [];
    for (const [key, value] of this.attributes) {
      if (value === TAKEN || !key.startsWith(prefix)) continue;
      out.push([key.slice(prefix.length), value]);
      this.attributes.set(key, TAKEN);
    }
    return out;
  }

  /** The attributes still in the bag. */
  *entries(): Generator<[string, unknown]> {
    for (const entry of this.attributes) if (entry[1] !== TAKEN) yield entry;
  }

  /** The events, a taken one null (the index is what `takeEvent` takes). */
  events(): readonly (Json | null)[] {
    return this.eventList;
  }

  takeEvent(index: number): void {
    this.eventList[index] = null;
  }

  /** Attributes a related record holds (a parent step span's, a log record's) that the span lacks; the span's own win. */
  seed(attributes: Iterable<[string, unknown]>): void {
    for (const [key, value] of attributes) if (!this.attributes.has(key)) this.attributes.set(key, value);
  }

  /** Events a related record holds (the call's log records, as events of the same name), after the span's own. */
  seedEvents(events: Iterable<Json>): void {
    for (const e of events) this.eventList.push(e);
  }
}
