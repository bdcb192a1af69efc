/**
 * The browser's data layer: an index of every line of a trace tree, built in the background,
 * one compact entry per record in typed arrays (file, byte offset, length, status, time,
 * model, tokens, cost, duration, duplicate group). Records themselves are never kept: the
 * UI re-reads the few it shows from disk by offset and parses them then (those of other
 * recorders' files from the spill file other-records.ts sets them aside in).
 */
import { EventEmitter } from 'node:events';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { JsonSyntaxError } from '../canonical/scan.js';
import { KeyIndex } from '../pipeline/key-index.js';
import { DEFAULT_KEY, keyOf } from '../pipeline/keys.js';
import type { SourceKind } from '../record.js';
import type { Run } from '../runs/runs.js';
import { discover, peekNames, type Discovery, type TraceFile } from '../sources/discover.js';
import { lineTooLongReason, MAX_LINE_BYTES, readLineBatches, type Line } from '../sources/lines.js';

/** What the browser reads of a line too long to be a record (see MAX_LINE_BYTES). */
const TOO_LONG_PREVIEW = 64 << 10;
import { damageReason } from '../sources/damage.js';
import { DamagedRecordError, SynalinksRecord } from '../sources/synalinks-record.js';
import { defaultPriceTable } from '../pricing/table.js';
import { OtherRecords } from './other-records.js';
import { previewOf } from './record-text.js';

export const OK = 0;
export const EXCEPTION = 1;
export const NO_OUTPUT = 2;
export const DAMAGED = 3;
export const STATUS_NAMES = ['ok', 'exception', 'no_output', 'damaged'] as const;
export type StatusName = (typeof STATUS_NAMES)[number];

export const STATUS_FILTERS = ['all', 'ok', 'exception', 'no_output'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

export interface ModuleInfo {
  id: number;
  program: string;
  module: string;
  programId: number;
}

export interface TreeNode {
  /** Stable identity: `*`, `p:<program>` or `m:<program>/<module>`. */
  key: string;
  kind: 'all' | 'program' | 'module';
  label: string;
  depth: number;
  /** Program id for program nodes, module id for module nodes, -1 for the root. */
  id: number;
}

export interface Counts {
  /** Parsed records (damaged lines not included). */
  records: number;
  ok: number;
  exception: number;
  no_output: number;
  damaged: number;
  /** ok records a dedupe would drop (another ok record has the same keys and comes first). */
  duplicates: number;
}

/** Everything the list and the metadata show about one entry, without reading the record. */
export interface EntryInfo {
  index: number;
  file: TraceFile;
  line: number;
  offset: number;
  length: number;
  status: StatusName;
  timestamp: number;
  tokens: number;
  cost: number;
  /** `cost` is estimated from the price table: the recorder reported none. */
  costEstimated: boolean;
  duration: number;
  model: string;
  module: ModuleInfo;
  group: number;
  /** True when a dedupe would drop this record. */
  duplicate: boolean;
  damagedReason: string | null;
  /** A record of another recorder's file (read whole at open): `line` is its place there, as its source numbers records. */
  otherRecorder: boolean;
}

export interface GroupMember {
  entry: number;
  role: 'kept' | 'duplicate' | 'not ok';
}

export interface NodeStats extends Counts {
  totalTokens: number;
  /** Reported by the recorders. */
  cost: number;
  /** Estimated from the price table for ok records whose recorder reported none. */
  estimatedCost: number;
  durationSum: number;
  durationMax: number;
  firstTimestamp: number;
  lastTimestamp: number;
  files: number;
  models: { model: string; records: number }[];
}

export interface Progress {
  bytesDone: number;
  bytesTotal: number;
  filesDone: number;
  filesTotal: number;
  done: boolean;
}

export interface StoreOptions {
  /** Bytes read per step; smaller steps show the first screen sooner. */
  chunkSize?: number;
  /** Call ids to look out for while indexing (a previous exclusion file): reported with `found`. */
  watchCallIds?: ReadonlySet<string>;
  /**
   * Show the records of other recorders' files too (the default): `open` reads those files
   * whole at once and sets their records aside on disk (other-records.ts).
   */
  otherSources?: boolean;
  /** `--source`: read every file as this format. */
  source?: SourceKind;
  /** Told how far the reading of other recorders' files has got (bytes read, bytes in all), before the store exists. */
  onOtherFilesProgress?: (bytesRead: number, bytesTotal: number) => void;
}

const DEFAULT_CHUNK = 1 << 20;
const RECORD_CACHE = 48;
const RECORD_CACHE_BYTES = 64 << 20;
const PREVIEW_CACHE = 4096;
const LIST_CACHE = 12;

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    // Reported when the file is read.
    return 0;
  }
}

