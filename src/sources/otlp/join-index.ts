/**
 * Records of the input set that hold a span's content, by the ids of the span they belong to
 * (join-kinds.ts): OTLP log records (`ExportLogsServiceRequest` lines, `resourceLogs`) by the
 * span they were written in, since the GenAI instrumentations that write the messages as log
 * events (`gen_ai.system.message` … `gen_ai.choice`) export them apart from the spans, often to
 * another file; Mastra's step and tool spans by their trace (extractors/mastra.ts). A line of
 * them may sit in another file or work share than the span, so before a span file is read, the
 * lines of the input set's files of that kind are indexed once per process: for each
 * (trace id, span id), where its lines are (file, byte offset, length); a span's records are
 * read back from those lines when the span is read.
 *
 * Memory stays flat: the index holds 40 bytes per (span, log line), built in sorted chunks of
 * CHUNK_ENTRIES; one chunk stays in memory, more are spilled to temporary files and searched
 * there (a binary search of each chunk per span), and the parsed log lines last read are kept
 * in a small cache (the records of one export batch belong to neighbouring spans).
 * Lines that hold no marker of the kind are passed over on a byte search, unparsed;
 * a line a strict parser refuses is left here and reported where the file is read as itself.
 */
import { mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseJsonText } from '../../canonical/json-value.js';
import { JsonSyntaxError } from '../../canonical/scan.js';
import { isObject, type Json } from '../json-values.js';
import { readLineBatches } from '../lines.js';
import { holdsKind, JOIN_KINDS, type JoinKind } from './join-kinds.js';
import { hexId } from './values.js';

/** A trace id (16 bytes) and span id (8 bytes), then the file's index (u32), the line's offset (f64) and length (u32). */
const KEY = 24;
const ENTRY = KEY + 4 + 8 + 4;
/** Entries per sorted chunk: 8 MB of index at most in memory, whatever the number of log records. */
export const CHUNK_ENTRIES = Number(process.env.TRACES_LOG_INDEX_CHUNK ?? 200_000);
/** Parsed log lines kept for the spans that follow (one export batch serves a few neighbouring spans). */
const LINE_CACHE = 8;

/** A record of a line, under the ids of the span it belongs to (hex). */
export interface Joined {
  traceId: string;
  spanId: string;
  record: Json;
}

/** What is indexed of one kind: its markers, and the records of one parsed line under their span's ids. */
export interface JoinReader extends JoinKind {
  recordsOf(doc: unknown): Iterable<Joined>;
}

/** The log records of one ExportLogsServiceRequest, each with the ids it names (hex), in order. */
export function* logRecordsOf(doc: unknown): Generator<Joined> {
  if (!isObject(doc)) return;
  const list = doc.resourceLogs ?? doc.resource_logs;
  if (!Array.isArray(list)) return;
  for (const rl of list) {
    if (!isObject(rl)) continue;
    const scopes = rl.scopeLogs ?? rl.scope_logs ?? rl.instrumentationLibraryLogs;
    if (!Array.isArray(scopes)) continue;
    for (const sl of scopes) {
      if (!isObject(sl)) continue;
      const records = sl.logRecords ?? sl.log_records;
      if (!Array.isArray(records)) continue;
      for (const record of records) {
        if (!isObject(record)) continue;
        const traceId = hexId(record.traceId ?? record.trace_id);
        const spanId = hexId(record.spanId ?? record.span_id);
        if (traceId !== null && spanId !== null) yield { traceId, spanId, record };
      }
    }
  }
}

function keyOf(traceId: string, spanId: string): Buffer | null {
  if (traceId.length !== 32 || spanId.length !== 16) return null;
  return Buffer.from(traceId + spanId, 'hex');
}

/** One sorted run of entries: in memory, or spilled to a file read with positioned reads. */
interface Chunk {
  count: number;
  bytes: Buffer | null;
  fd: number | null;
}

export class JoinIndex {
  private readonly chunks: Chunk[] = [];
  private readonly fds = new Map<number, number>();
  private readonly lines = new Map<string, Joined[]>();

  private constructor(
    private readonly kind: JoinReader,
    private readonly files: readonly string[],
  ) {}

  /** The index of these files' records of this kind, built once per process, kind and list of files. */
  static async of(kind: JoinReader, files: readonly string[]): Promise<JoinIndex> {
    const key = `${kind.name}\0${files.join('\0')}`;
    let index = BUILT.get(key);
    if (index === undefined) {
      index = JoinIndex.build(kind, files);
      BUILT.set(key, index);
    }
    return index;
  }

