/**
 * Cost estimates from a price table, for records whose recorder reported no cost.
 *
 * A table prices tokens in USD per million, per provider and model: input, output, and
 * optionally cached input (default: input) and reasoning (default: output). A model is
 * looked up by these rules, first hit wins:
 *
 *   1. exact model name;
 *   2. the model with its date suffix removed (`-2024-08-06`, `-20241022`, `@20241022`);
 *   3. a family alias: the table's `aliases` map, else the last version number made `x`
 *      (`claude-sonnet-4-6` → `claude-sonnet-4-x`, `gpt-4.1` → `gpt-4.x`);
 *   4. the provider's wildcard `*`.
 *
 * A miss is unpriced: the cost stays unknown, never zero. When a record names no
 * provider, a `provider/model` name gives it; otherwise rules 1–3 search every provider
 * and rule 4 cannot apply.
 */
import { readFileSync } from 'node:fs';
import { UserError } from '../errors.js';
import type { TraceRecord, Usage } from '../record.js';
import DEFAULT_TABLE from './default-prices.json' with { type: 'json' };

export interface Price {
  input: number;
  output: number;
  cached_input?: number;
  reasoning?: number;
}

export interface PriceTableData {
  written?: string;
  unit?: string;
  note?: string;
  aliases?: Record<string, string>;
  prices: Record<string, Record<string, Price>>;
}

export type PriceRule = 'exact' | 'date_suffix' | 'family' | 'provider_wildcard';

export interface PriceMatch {
  provider: string;
  /** The table entry that priced the model. */
  entry: string;
  rule: PriceRule;
  price: Price;
}

export type CostKind = 'reported' | 'estimated' | 'unpriced';

export interface RecordCost {
  kind: CostKind;
  /** USD; null when unpriced. */
  usd: number | null;
  match: PriceMatch | null;
}

const DATE_SUFFIX = /[-@](\d{4}-\d{2}-\d{2}|\d{8})$/;
const LAST_VERSION = /^(.*[^-.])([-.])\d+$/;

export function withoutDateSuffix(model: string): string | null {
  const stripped = model.replace(DATE_SUFFIX, '');
  return stripped !== model && stripped !== '' ? stripped : null;
}

/** `claude-sonnet-4-6` → `claude-sonnet-4-x`; null when the name ends in no version number. */
export function familyOf(model: string): string | null {
  const match = LAST_VERSION.exec(model);
  return match === null ? null : `${match[1]}${match[2]}x`;
}

function isPrice(value: unknown): value is Price {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const ok = (x: unknown, optional: boolean) => (optional && x === undefined) || (typeof x === 'number' && Number.isFinite(x) && x >= 0);
  return ok(v.input, false) && ok(v.output, false) && ok(v.cached_input, true) && ok(v.reasoning, true);
}

/** Checks a parsed table; returns what is wrong with it, or null. */
export function tableProblem(data: unknown): string | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'expected a JSON object';
  const d = data as Record<string, unknown>;
  if (typeof d.prices !== 'object' || d.prices === null || Array.isArray(d.prices)) {
    return 'expected "prices": {provider: {model: {input, output, cached_input?, reasoning?}}} (USD per million tokens)';
  }
  for (const [provider, models] of Object.entries(d.prices as Record<string, unknown>)) {
    if (typeof models !== 'object' || models === null || Array.isArray(models)) return `prices.${provider}: expected an object of models`;
    for (const [model, price] of Object.entries(models as Record<string, unknown>)) {
      if (!isPrice(price)) return `prices.${provider}.${model}: expected {input, output, cached_input?, reasoning?} as numbers >= 0`;
    }
  }
  if (d.aliases !== undefined) {
    if (typeof d.aliases !== 'object' || d.aliases === null || Array.isArray(d.aliases)) return 'aliases: expected an object of model → table entry';
    for (const [from, to] of Object.entries(d.aliases as Record<string, unknown>)) {
      if (typeof to !== 'string') return `aliases.${from}: expected a string`;
    }
  }
  return null;
}