function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function grow<T extends Float64Array | Int32Array | Uint32Array | Uint16Array | Uint8Array>(array: T, size: number, fill?: number): T {
  const Ctor = array.constructor as new (n: number) => T;
  const next = new Ctor(size);
  next.set(array);
  if (fill !== undefined) next.fill(fill, array.length);
  return next;
}

const TRACE_NAME = /^(?<stem>.+)_\d{8}-\d{6}\.jsonl$/;


/**
 * Program and module of a trace file: what its first record says, as every other command
 * counts its records; where it sits (`<program>/<module>/<module>_ts.jsonl`) only where the
 * record names none.
 */
export function locateFile(file: TraceFile): { program: string; module: string } {
  const said = peekNames(file.path);
  const parts = path.relative(file.root, file.path).split(path.sep);
  const name = parts[parts.length - 1];
  const stem = TRACE_NAME.exec(name)?.groups?.stem ?? name.replace(/\.jsonl$/, '');
  let placed: { program: string; module: string };
  if (parts.length >= 3) placed = { program: parts[parts.length - 3], module: parts[parts.length - 2] };
  else if (parts.length === 2) placed = { program: parts[0], module: parts[0] === stem ? stem : parts[1] };
  else {
    const folder = path.basename(file.root);
    placed = { program: folder === stem ? path.basename(path.dirname(file.root)) : folder, module: stem };
  }
  return { program: said.program ?? placed.program, module: said.module ?? placed.module };
}

interface CachedList {
  entries: Int32Array;
  length: number;
  scannedUpTo: number;
  dupVersion: number;
}

export class IndexStore extends EventEmitter {
  /** Synalinks files: indexed by byte offset, records re-read from disk. */
  readonly files: TraceFile[];
  /** Files of other recorders (Ask, klieo, OTLP spans): read whole at open (`otherSources`). */
  readonly otherFiles: TraceFile[];
  /** Every file whose records are shown: `files`, then the other recorders' files read at open. Entry file ids index it. */
  readonly allFiles: TraceFile[];
  /** The discovered files (the roots' discovery, for runs). */
  readonly discovery: Discovery;
  readonly skipped: Discovery['skipped'];
  readonly modules: ModuleInfo[] = [];
  readonly programs: string[] = [];
  readonly tree: TreeNode[] = [];
  /** Entries indexed so far. */
  count = 0;
  /** Bumped whenever entries are added or duplicate groups change. */
  version = 0;
  readonly progress: Progress;
  /** Files that could not be read (permissions, vanished); their entries so far stay. */
  readonly errors: string[] = [];
  /** Watched call ids seen so far, with their entry. */
  readonly found = new Map<string, number>();

  private capacity = 0;
  private fileId = new Uint32Array(0);
  private lineNo = new Uint32Array(0);
  private offset = new Float64Array(0);
  private length = new Uint32Array(0);
  private status = new Uint8Array(0);
  private timestamp = new Float64Array(0);
  private tokens = new Int32Array(0);
  private cost = new Float64Array(0);
  /** 1 where `cost` is the price table's estimate (the recorder reported none), as `stats` estimates it. */
  private costEstimated = new Uint8Array(0);
  private readonly prices = defaultPriceTable();
  private duration = new Float64Array(0);
  private modelId = new Uint16Array(0);
  private moduleOf = new Uint32Array(0);
  private group = new Int32Array(0);

  private groups = 0;
  private groupKeep = new Int32Array(0);
  private groupSize = new Int32Array(0);
  private readonly keys = new KeyIndex();
  private readonly key = new Uint32Array(4);
  private dupVersion = 0;

  private readonly models: string[] = [''];
  private readonly modelIds = new Map<string, number>([['', 0]]);
  private readonly moduleCounts: Counts[] = [];
  private readonly fileModule: number[] = [];
  private readonly damagedReasons = new Map<number, string>();

  private readonly fds = new Map<number, number>();
  /** The records of other recorders' files, set aside on disk; null when they are not shown. */
  private readonly others: OtherRecords | null;
  private runsPromise: Promise<Run[]> | null = null;
  private runList: Run[] | null = null;
  private entryOfCall: Map<string, number> | null = null;
  private readonly recordCache = new Map<number, SynalinksRecord>();
  private recordCacheBytes = 0;
  private readonly previewCache = new Map<number, string>();
  private readonly listCache = new Map<string, CachedList>();

  private closed = false;
  private running: Promise<void> | null = null;
  private readonly chunkSize: number;
  private readonly watch: ReadonlySet<string>;

