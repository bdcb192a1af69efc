/** Totals over a set of records, mergeable so per-file or per-worker tallies combine. */
import type { Status, TraceRecord, Usage } from '../record.js';
import type { PriceTable } from '../pricing/table.js';
import { bucketOf, QuantileSketch } from './quantiles.js';
import { isoTime } from '../time.js';

export interface TokenTotals {
  prompt: number;
  completion: number;
  reasoning: number;
  cached: number;
  total: number;
}

/** What a tally needs of a record, read once per record rather than once per group. */
export interface RecordFacts {
  status: Status;
  timestamp: number | null;
  duration: number | null;
  /** The quantile bucket of an ok record's positive duration (else null), for every tally it counts in. */
  durationBucket: number | null;
  usage: Usage | null;
  cost: number | null;
  /** USD from the price table when the record reports no cost; null when unpriced (or reported). */
  estimatedCost: number | null;
}

export function factsOf(record: TraceRecord, prices: PriceTable | null = null): RecordFacts {
  const cost = record.cost;
  const usage = record.usage;
  const duration = record.duration;
  return {
    status: record.status,
    timestamp: record.timestamp,
    duration,
    durationBucket: record.status === 'ok' && duration !== null && duration > 0 && duration < Infinity ? bucketOf(duration) : null,
    usage,
    cost,
    estimatedCost: cost === null && usage !== null && prices !== null && record.status === 'ok' ? prices.costOf(record).usd : null,
  };
}

export class Tally {
  records = 0;
  ok = 0;
  exception = 0;
  no_output = 0;
  /** Ok records whose dedupe key was seen before. */
  duplicates = 0;
  tokens: TokenTotals = { prompt: 0, completion: 0, reasoning: 0, cached: 0, total: 0 };
  /** Ok records without recorded usage: their tokens are unknown, not zero. */
  okWithoutUsage = 0;
  /** Reported cost only: estimates are kept apart. */
  costUsd = 0;
  okWithoutCost = 0;
  /** Ok records without reported cost, priced from the price table. */
  estimatedCostUsd = 0;
  okWithEstimatedCost = 0;
  /** Ok records without reported cost that no price (or no usage) could estimate: unknown, not zero. */
  okUnpriced = 0;
  durations = new QuantileSketch();
  firstTimestamp: number | null = null;
  lastTimestamp: number | null = null;

  /** Counts a record; its being a duplicate is booked apart (`duplicates`), once dedupe's winner is known. */
  add(facts: RecordFacts): void {
    const { status, timestamp, duration, durationBucket, usage, cost, estimatedCost } = facts;
    this.records++;
    this[status]++;
    if (timestamp !== null) {
      if (this.firstTimestamp === null || timestamp < this.firstTimestamp) this.firstTimestamp = timestamp;
      if (this.lastTimestamp === null || timestamp > this.lastTimestamp) this.lastTimestamp = timestamp;
    }
    if (status !== 'ok') return;
    if (duration !== null) this.durations.add(duration, durationBucket ?? undefined);
    if (usage === null) this.okWithoutUsage++;
    else {
      this.tokens.prompt += usage.prompt_tokens ?? 0;
      this.tokens.completion += usage.completion_tokens ?? 0;
      this.tokens.reasoning += usage.reasoning_tokens ?? 0;
      this.tokens.cached += usage.cached_tokens ?? 0;
      this.tokens.total += usage.total_tokens ?? 0;
    }
    if (cost !== null) this.costUsd += cost;
    else {
      this.okWithoutCost++;
      if (estimatedCost === null) this.okUnpriced++;
      else {
        this.estimatedCostUsd += estimatedCost;
        this.okWithEstimatedCost++;
      }
    }
  }

  merge(other: Tally): void {
    this.records += other.records;
    this.ok += other.ok;
    this.exception += other.exception;
    this.no_output += other.no_output;
    this.duplicates += other.duplicates;
    for (const key of Object.keys(this.tokens) as (keyof TokenTotals)[]) this.tokens[key] += other.tokens[key];
    this.okWithoutUsage += other.okWithoutUsage;
    this.costUsd += other.costUsd;
    this.okWithoutCost += other.okWithoutCost;
    this.estimatedCostUsd += other.estimatedCostUsd ?? 0;
    this.okWithEstimatedCost += other.okWithEstimatedCost ?? 0;
    this.okUnpriced += other.okUnpriced ?? 0;
    this.durations.merge(other.durations);
    if (other.firstTimestamp !== null && (this.firstTimestamp === null || other.firstTimestamp < this.firstTimestamp)) {
      this.firstTimestamp = other.firstTimestamp;
    }
    if (other.lastTimestamp !== null && (this.lastTimestamp === null || other.lastTimestamp > this.lastTimestamp)) {
      this.lastTimestamp = other.lastTimestamp;
    }
  }

  /** Plain data for another thread; `fromSnapshot` rebuilds the tally. */
  snapshot(): TallySnapshot {
    return { ...this, tokens: { ...this.tokens }, durations: this.durations.toJSON() };
  }

  static fromSnapshot(data: TallySnapshot): Tally {
    const tally = new Tally();
    Object.assign(tally, data, { tokens: { ...data.tokens }, durations: QuantileSketch.fromJSON(data.durations) });
    return tally;
  }

  toJSON(): Record<string, unknown> {
    return {
      records: this.records,
      ok: this.ok,
      exception: this.exception,
      no_output: this.no_output,
      duplicates: this.duplicates,
      tokens: { ...this.tokens, ok_records_without_usage: this.okWithoutUsage },
      cost_usd: roundUsd(this.costUsd),
      ok_records_without_cost: this.okWithoutCost,
      estimated_cost_usd: roundUsd(this.estimatedCostUsd),
      ok_records_with_estimated_cost: this.okWithEstimatedCost,
      ok_records_unpriced: this.okUnpriced,
      duration_s: {
        p50: this.durations.quantile(0.5),
        p95: this.durations.quantile(0.95),
        max: this.durations.count > 0 ? this.durations.max : null,
      },
      first_timestamp: isoTime(this.firstTimestamp),
      last_timestamp: isoTime(this.lastTimestamp),
    };
  }
}

export type TallySnapshot = Omit<{ [K in keyof Tally as Tally[K] extends Function ? never : K]: Tally[K] }, 'durations'> & {
  durations: ReturnType<QuantileSketch['toJSON']>;
};

export function roundUsd(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

