/**
 * gpt-tokenizer's rank tables (the vocabulary of each encoding, 200,000 strings for o200k).
 *
 * Its modules hold them as JavaScript array literals: V8 takes about 330 ms per thread to parse
 * and run o200k's, on every export, validate and browse. The build (`tools/token-ranks.mjs`)
 * also writes each table with `v8.serialize`, which reads back in about 30 ms. A prebuilt table
 * is used only when it was made from the module installed now (the sha256 of the module's
 * source is in it); anything else falls back to the module, so a stale, partial or damaged
 * file costs time, never a wrong count.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deserialize } from 'node:v8';
import { sha256Hex } from '../canonical/canonical.js';

/** A rank table as gpt-tokenizer takes it: each token's text, or its bytes when they are not UTF-8. */
export type RankTable = (string | number[])[];

/** What a prebuilt table file holds (written by tools/token-ranks.mjs). */
interface PrebuiltTable {
  /** sha256 (hex) of the gpt-tokenizer module the table was read from. */
  source: string;
  ranks: RankTable;
}

export function rankModule(encoding: string): string {
  return `gpt-tokenizer/bpeRanks/${encoding}`;
}

export function prebuiltTablePath(encoding: string): string {
  return fileURLToPath(new URL(`./token-ranks/${encoding}.v8`, import.meta.url));
}

/** The prebuilt table of an encoding, or null when there is none made from the installed module. */
export function readPrebuiltRanks(encoding: string, tablePath = prebuiltTablePath(encoding)): RankTable | null {
  try {
    const table = deserialize(readFileSync(tablePath)) as Partial<PrebuiltTable> | null;
    if (table === null || typeof table !== 'object' || !Array.isArray(table.ranks) || typeof table.source !== 'string') return null;
    const source = readFileSync(fileURLToPath(import.meta.resolve(rankModule(encoding))));
    return sha256Hex(source) === table.source ? table.ranks : null;
  } catch {
    return null;
  }
}

export async function loadRanks(encoding: string): Promise<RankTable> {
  return readPrebuiltRanks(encoding) ?? ((await import(rankModule(encoding))) as { default: RankTable }).default;
}