  /** `others`: the records of other recorders' files, read beforehand (`OtherRecords.read`); without it they are not shown. */
  constructor(discovery: Discovery, options: StoreOptions = {}, others: OtherRecords | null = null) {
    super();
    this.setMaxListeners(50);
    this.discovery = discovery;
    // Records are re-read by byte offset: only line-per-record Synalinks files allow that.
    this.files = discovery.files.filter((file) => file.source === undefined || file.source === 'synalinks');
    this.otherFiles = discovery.files.filter((file) => !(file.source === undefined || file.source === 'synalinks'));
    this.others = others;
    this.allFiles = [...this.files, ...(others?.files.map((o) => o.file) ?? [])];
    this.skipped = discovery.skipped;
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
    this.watch = options.watchCallIds ?? new Set();
    let bytesTotal = others?.bytesRead ?? 0;
    for (const file of this.files) bytesTotal += sizeOf(file.path);
    this.progress = { bytesDone: 0, bytesTotal, filesDone: 0, filesTotal: this.allFiles.length, done: this.allFiles.length === 0 };
    this.buildTree();
    this.ensureCapacity(1024);
  }

  /** Discovers the trace files under `roots` and starts indexing them in the background. */
  static async open(roots: readonly string[], options: StoreOptions = {}): Promise<IndexStore> {
    const discovery = await discover(roots, { source: options.source });
    const otherFiles = discovery.files.filter((file) => !(file.source === undefined || file.source === 'synalinks'));
    let others: OtherRecords | null = null;
    if ((options.otherSources ?? true) && otherFiles.length > 0) {
      const report = options.onOtherFilesProgress;
      const total = report === undefined ? 0 : otherFiles.reduce((sum, file) => sum + sizeOf(file.path), 0);
      others = await OtherRecords.read(otherFiles, report === undefined ? undefined : (bytesRead) => report(bytesRead, total));
    }
    const store = new IndexStore(discovery, options, others);
    store.errors.push(...(others?.errors ?? []));
    store.start();
    return store;
  }

  private buildTree(): void {
    const located = this.files.map((file) => locateFile(file));
    const names = new Map<string, Map<string, number>>();
    const otherNames = [...(this.others?.names ?? [])].flatMap(([program, modules]) => [...modules].map((module) => ({ program, module })));
    for (const other of this.others?.files ?? []) if (other.damaged.length > 0) otherNames.push(this.damagedPlace(other.file));
    for (const { program, module } of [...located, ...otherNames]) {
      if (!names.has(program)) names.set(program, new Map());
      names.get(program)!.set(module, -1);
    }
    const programs = [...names.keys()].sort();
    this.tree.push({ key: '*', kind: 'all', label: 'all records', depth: 0, id: -1 });
    for (const program of programs) {
      const programId = this.programs.length;
      this.programs.push(program);
      this.tree.push({ key: `p:${program}`, kind: 'program', label: program, depth: 0, id: programId });
      const modules = names.get(program)!;
      for (const module of [...modules.keys()].sort()) {
        const id = this.modules.length;
        modules.set(module, id);
        this.modules.push({ id, program, module, programId });
        this.moduleCounts.push({ records: 0, ok: 0, exception: 0, no_output: 0, damaged: 0, duplicates: 0 });
        this.tree.push({ key: `m:${program}/${module}`, kind: 'module', label: module, depth: 1, id });
      }
    }
    located.forEach(({ program, module }, i) => (this.fileModule[i] = names.get(program)!.get(module)!));
    this.moduleIds = names;
  }

  private moduleIds = new Map<string, Map<string, number>>();

  /** Where damaged records of an Ask/klieo file go in the tree: under their file's name. */
  private damagedPlace(file: TraceFile): { program: string; module: string } {
    return { program: path.basename(path.dirname(file.path)), module: path.basename(file.path) };
  }

  /** Indexes the records of other recorders' files from the spill file, as a Synalinks file's lines are. */
  private async addOthers(others: OtherRecords): Promise<void> {
    let record = 0;
    let file = -1;
    for await (const lines of readLineBatches(others.path, { chunkSize: this.chunkSize })) {
      if (this.closed) return;
      for (const line of lines) {
        while (file + 1 < others.files.length && others.files[file + 1].firstRecord <= record) {
          file++;
          this.addOtherDamaged(this.files.length + file);
        }
        this.addOtherLine(this.files.length + file, line, others.placeOf(record++));
      }
      this.changed();
      await yieldToLoop();
    }
    // Files whose records were all damaged (or none) still list their damaged lines.
    while (file + 1 < others.files.length) this.addOtherDamaged(this.files.length + ++file);
    this.progress.filesDone += others.files.length;
  }

  private addOtherDamaged(fileId: number): void {
    const other = this.others!.files[fileId - this.files.length];
    if (other.damaged.length === 0) return;
    const place = this.damagedPlace(other.file);
    const moduleId = this.moduleIds.get(place.program)!.get(place.module)!;
    for (const damaged of other.damaged) this.addDamaged(fileId, damaged.line, moduleId, damaged.reason);
  }