/** Dollars for the tokens of `usage` at `price`. */
export function estimateUsd(usage: Usage, price: Price): number {
  const prompt = Math.max(0, usage.prompt_tokens ?? 0);
  const completion = Math.max(0, usage.completion_tokens ?? 0);
  const cached = Math.min(prompt, Math.max(0, usage.cached_tokens ?? 0));
  const reasoning = Math.min(completion, Math.max(0, usage.reasoning_tokens ?? 0));
  const micro =
    (prompt - cached) * price.input +
    cached * (price.cached_input ?? price.input) +
    (completion - reasoning) * price.output +
    reasoning * (price.reasoning ?? price.output);
  return micro / 1e6;
}

export class PriceTable {
  private readonly cache = new Map<string, PriceMatch | null>();

  constructor(
    readonly data: PriceTableData,
    /** Where the table came from: a file path, or `default`. */
    readonly origin: string,
  ) {}

  get written(): string | null {
    return typeof this.data.written === 'string' ? this.data.written : null;
  }

  private entry(provider: string, name: string): Price | null {
    // Own keys only: a recorded provider `constructor` or model `name` is no price.
    const models = Object.hasOwn(this.data.prices, provider) ? this.data.prices[provider] : undefined;
    return models !== undefined && Object.hasOwn(models, name) ? models[name] : null;
  }

  /** The candidate names for rules 1–3, in order. */
  private candidates(model: string): { name: string; rule: PriceRule }[] {
    const out: { name: string; rule: PriceRule }[] = [{ name: model, rule: 'exact' }];
    const dateless = withoutDateSuffix(model);
    if (dateless !== null) out.push({ name: dateless, rule: 'date_suffix' });
    const base = dateless ?? model;
    const aliases = this.data.aliases ?? {};
    const alias = Object.hasOwn(aliases, model) ? aliases[model] : Object.hasOwn(aliases, base) ? aliases[base] : null;
    if (alias !== null) out.push({ name: alias, rule: 'family' });
    const family = familyOf(base);
    if (family !== null) out.push({ name: family, rule: 'family' });
    return out;
  }

  /** The price of `model` from `provider` (null: unknown provider), or null when unpriced. */
  lookup(provider: string | null, model: string | null): PriceMatch | null {
    if (model === null || model === '') return null;
    const cacheKey = `${provider ?? ''}\0${model}`;
    const cached = this.cache.get(cacheKey);
    if (cached !== undefined) return cached;
    let name = model;
    let who = provider;
    const slash = model.indexOf('/');
    if (slash > 0 && (who === null || who === model.slice(0, slash))) {
      who = model.slice(0, slash);
      name = model.slice(slash + 1);
    }
    let match: PriceMatch | null = null;
    const providers = who !== null ? [who] : Object.keys(this.data.prices);
    search: for (const { name: candidate, rule } of this.candidates(name)) {
      for (const p of providers) {
        const price = this.entry(p, candidate);
        if (price !== null) {
          match = { provider: p, entry: candidate, rule, price };
          break search;
        }
      }
    }
    if (match === null && who !== null) {
      const price = this.entry(who, '*');
      if (price !== null) match = { provider: who, entry: '*', rule: 'provider_wildcard', price };
    }
    this.cache.set(cacheKey, match);
    return match;
  }

  /** Reported when the record has a cost; else estimated from its usage; else unpriced. */
  costOf(record: Pick<TraceRecord, 'cost' | 'usage' | 'model' | 'provider'>): RecordCost {
    if (record.cost !== null) return { kind: 'reported', usd: record.cost, match: null };
    if (record.usage === null) return { kind: 'unpriced', usd: null, match: null };
    const match = this.lookup(record.provider, record.model);
    if (match === null) return { kind: 'unpriced', usd: null, match: null };
    return { kind: 'estimated', usd: estimateUsd(record.usage, match.price), match };
  }

  describe(): string {
    return this.origin === 'default' ? `default table (written ${this.written ?? 'unknown'})` : `${this.origin}${this.written !== null ? ` (written ${this.written})` : ''}`;
  }
}

export function defaultPriceTable(): PriceTable {
  return new PriceTable(DEFAULT_TABLE as PriceTableData, 'default');
}

/** The table of `--prices FILE`, or the default one. */
export function loadPriceTable(file?: string): PriceTable {
  if (file === undefined) return defaultPriceTable();
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new UserError(`--prices ${file}: ${e.code === 'ENOENT' ? 'no such file' : `not valid JSON (${e.message})`}`);
  }
  const problem = tableProblem(data);
  if (problem !== null) throw new UserError(`--prices ${file}: ${problem}`);
  return new PriceTable(data as PriceTableData, file);
}
