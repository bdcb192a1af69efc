/**
 * The index's rows on disk while it is built: one CSV file per share, written by the thread
 * that read the share (IndexRowWriter), listed here in row order. The engine reads them in its
 * own threads (see Engine.attachCsvIndex). Writing them needs no engine, so the engine can
 * load while the first shares are read.
 */
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import type { IndexRowFile } from './index-columns.js';

/** Rows per Parquet row group: large enough for engines to scan well, small enough to read in parallel. */
export const ROW_GROUP_ROWS = 131_072;
/** Rows per part file of a folder index (TRACES_INDEX_PART_ROWS: tests). */
export const PART_ROWS = Number(process.env.TRACES_INDEX_PART_ROWS) > 0 ? Number(process.env.TRACES_INDEX_PART_ROWS) : 4 * ROW_GROUP_ROWS;

/** A part of a folder index: rows [offset, offset + limit) of the rows in `files`, in order. */
export interface IndexPart {
  files: string[];
  offset: number;
  limit: number;
}

export class IndexParts {
  /** Files of the shares with rows, in row order, and how many rows each holds. */
  readonly shares: { file: string; rows: number }[] = [];
  private count = 0;

  constructor(private readonly folder: string) {}

  /** A new file name for the rows of the next share. */
  nextFile(): string {
    return path.join(this.folder, `share-${this.count++}.csv`);
  }

  /** Records a share's rows, in row order. */
  append(rows: IndexRowFile): void {
    if (rows.file !== null) this.shares.push({ file: rows.file, rows: rows.rows });
  }

  /** The files to read, in row order: an index of no rows is one empty file. */
  files(): string[] {
    if (this.shares.length === 0) {
      const empty = path.join(this.folder, 'empty.csv');
      closeSync(openSync(empty, 'wx'));
      this.shares.push({ file: empty, rows: 0 });
    }
    return this.shares.map((s) => s.file);
  }

  /** The parts of a folder index, PART_ROWS rows each (the last fewer), each read from the share files that hold its rows. */
  parts(): IndexPart[] {
    const files = this.files();
    const total = this.shares.reduce((n, s) => n + s.rows, 0);
    const parts: IndexPart[] = [];
    let first = 0;
    let firstRow = 0;
    for (let start = 0; start < total || parts.length === 0; start += PART_ROWS) {
      while (first < this.shares.length - 1 && firstRow + this.shares[first].rows <= start) firstRow += this.shares[first++].rows;
      let last = first;
      let lastEnd = firstRow + this.shares[first].rows;
      while (last < this.shares.length - 1 && lastEnd < start + PART_ROWS) lastEnd += this.shares[++last].rows;
      parts.push({ files: files.slice(first, last + 1), offset: start - firstRow, limit: Math.min(PART_ROWS, total - start) });
    }
    return parts;
  }
}
