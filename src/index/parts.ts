/**
 * The index's rows on disk while it is built: CSV part files of at most PART_ROWS rows, in
 * row order, which the engine reads in its own threads (see Engine.attachCsvIndex). Writing
 * them needs no engine, so the engine can load while the first shares are read.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { IndexBatch } from './columns.js';

/** Rows per Parquet row group: large enough for engines to scan well, small enough to read in parallel. */
export const ROW_GROUP_ROWS = 131_072;
/** Rows per part, and so per part file of a folder index (TRACES_INDEX_PART_ROWS: tests). */
const PART_ROWS = Number(process.env.TRACES_INDEX_PART_ROWS) > 0 ? Number(process.env.TRACES_INDEX_PART_ROWS) : 4 * ROW_GROUP_ROWS;

export class IndexParts {
  /** Part files written so far, in row order. */
  readonly files: string[] = [];
  private fd = -1;
  private rowsInPart = 0;

  constructor(private readonly folder: string) {
    this.startPart();
  }

  private startPart(): void {
    const file = path.join(this.folder, `part-${this.files.length}.csv`);
    this.fd = openSync(file, 'wx');
    this.files.push(file);
    this.rowsInPart = 0;
  }

  /** Appends a share's rows, in order, starting a new part every PART_ROWS rows. */
  append(batch: IndexBatch): void {
    let row = 0;
    let start = 0;
    while (row < batch.rows) {
      if (this.rowsInPart >= PART_ROWS) {
        closeSync(this.fd);
        this.startPart();
      }
      const last = Math.min(batch.rows, row + PART_ROWS - this.rowsInPart) - 1;
      const end = batch.rowEnds[last];
      while (start < end) start += writeSync(this.fd, batch.csv, start, end - start);
      this.rowsInPart += last + 1 - row;
      row = last + 1;
    }
  }

  /** Closes the last part (an index of no rows is one empty part). */
  close(): void {
    if (this.fd !== -1) closeSync(this.fd);
    this.fd = -1;
  }
}