  private addDamaged(fileId: number, line: number, moduleId: number, reason: string): void {
    const i = this.count;
    this.ensureCapacity(i + 1);
    this.fileId[i] = fileId;
    this.lineNo[i] = line;
    this.offset[i] = 0;
    this.length[i] = 0;
    this.moduleOf[i] = moduleId;
    this.setDamaged(i, reason, this.moduleCounts[moduleId]);
  }

  /** Entry `i` (file, line and module already set) as a damaged line; it is the newest entry. */
  private setDamaged(i: number, reason: string, counts: { damaged: number }): void {
    this.status[i] = DAMAGED;
    this.timestamp[i] = NaN;
    this.tokens[i] = -1;
    this.cost[i] = NaN;
    this.costEstimated[i] = 0;
    this.duration[i] = NaN;
    this.modelId[i] = 0;
    this.group[i] = -1;
    this.damagedReasons.set(i, reason);
    counts.damaged++;
    this.count++;
  }

  start(): Promise<void> {
    this.running ??= this.run();
    return this.running;
  }

  /** Resolves when every file is indexed (or the store is closed). */
  whenDone(): Promise<void> {
    return this.start();
  }

  close(): void {
    this.closed = true;
    for (const fd of this.fds.values()) {
      try {
        closeSync(fd);
      } catch {
        // Already closed.
      }
    }
    this.fds.clear();
    this.others?.remove();
    this.recordCache.clear();
    this.removeAllListeners();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private async run(): Promise<void> {
    if (this.others !== null) {
      try {
        await this.addOthers(this.others);
      } catch (error) {
        this.errors.push(`the records of other recorders' files, set aside in ${this.others.path}, could not be read back: ${error instanceof Error ? error.message : String(error)}`);
      }
      this.progress.bytesDone = this.others.bytesRead;
      this.changed();
    }
    let bytesBefore = 0;
    for (let f = 0; f < this.files.length && !this.closed; f++) {
      const file = this.files[f];
      try {
        for await (const lines of readLineBatches(file.path, { chunkSize: this.chunkSize })) {
          if (this.closed) return;
          let bytes = 0;
          for (const line of lines) {
            this.addLine(f, line);
            bytes += line.length + 1;
          }
          this.progress.bytesDone += bytes;
          this.changed();
          await yieldToLoop();
        }
      } catch (error) {
        this.errors.push(`${file.display}: ${error instanceof Error ? error.message : String(error)}`);
      }
      try {
        bytesBefore += statSync(file.path).size;
      } catch {
        // Vanished meanwhile.
      }
      this.progress.bytesDone = Math.max(this.progress.bytesDone, bytesBefore);
      this.progress.filesDone++;
    }
    if (this.closed) return;
    this.progress.done = true;
    this.progress.bytesDone = this.progress.bytesTotal;
    this.changed();
    this.emit('done');
  }

  private changed(): void {
    this.version++;
    this.emit('change');
  }

  private ensureCapacity(n: number): void {
    if (n <= this.capacity) return;
    const size = Math.max(n, this.capacity * 2);
    this.fileId = grow(this.fileId, size);
    this.lineNo = grow(this.lineNo, size);
    this.offset = grow(this.offset, size);
    this.length = grow(this.length, size);
    this.status = grow(this.status, size);
    this.timestamp = grow(this.timestamp, size);
    this.tokens = grow(this.tokens, size);
    this.cost = grow(this.cost, size);
    this.costEstimated = grow(this.costEstimated, size);
    this.duration = grow(this.duration, size);
    this.modelId = grow(this.modelId, size);
    this.moduleOf = grow(this.moduleOf, size);
    this.group = grow(this.group, size);
    this.capacity = size;
  }

  private internModel(model: string | null): number {
    const name = model ?? '';
    let id = this.modelIds.get(name);
    if (id === undefined) {
      id = this.models.length < 0xffff ? this.models.length : 0;
      if (id !== 0) {
        this.models.push(name);
        this.modelIds.set(name, id);
      }
    }
    return id;
  }

  private addLine(fileId: number, line: Line): void {
    const i = this.count;
    this.ensureCapacity(i + 1);
    const moduleId = this.fileModule[fileId];
    const counts = this.moduleCounts[moduleId];
    this.fileId[i] = fileId;
    this.lineNo[i] = line.number;
    this.offset[i] = line.offset;
    // Held in 32 bits: a line too long to be a record (4 GiB or more) is known as too long, not by its length.
    this.length[i] = Math.min(line.length, 0xffffffff);
    this.moduleOf[i] = moduleId;
    if (line.tooLong) {
      this.setDamaged(i, damageReason(lineTooLongReason(line.length), line.terminated), counts);
      return;
    }
    let record: SynalinksRecord;
    try {
      record = new SynalinksRecord(line.bytes, { file: this.files[fileId].display, line: line.number, offset: line.offset });
    } catch (error) {
      if (!(error instanceof JsonSyntaxError || error instanceof DamagedRecordError)) throw error;
      this.setDamaged(i, damageReason(error, line.terminated), counts);
      return;
    }
    this.addParsed(i, record, counts);
  }

  /** A record of another recorder's file, from the spill file: `place` is its place in that file (the line shown); its module, the one it names. */
  private addOtherLine(fileId: number, line: Line, place: number): void {
    let record: SynalinksRecord;
    try {
      if (line.tooLong) throw new Error(lineTooLongReason(line.length));
      record = new SynalinksRecord(line.bytes, this.otherRef(fileId, place));
    } catch (error) {
      // The line is the rebuilt record traces wrote itself: a failure is not the file's damage.
      this.errors.push(`${this.allFiles[fileId].display}: record ${place} cannot be shown: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    this.addEntry(fileId, place, line.offset, line.length, this.moduleIds.get(record.program)!.get(record.module)!, record);
  }

  /** A spilled record's ref: its file and place there, as its source gave them (no byte offset: the file is read whole). */
  private otherRef(fileId: number, place: number): { file: string; line: number; offset: number } {
    return { file: this.allFiles[fileId].display, line: place, offset: 0 };
  }

  private addEntry(fileId: number, line: number, offset: number, length: number, moduleId: number, record: SynalinksRecord): void {
    const i = this.count;
    this.ensureCapacity(i + 1);
    this.fileId[i] = fileId;
    this.lineNo[i] = line;
    this.offset[i] = offset;
    this.length[i] = length;
    this.moduleOf[i] = moduleId;
    this.addParsed(i, record, this.moduleCounts[moduleId]);
  }

  private addParsed(i: number, record: SynalinksRecord, counts: Counts): void {
    const status = record.status;
    const code = status === 'ok' ? OK : status === 'exception' ? EXCEPTION : NO_OUTPUT;
    this.status[i] = code;
    this.timestamp[i] = record.timestamp ?? NaN;
    const usage = record.usage;
    this.tokens[i] = usage !== null && typeof usage.total_tokens === 'number' ? usage.total_tokens : -1;
    this.cost[i] = record.cost ?? NaN;
    this.costEstimated[i] = 0;
    // The same estimate as `stats` (stats/tally.ts): ok records without a reported cost.
    if (record.cost === null && status === 'ok' && usage !== null) {
      const usd = this.prices.costOf(record).usd;
      if (usd !== null) {
        this.cost[i] = usd;
        this.costEstimated[i] = 1;
      }
    }
    this.duration[i] = record.duration ?? NaN;
    this.modelId[i] = this.internModel(record.model);
    counts.records++;
    counts[status]++;
    this.count++;
    this.addToGroup(i, record, counts);
    if (this.watch.size > 0) {
      const callId = record.callId;
      if (this.watch.has(callId) && !this.found.has(callId)) {
        this.found.set(callId, i);
        this.emit('found', callId, i);
      }
    }
  }

  /**
   * Dedupe keeps the first ok record by timestamp (a missing one counts as 0, as in
   * pipeline/dedupe.ts), ties going to the record read first: file order, then line.
   */
  private comesBefore(a: number, b: number): boolean {
    const ta = Number.isNaN(this.timestamp[a]) ? 0 : this.timestamp[a];
    const tb = Number.isNaN(this.timestamp[b]) ? 0 : this.timestamp[b];
    if (ta !== tb) return ta < tb;
    const fa = this.fileId[a];
    const fb = this.fileId[b];
    if (fa !== fb) return fa < fb;
    return this.lineNo[a] < this.lineNo[b];
  }

  private addToGroup(i: number, record: SynalinksRecord, counts: Counts): void {
    let g = this.keys.addIfAbsent(keyOf(record, DEFAULT_KEY, this.key), this.groups);
    if (g === -1) {
      g = this.groups++;
      if (g >= this.groupKeep.length) {
        const size = Math.max(1024, this.groupKeep.length * 2);
        this.groupKeep = grow(this.groupKeep, size, -1);
        this.groupSize = grow(this.groupSize, size);
      }
      this.groupKeep[g] = -1;
      this.groupSize[g] = 0;
    }
    this.group[i] = g;
    this.groupSize[g]++;
    if (this.status[i] !== OK) return;
    const keep = this.groupKeep[g];
    if (keep === -1) {
      this.groupKeep[g] = i;
    } else if (this.comesBefore(i, keep)) {
      // The newcomer is older: the record kept so far becomes the duplicate.
      this.groupKeep[g] = i;
      this.moduleCounts[this.moduleOf[keep]].duplicates++;
      this.dupVersion++;
    } else {
      counts.duplicates++;
    }
  }

  // ---------------------------------------------------------------- entries

  statusOf(i: number): number {
    return this.status[i];
  }

  /** True when a dedupe would drop entry `i`: an ok record whose group keeps another. */
  isDuplicate(i: number): boolean {
    if (this.status[i] !== OK) return false;
    const g = this.group[i];
    return g >= 0 && this.groupKeep[g] !== i;
  }

  groupSizeOf(i: number): number {
    const g = this.group[i];
    return g >= 0 ? this.groupSize[g] : 0;
  }

  info(i: number): EntryInfo {
    const fileId = this.fileId[i];
    const status = STATUS_NAMES[this.status[i]];
    return {
      index: i,
      file: this.allFiles[fileId],
      line: this.lineNo[i],
      offset: this.offset[i],
      length: this.length[i],
      status,
      timestamp: this.timestamp[i],
      tokens: this.tokens[i],
      cost: this.cost[i],
      costEstimated: this.costEstimated[i] === 1,
      duration: this.duration[i],
      model: this.models[this.modelId[i]],
      module: this.modules[this.moduleOf[i]],
      group: this.group[i],
      duplicate: this.isDuplicate(i),
      damagedReason: this.damagedReasons.get(i) ?? null,
      otherRecorder: fileId >= this.files.length,
    };
  }

  private fd(fileId: number): number {
    let fd = this.fds.get(fileId);
    if (fd === undefined) {
      fd = openSync(this.files[fileId].path, 'r');
      this.fds.set(fileId, fd);
    }
    return fd;
  }

  /** The entry's line, re-read from disk. */
  readBytes(i: number): Buffer {
    if (this.fileId[i] >= this.files.length) return this.others?.readAt(this.offset[i], this.length[i]) ?? Buffer.alloc(0);
    // A line too long to be a record is shown and searched by its start only.
    const length = this.length[i] > MAX_LINE_BYTES ? TOO_LONG_PREVIEW : this.length[i];
    const buffer = Buffer.allocUnsafe(length);
    let done = 0;
    const fd = this.fd(this.fileId[i]);
    while (done < length) {
      const n = readSync(fd, buffer, done, length - done, this.offset[i] + done);
      if (n === 0) break;
      done += n;
    }
    return done === length ? buffer : buffer.subarray(0, done);
  }

  /** The record of entry `i`, read and parsed now (cached for the last few), or null for a damaged line. */
  record(i: number, cache = true): SynalinksRecord | null {
    if (this.status[i] === DAMAGED) return null;
    const cached = this.recordCache.get(i);
    if (cached !== undefined) {
      if (cache) {
        this.recordCache.delete(i);
        this.recordCache.set(i, cached);
      }
      return cached;
    }
    const fileId = this.fileId[i];
    let record: SynalinksRecord;
    try {
      const ref = fileId >= this.files.length ? this.otherRef(fileId, this.lineNo[i]) : { file: this.files[fileId].display, line: this.lineNo[i], offset: this.offset[i] };
      record = new SynalinksRecord(this.readBytes(i), ref);
    } catch {
      // The file changed under us since it was indexed.
      return null;
    }
    if (!cache) return record;
    this.recordCache.set(i, record);
    this.recordCacheBytes += record.raw.length;
    while (this.recordCache.size > RECORD_CACHE || (this.recordCacheBytes > RECORD_CACHE_BYTES && this.recordCache.size > 1)) {
      const [oldest, old] = this.recordCache.entries().next().value as [number, SynalinksRecord];
      this.recordCache.delete(oldest);
      this.recordCacheBytes -= old.raw.length;
    }
    return record;
  }

  /** The start of the first user message, for the list (damaged lines: their reason). */
  preview(i: number): string {
    const cached = this.previewCache.get(i);
    if (cached !== undefined) return cached;
    let text: string;
    if (this.status[i] === DAMAGED) {
      text = `damaged line: ${this.damagedReasons.get(i) ?? ''}`;
    } else {
      const record = this.record(i);
      if (record === null) text = '(record changed on disk since indexing)';
      else {
        try {
          text = previewOf(record.raw, record.span('messages')!);
        } catch {
          text = '';
        }
      }
    }
    this.previewCache.set(i, text);
    if (this.previewCache.size > PREVIEW_CACHE) this.previewCache.delete(this.previewCache.keys().next().value as number);
    return text;
  }

  damagedReason(i: number): string | null {
    return this.damagedReasons.get(i) ?? null;
  }

  // ---------------------------------------------------------------- lists

  private matchesNode(node: TreeNode, i: number): boolean {
    if (node.kind === 'all') return true;
    const moduleId = this.moduleOf[i];
    return node.kind === 'module' ? moduleId === node.id : this.modules[moduleId].programId === node.id;
  }

  /**
   * The entries of a tree node that pass the filters, in index order (file, then line).
   * Built incrementally as indexing goes on; the array is shared, do not modify it.
   */
  /**
   * The entries of a node, in file order, or by recorded time (oldest first; records without a
   * time last, ties in file order): a sorted copy, remembered until the list grows.
   */
  list(nodeIndex: number, filter: StatusFilter, hideDuplicates: boolean, order: 'file' | 'time' = 'file'): Int32Array {
    const inFileOrder = this.fileOrderList(nodeIndex, filter, hideDuplicates);
    if (order === 'file') return inFileOrder;
    const key = `${nodeIndex}\0${filter}\0${hideDuplicates ? 1 : 0}`;
    const known = this.byTime.get(key);
    // The file-order list is a fresh view of a cached array each call: the same array, as long, is the same list.
    if (known !== undefined && known.source.buffer === inFileOrder.buffer && known.source.length === inFileOrder.length) return known.sorted;
    const time = (i: number) => (Number.isNaN(this.timestamp[i]) ? Infinity : this.timestamp[i]);
    const sorted = Int32Array.from(inFileOrder).sort((a, b) => time(a) - time(b) || a - b);
    if (this.byTime.size >= LIST_CACHE) this.byTime.delete(this.byTime.keys().next().value as string);
    this.byTime.set(key, { source: inFileOrder, sorted });
    return sorted;
  }

  /** Time-ordered copies of lists, each with the file-order list it was sorted from. */
  private readonly byTime = new Map<string, { source: Int32Array; sorted: Int32Array }>();

  private fileOrderList(nodeIndex: number, filter: StatusFilter, hideDuplicates: boolean): Int32Array {
    const node = this.tree[Math.max(0, Math.min(nodeIndex, this.tree.length - 1))];
    if (node === undefined) return new Int32Array(0);
    const cacheKey = `${node.key}\0${filter}\0${hideDuplicates ? 1 : 0}`;
    let cached = this.listCache.get(cacheKey);
    if (cached !== undefined && hideDuplicates && cached.dupVersion !== this.dupVersion) cached = undefined;
    if (cached === undefined) {
      cached = { entries: new Int32Array(256), length: 0, scannedUpTo: 0, dupVersion: this.dupVersion };
      if (this.listCache.size >= LIST_CACHE) this.listCache.delete(this.listCache.keys().next().value as string);
    } else {
      this.listCache.delete(cacheKey);
    }
    this.listCache.set(cacheKey, cached);
    if (cached.scannedUpTo < this.count) {
      const wanted = filter === 'all' ? -1 : STATUS_NAMES.indexOf(filter);
      let { entries, length } = cached;
      for (let i = cached.scannedUpTo; i < this.count; i++) {
        if (wanted !== -1 && this.status[i] !== wanted) continue;
        if (!this.matchesNode(node, i)) continue;
        if (hideDuplicates && this.isDuplicate(i)) continue;
        if (length === entries.length) entries = grow(entries, entries.length * 2);
        entries[length++] = i;
      }
      cached.entries = entries;
      cached.length = length;
      cached.scannedUpTo = this.count;
    }
    return cached.entries.subarray(0, cached.length);
  }

  /** Counts of a tree node, summed over its modules. */
  counts(nodeIndex: number): Counts {
    const node = this.tree[nodeIndex];
    const total: Counts = { records: 0, ok: 0, exception: 0, no_output: 0, damaged: 0, duplicates: 0 };
    if (node === undefined) return total;
    this.modules.forEach((module, id) => {
      if (node.kind === 'all' || (node.kind === 'program' && module.programId === node.id) || (node.kind === 'module' && id === node.id)) {
        const c = this.moduleCounts[id];
        total.records += c.records;
        total.ok += c.ok;
        total.exception += c.exception;
        total.no_output += c.no_output;
        total.damaged += c.damaged;
        total.duplicates += c.duplicates;
      }
    });
    return total;
  }

  /** Totals for the stats panel, from the index alone (usage and cost of ok records only). */
  stats(nodeIndex: number): NodeStats {
    const counts = this.counts(nodeIndex);
    const entries = this.list(nodeIndex, 'all', false);
    const stats: NodeStats = {
      ...counts,
      totalTokens: 0,
      cost: 0,
      estimatedCost: 0,
      durationSum: 0,
      durationMax: 0,
      firstTimestamp: NaN,
      lastTimestamp: NaN,
      files: 0,
      models: [],
    };
    const files = new Set<number>();
    const models = new Map<number, number>();
    for (const i of entries) {
      files.add(this.fileId[i]);
      const status = this.status[i];
      if (status === DAMAGED) continue;
      models.set(this.modelId[i], (models.get(this.modelId[i]) ?? 0) + 1);
      const ts = this.timestamp[i];
      if (!Number.isNaN(ts)) {
        if (!(ts >= stats.firstTimestamp)) stats.firstTimestamp = ts;
        if (!(ts <= stats.lastTimestamp)) stats.lastTimestamp = ts;
      }
      const d = this.duration[i];
      if (!Number.isNaN(d)) {
        stats.durationSum += d;
        if (d > stats.durationMax) stats.durationMax = d;
      }
      if (status !== OK) continue;
      if (this.tokens[i] > 0) stats.totalTokens += this.tokens[i];
      if (Number.isNaN(this.cost[i])) continue;
      if (this.costEstimated[i] === 1) stats.estimatedCost += this.cost[i];
      else stats.cost += this.cost[i];
    }
    stats.files = files.size;
    stats.models = [...models.entries()]
      .map(([id, records]) => ({ model: this.models[id] || '(unknown)', records }))
      .sort((a, b) => b.records - a.records || (a.model < b.model ? -1 : 1));
    return stats;
  }

  /**
   * Every record with the same dedupe keys as entry `i`, in dedupe order (timestamp, file
   * path as discovered, line), each with the part it plays: the one a dedupe keeps, the ok records it
   * drops, and records that are not ok (which a dedupe of ok records never sees).
   */
  duplicateGroup(i: number): GroupMember[] {
    const g = this.group[i];
    if (g < 0) return [{ entry: i, role: 'not ok' }];
    const members: number[] = [];
    for (let j = 0; j < this.count; j++) if (this.group[j] === g) members.push(j);
    members.sort((a, b) => (a === b ? 0 : this.comesBefore(a, b) ? -1 : 1));
    const keep = this.groupKeep[g];
    return members.map((entry) => ({ entry, role: entry === keep ? 'kept' : this.status[entry] === OK ? 'duplicate' : 'not ok' }));
  }

  // ---------------------------------------------------------------- runs

  /**
   * The runs of the shown files (runs/runs.ts: Ask recordings, klieo run_ids, Synalinks
   * trajectories), in start order, grouped once indexing is done and kept.
   */
  loadRuns(): Promise<Run[]> {
    this.runsPromise ??= (async () => {
      await this.whenDone();
      let runs: Run[] = [];
      try {
        const [{ groupRuns, sortRuns }, { defaultPriceTable }] = await Promise.all([import('../runs/runs.js'), import('../pricing/table.js')]);
        runs = sortRuns(await groupRuns({ files: this.allFiles, skipped: [] }, defaultPriceTable(), true), 'start');
      } catch (error) {
        this.errors.push(`runs: ${error instanceof Error ? error.message : String(error)}`);
      }
      const entries = new Map<string, number>();
      for (let i = 0; i < this.count; i++) entries.set(`${this.fileId[i]}:${this.lineNo[i]}`, i);
      this.entryOfCall = entries;
      this.runList = runs;
      if (!this.closed) this.changed();
      return runs;
    })();
    return this.runsPromise;
  }

  /** The runs once grouped (`loadRuns`), else null. */
  get runs(): readonly Run[] | null {
    return this.runList;
  }

  private readonly runListCache = new Map<string, Int32Array>();

  /**
   * Indexes (into `runs`) of the runs of a tree node (all, a program's, or those with a step in
   * a module) whose status passes the filter the records list uses too.
   */
  runsOf(nodeIndex: number, filter: StatusFilter = 'all'): Int32Array {
    const runs = this.runList;
    const node = this.tree[Math.max(0, Math.min(nodeIndex, this.tree.length - 1))];
    if (runs === null || node === undefined) return new Int32Array(0);
    const cacheKey = `${node.key}\0${filter}`;
    let list = this.runListCache.get(cacheKey);
    if (list === undefined) {
      const module = node.kind === 'module' ? this.modules[node.id] : null;
      const picked: number[] = [];
      runs.forEach((run, k) => {
        if (filter !== 'all' && run.status !== filter) return;
        if (node.kind === 'all' || (node.kind === 'program' && run.program === node.label) || (module !== null && run.program === module.program && run.modules.includes(module.module))) picked.push(k);
      });
      list = Int32Array.from(picked);
      this.runListCache.set(cacheKey, list);
    }
    return list;
  }

  /** The entries of a run's steps, in run order (steps not indexed are left out). */
  runEntries(runIndex: number): number[] {
    const run = this.runList?.[runIndex];
    if (run === undefined || this.entryOfCall === null) return [];
    return run.calls.map((call) => this.entryOfCall!.get(`${call.fileIndex}:${call.line}`)).filter((i): i is number => i !== undefined);
  }

  /**
   * The entry that shows a run as one conversation: the step with the most messages (for an
   * agent trajectory, the last one, holding every earlier turn), the later one on a tie; -1 if none.
   */
  runEntry(runIndex: number): number {
    let best = -1;
    let most = -1;
    for (const entry of this.runEntries(runIndex)) {
      const record = this.record(entry, false);
      const n = record === null ? -1 : record.messageCount();
      if (n >= most) [best, most] = [entry, n];
    }
    return best;
  }

  /** The tree node showing a module. */
  nodeOfModule(moduleId: number): number {
    return this.tree.findIndex((node) => node.kind === 'module' && node.id === moduleId);
  }
}