  private static async build(kind: JoinReader, files: readonly string[]): Promise<JoinIndex> {
    const index = new JoinIndex(kind, files);
    let pending: { key: Buffer; file: number; offset: number; length: number }[] = [];
    for (let file = 0; file < files.length; file++) {
      for await (const lines of readLineBatches(files[file])) {
        for (const line of lines) {
          if (line.tooLong || !holdsKind(kind, line.bytes)) continue;
          let doc: unknown;
          try {
            doc = parseJsonText(line.bytes);
          } catch (error) {
            if (!(error instanceof JsonSyntaxError)) throw error;
            continue;
          }
          const seen = new Set<string>();
          for (const { traceId, spanId } of kind.recordsOf(doc)) {
            const id = traceId + spanId;
            if (seen.has(id)) continue;
            seen.add(id);
            const key = keyOf(traceId, spanId);
            if (key !== null) pending.push({ key, file, offset: line.offset, length: line.length });
          }
          if (pending.length >= CHUNK_ENTRIES) {
            index.addChunk(pending, true);
            pending = [];
          }
        }
      }
    }
    if (pending.length > 0) index.addChunk(pending, index.chunks.length > 0);
    return index;
  }

  get empty(): boolean {
    return this.chunks.length === 0;
  }

  private addChunk(entries: { key: Buffer; file: number; offset: number; length: number }[], toDisk: boolean): void {
    entries.sort((a, b) => Buffer.compare(a.key, b.key));
    const bytes = Buffer.alloc(entries.length * ENTRY);
    entries.forEach((e, i) => {
      const at = i * ENTRY;
      e.key.copy(bytes, at);
      bytes.writeUInt32BE(e.file, at + KEY);
      bytes.writeDoubleBE(e.offset, at + KEY + 4);
      bytes.writeUInt32BE(e.length, at + KEY + 12);
    });
    if (!toDisk) {
      this.chunks.push({ count: entries.length, bytes, fd: null });
      return;
    }
    // The file is removed as soon as it is open: nothing is left behind however the process ends
    // (a worker thread is terminated, not exited), and the open descriptor still reads it.
    const folder = mkdtempSync(path.join(tmpdir(), `traces-logs-${process.pid}-`));
    const fd = openSync(path.join(folder, 'chunk'), 'w+');
    rmSync(folder, { recursive: true, force: true });
    writeSync(fd, bytes);
    this.chunks.push({ count: entries.length, bytes: null, fd });
  }

  /** The records under this span's ids, in the order of their lines and of each line. */
  recordsOf(traceId: string, spanId: string): Json[] {
    const key = keyOf(traceId, spanId);
    if (key === null || this.chunks.length === 0) return [];
    const places: { file: number; offset: number; length: number }[] = [];
    for (const chunk of this.chunks) this.find(chunk, key, places);
    if (places.length === 0) return [];
    places.sort((a, b) => a.file - b.file || a.offset - b.offset);
    const out: Json[] = [];
    for (const place of places) for (const r of this.line(place)) if (r.traceId === traceId && r.spanId === spanId) out.push(r.record);
    return out;
  }

  private entryAt(chunk: Chunk, i: number, into: Buffer): Buffer {
    if (chunk.bytes !== null) return chunk.bytes.subarray(i * ENTRY, (i + 1) * ENTRY);
    readSync(chunk.fd!, into, 0, ENTRY, i * ENTRY);
    return into;
  }

  private find(chunk: Chunk, key: Buffer, into: { file: number; offset: number; length: number }[]): void {
    const scratch = Buffer.alloc(ENTRY);
    let lo = 0;
    let hi = chunk.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(this.entryAt(chunk, mid, scratch).subarray(0, KEY), key) < 0) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < chunk.count; i++) {
      const entry = this.entryAt(chunk, i, scratch);
      if (Buffer.compare(entry.subarray(0, KEY), key) !== 0) break;
      into.push({ file: entry.readUInt32BE(KEY), offset: entry.readDoubleBE(KEY + 4), length: entry.readUInt32BE(KEY + 12) });
    }
  }

  private line(place: { file: number; offset: number; length: number }): Joined[] {
    const id = `${place.file}:${place.offset}`;
    const cached = this.lines.get(id);
    if (cached !== undefined) return cached;
    let fd = this.fds.get(place.file);
    if (fd === undefined) this.fds.set(place.file, (fd = openSync(this.files[place.file], 'r')));
    const bytes = Buffer.alloc(place.length);
    readSync(fd, bytes, 0, place.length, place.offset);
    let records: Joined[] = [];
    try {
      records = [...this.kind.recordsOf(parseJsonText(bytes))];
    } catch (error) {
      // The file changed since it was indexed: its records are no longer where the index says.
      if (!(error instanceof JsonSyntaxError)) throw error;
    }
    this.lines.set(id, records);
    if (this.lines.size > LINE_CACHE) this.lines.delete(this.lines.keys().next().value!);
    return records;
  }
}

const BUILT = new Map<string, Promise<JoinIndex>>();

/** Log records under the span they were written in. */
export const LOG_RECORDS: JoinReader = { ...JOIN_KINDS.find((k) => k.name === 'logs')!, recordsOf: logRecordsOf };
