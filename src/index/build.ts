/**
 * Builds the record index of a set of trace files: rows made and written to disk where the
 * records are read (worker threads for big trees), listed here in file order for the engine.
 */
import { mkdirSync } from 'node:fs';
import type { Engine } from '../engine/duckdb.js';
import { releaseWorkers, runOverFiles } from '../parallel/run-shares.js';
import type { PriceTable } from '../pricing/table.js';
import type { DamagedLine } from '../record.js';
import type { Discovery } from '../sources/discover.js';
import { IndexParts } from '../engine/index-parts.js';
import type { ProjectionSettings } from '../export/project-share.js';
import type { QualitySettings } from '../pipeline/quality/index.js';
import { formatCount, printable, summaryWidth, wrap } from '../format.js';
import { JOBS } from '../parallel/jobs.js';
import type { ScrubSettings } from '../privacy/scrub.js';

export interface IndexSummary {
  records: number;
  files: number;
  damagedLines: number;
  /** The first damaged lines, for the report. */
  damaged: DamagedLine[];
  bytes: number;
}

const LISTED_DAMAGE = 20;

/**
 * Builds the index; its part files go to `partsDir`, and the engine's `records` is a view over
 * them. The engine may still be loading (or not have started): the rows are read meanwhile.
 */
export async function buildIndex(
  engine: Engine | Promise<Engine>,
  discovery: Discovery,
  prices: PriceTable,
  partsDir: string,
  quiet = false,
  projection: ProjectionSettings | null = null,
  quality: QualitySettings | null = null,
  scrub: ScrubSettings | null = null,
): Promise<IndexSummary> {
  mkdirSync(partsDir, { recursive: true });
  const parts = new IndexParts(partsDir);
  const summary: IndexSummary = { records: 0, files: discovery.files.length, damagedLines: 0, damaged: [], bytes: 0 };
  const shares = runOverFiles(
    JOBS.index,
    discovery,
    (share) => ({ files: discovery.files, share, prices: { data: prices.data, origin: prices.origin }, rowsFile: parts.nextFile(), projection, quality, scrub }),
    (result) => ({ records: result.rows.rows, bytes: result.bytes }),
    { quiet },
  );
  // An engine that cannot load stops the run at the next share, not after the whole tree.
  let engineError: unknown = null;
  Promise.resolve(engine).catch((error: unknown) => {
    engineError = error;
  });
  for await (const share of shares) {
    if (engineError !== null) throw engineError;
    parts.append(share.rows);
    summary.records += share.rows.rows;
    summary.bytes += share.bytes;
    summary.damagedLines += share.damaged.length;
    for (const line of share.damaged) if (summary.damaged.length < LISTED_DAMAGE) summary.damaged.push(line);
  }
  await releaseWorkers();
  await (await engine).attachCsvIndex(parts);
  return summary;
}

/** The damaged lines as `stats` and the other commands word them, on stderr. */
export function reportDamage(summary: IndexSummary): void {
  const width = summaryWidth(process.stderr);
  for (const line of summary.damaged) process.stderr.write(`${wrap(`traces: ${printable(line.file)}:${line.line}: damaged line, not indexed: ${line.reason}`, width)}\n`);
  const more = summary.damagedLines - summary.damaged.length;
  if (more > 0) process.stderr.write(`traces: … ${formatCount(more)} more damaged lines not listed\n`);
}
