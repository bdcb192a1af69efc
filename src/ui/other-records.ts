/**
 * The records of other recorders' files (Ask, klieo, OTLP spans) for the browser. Their files
 * cannot be re-read a record at a time by byte offset as Synalinks lines can (a span is one of
 * many in a line; an Ask or klieo file is one document), so each record is read once, at open,
 * and set aside on disk as the Synalinks-shaped line it rebuilds to (`raw`). The index then
 * reads that spill file as it reads a Synalinks file, and re-reads a record from it by offset:
 * memory holds 4 bytes per record (its place in its own file), not the records, however large
 * the files.
 */
import { closeSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import path from 'node:path';
import { RunTempDir } from '../pipeline/spill.js';
import type { DamagedLine } from '../record.js';
import type { TraceFile } from '../sources/discover.js';
import { readFile } from '../sources/read.js';

/** A file read whole: where its records start among the spilled ones, and its damaged lines. */
export interface OtherFile {
  file: TraceFile;
/** Index of its first record among all spilled records; its last is before the next file's first. */
  firstRecord: number;
  damaged: readonly DamagedLine[];
}

/** Errors of writes to the spill itself, told from those of reading a trace file. */
const spillFailures = new WeakSet<object>();

export class OtherRecords {
  readonly path: string;
  readonly files: OtherFile[] = [];
  /** Programs and the modules under each, as the records name them. */
  readonly names = new Map<string, Set<string>>();
  /** Files that could not be read, each with why. */
  readonly errors: string[] = [];
  /** Records spilled. */
  count = 0;
  /** Bytes of the files read, for the index's progress. */
  bytesRead = 0;
  private readonly dir: RunTempDir;
  private fd: number;
  private written = 0;
  /** Each record's place in its own file (`ref.line`: a line, or an ordinal among the file's records). */
  private places = new Uint32Array(1024);

  private constructor() {
    this.dir = new RunTempDir();
    this.path = path.join(this.dir.path, 'records.jsonl');
    this.fd = openSync(this.path, 'wx+');
  }

  /** Reads `files` whole, one after another, setting their records aside; `onProgress` hears of each batch read. */
  static async read(files: readonly TraceFile[], onProgress?: (bytesRead: number) => void): Promise<OtherRecords> {
    const spill = new OtherRecords();
    try {
      for (const file of files) await spill.readOne(file, onProgress);
    } catch (error) {
      spill.remove();
      throw error;
    }
    return spill;
  }

  private async readOne(file: TraceFile, onProgress?: (bytesRead: number) => void): Promise<void> {
    const firstRecord = this.count;
    const start = this.written;
    const damaged: DamagedLine[] = [];
    // The file's names apart until it is read whole (a file that fails shows none): as many as it has distinct names, not records.
    const names = new Map<string, Set<string>>();
    try {
      for await (const batch of readFile(file)) {
        for (const record of batch.records) {
          this.append(record.raw, record.ref.line);
          addName(names, record.program, record.module);
        }
        damaged.push(...batch.damaged);
        this.bytesRead += batch.bytes ?? 0;
        onProgress?.(this.bytesRead);
      }
    } catch (error) {
      // The spill could not be written (a full TMPDIR): the temporary folder's fault, not the file's; the run stops there.
      if (spillFailures.has(error as object)) throw error;
      // A file that cannot be read whole shows none of its records, as before it was read to disk.
      this.count = firstRecord;
      this.written = start;
      ftruncateSync(this.fd, start);
      this.errors.push(`${file.display}: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    for (const [program, modules] of names) for (const module of modules) addName(this.names, program, module);
    this.files.push({ file, firstRecord, damaged });
  }

  private append(raw: Buffer, place: number): void {
    const line = Buffer.concat([raw, NEWLINE]);
    let done = 0;
    try {
      while (done < line.length) done += writeSync(this.fd, line, done, line.length - done, this.written + done);
    } catch (error) {
      // Named by the spill's path, in the temporary folder, so the one line says so and what to do (TMPDIR).
      if (error !== null && typeof error === 'object') {
        (error as NodeJS.ErrnoException).path ??= this.path;
        spillFailures.add(error);
      }
      throw error;
    }
    this.written += line.length;
    if (this.count === this.places.length) {
      const grown = new Uint32Array(this.places.length * 2);
      grown.set(this.places);
      this.places = grown;
    }
    this.places[this.count++] = place;
  }

  /** The place in its own file of spilled record `k`. */
  placeOf(k: number): number {
    return this.places[k];
  }

  /** The line of spilled record at `offset` (its `length` bytes, without the newline). */
  readAt(offset: number, length: number): Buffer {
    const buffer = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.fd, buffer, done, length - done, offset + done);
      if (n === 0) break;
      done += n;
    }
    return done === length ? buffer : buffer.subarray(0, done);
  }

  remove(): void {
    if (this.fd !== -1) closeSync(this.fd);
    this.fd = -1;
    this.dir.remove();
  }
}

function addName(names: Map<string, Set<string>>, program: string, module: string): void {
  let modules = names.get(program);
  if (modules === undefined) names.set(program, (modules = new Set()));
  modules.add(module);
}

const NEWLINE = Buffer.from('\n');
