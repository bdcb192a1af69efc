/**
 * One dataset: a training and a validation file (sharded past --max-file-mb), each
 * validated line by line as it is written, so a file the trainer would reject is
 * caught before it is renamed into place. Each line written is recorded in the
 * provenance (export/provenance.ts) as it is written.
 *
 * The side of an example is its first-user-message group's (pipeline/split.ts). When no
 * group of the dataset hashes to validation although there are two groups or more, the
 * group nearest to validation (the smallest fraction) goes there instead, so a small export
 * never writes an empty validation file by chance; likewise the group nearest to training
 * goes there when none hashed there, and a single group always trains. Until the other side
 * has an example, that group's lines wait aside on disk, and go where they hashed as soon
 * as they cannot be needed.
 */
import { closeSync, openSync } from 'node:fs';
import { RunTempDir } from '../pipeline/spill.js';
import { readFull } from '../sources/read.js';
import { writeAll } from '../output/write-all.js';
import path from 'node:path';
import type { OutputDir, OutputFile } from '../output/output-dir.js';
import { sideOf, type Split } from '../pipeline/split.js';
import { LineValidator, type Inspection, type Target, type ValidationReport } from '../targets/index.js';
import type { ExampleId, Provenance } from './provenance.js';

export const SPLITS: readonly Split[] = ['training', 'validation'];

interface Shard {
  file: OutputFile;
  validator: LineValidator;
  examples: number;
}

/** What the inspections' counts are (counted in the workers): the encoding or model folder, whether exact, and the length limit. */
export interface CountsLabel {
  name: string;
  exact: boolean;
  tokenLimit: number;
}

class SplitFiles {
  readonly shards: Shard[] = [];
  examples = 0;

  constructor(
    private readonly output: OutputDir,
    private readonly folder: string,
    private readonly split: Split,
    private readonly target: Target,
    private readonly counts: CountsLabel,
    private readonly maxBytes: number,
    private readonly provenance: Provenance,
  ) {}

  private openShard(): Shard {
    const shard = {
      // Each shard its own name from the start (two files of one name would share a temporary name).
      file: this.output.create(path.join(this.folder, this.nameOf(this.shards.length, this.shards.length + 1))),
      validator: new LineValidator(this.target, null, this.counts.name, this.counts.tokenLimit, this.counts.exact),
      examples: 0,
    };
    this.shards.push(shard);
    return shard;
  }

  /** Writes one example line (UTF-8, no newline), already inspected by `inspectExample`. */
  write(line: Uint8Array, inspection: Inspection, callId: ExampleId): void {
    let shard = this.shards.at(-1) ?? this.openShard();
    if (shard.examples > 0 && shard.file.bytes + line.length + 1 > this.maxBytes) shard = this.openShard();
    shard.file.writeLine(line);
    shard.examples++;
    this.examples++;
    shard.validator.addInspection(inspection, true);
    this.provenance.written(shard.file, shard.examples, callId, inspection.tokens);
  }

  /** Shard `index` of `count`: the target's name for it, else `training.jsonl` alone and `training-001.jsonl`, … of several. */
  private nameOf(index: number, count: number): string {
    if (this.target.fileName !== undefined) return this.target.fileName(this.split, index, count);
    return count === 1 ? `${this.split}.jsonl` : `${this.split}-${String(index + 1).padStart(3, '0')}.jsonl`;
  }

  /**
   * Numbers the shards when there are several (`training-001.jsonl`, …) and closes them.
   * With no example, the file is written (empty) only when `empty` says so.
   */
  finish(empty: boolean): { file: OutputFile; report: ValidationReport }[] {
    if (this.shards.length === 0 && empty) this.openShard();
    if (this.shards.length > 1 || this.target.fileName !== undefined) {
      this.shards.forEach((shard, i) => {
        shard.file.finalPath = this.output.resolve(path.join(this.folder, this.nameOf(i, this.shards.length)));
      });
    }
    return this.shards.map((shard) => {
      shard.file.close();
      // The trainer's minimum is of the whole split, every shard together: the export checks it (run.ts).
      return { file: shard.file, report: shard.validator.report(shard.file.finalPath, { minimum: false }) };
    });
  }
}

/** Bytes a held group keeps in memory before it writes them to its file… */
const HELD_IN_MEMORY = 64 << 10;
/** …and all held groups together. */
const ALL_HELD_IN_MEMORY = 8 << 20;

/**
 * The lines of one group set aside: each its call_id and inspection, then the line. Kept in
 * memory up to HELD_IN_MEMORY (ALL_HELD_IN_MEMORY for all groups), then added to a temporary
 * file, opened only while written or read: an export of one dataset per module may hold a
 * group aside for each of thousands of datasets, and a descriptor each would pass the
 * open-file limit.
 */
class HeldGroup {
  private static inMemory = 0;
  private dir: RunTempDir | null = null;
  /** Bytes in the file. */
  private bytes = 0;
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(readonly fraction: number) {}

  private get file(): string {
    this.dir ??= new RunTempDir();
    return path.join(this.dir.path, 'lines.bin');
  }

  add(line: Uint8Array, inspection: Inspection, callId: ExampleId): void {
    const header = Buffer.from(JSON.stringify({ callId, inspection }), 'utf8');
    const lengths = Buffer.alloc(8);
    lengths.writeUInt32LE(header.length, 0);
    lengths.writeUInt32LE(line.length, 4);
    for (const part of [lengths, header, Buffer.from(line)]) {
      this.pending.push(part);
      this.pendingBytes += part.length;
      HeldGroup.inMemory += part.length;
    }
    if (this.pendingBytes >= HELD_IN_MEMORY || HeldGroup.inMemory >= ALL_HELD_IN_MEMORY) this.spill();
  }

  /** Adds what is in memory to the file. */
  private spill(): void {
    const fd = openSync(this.file, this.bytes === 0 ? 'wx' : 'a');
    try {
      for (const part of this.pending) {
        writeAll(fd, part, this.file);
        this.bytes += part.length;
      }
    } finally {
      closeSync(fd);
    }
    this.forgetPending();
  }

  private forgetPending(): void {
    HeldGroup.inMemory -= this.pendingBytes;
    this.pending.length = 0;
    this.pendingBytes = 0;
  }

  /** Hands every line back in the order added, then removes the file. */
  drain(into: SplitFiles): void {
    let fd = -1;
    try {
      // Held lines in memory are read from there; once any went to the file, all go, and are read back one by one.
      const inMemory = this.bytes === 0 ? Buffer.concat(this.pending) : null;
      if (inMemory === null) {
        this.spill();
        fd = openSync(this.file, 'r');
      }
      const total = inMemory?.length ?? this.bytes;
      let position = 0;
      const read = (length: number): Buffer => {
        if (inMemory !== null) return inMemory.subarray(position, (position += length));
        const buffer = Buffer.allocUnsafe(length);
        if (readFull(fd, buffer, position) < length) throw new Error(`${this.file}: shorter than written`);
        position += length;
        return buffer;
      };
      while (position < total) {
        const lengths = read(8);
        const { callId, inspection } = JSON.parse(read(lengths.readUInt32LE(0)).toString('utf8')) as { callId: ExampleId; inspection: Inspection };
        into.write(read(lengths.readUInt32LE(4)), inspection, callId);
      }
    } finally {
      if (fd !== -1) closeSync(fd);
      this.dispose();
    }
  }

  dispose(): void {
    this.forgetPending();
    this.dir?.remove();
    this.dir = null;
  }
}

export class Dataset {
  readonly splits: Record<Split, SplitFiles>;
  /** Per side, while the other side has nothing written: the group nearest to it, set aside. */
  private readonly held: Record<Split, HeldGroup | null> = { training: null, validation: null };
  /** Per side, whether a group other than the held one came. */
  private readonly severalGroups: Record<Split, boolean> = { training: false, validation: false };
  /** Set by finish: why there is no validation file, when there is none. */
  /** Why the dataset has no validation file, when it has none. */
  validationNote: string | null = null;
  /** Written by `writeSettled`: a host's part of a sharded dataset, whose training lines may all be on other hosts. */
  private settled = false;

  constructor(
    output: OutputDir,
    readonly folder: string,
    private readonly target: Target,
    counts: CountsLabel,
    maxBytes: number,
    private readonly validationFraction: number,
    provenance: Provenance,
  ) {
    this.splits = {
      training: new SplitFiles(output, folder, 'training', target, counts, maxBytes, provenance),
      validation: new SplitFiles(output, folder, 'validation', target, counts, maxBytes, provenance),
    };
  }

  /**
   * Writes an example on the side a keep-list settled for the whole sharded dataset (`forcedSides`
   * in pipeline/keep-list.ts): the side it hashed to unless `forced`. No group waits: this host
   * sees only part of the dataset, and the list decided for all of it.
   */
  writeSettled(line: Uint8Array, inspection: Inspection, fraction: number, callId: ExampleId, forced: Split | undefined): void {
    this.settled = true;
    this.splits[forced ?? sideOf(fraction, this.validationFraction)].write(line, inspection, callId);
  }

  /** Writes an example on its group's side; `fraction` is the group's (groupFraction). */
  write(line: Uint8Array, inspection: Inspection, fraction: number, callId: ExampleId): void {
    const side = sideOf(fraction, this.validationFraction);
    // A fraction of 0 asks for training only (1 is refused: nothing would train).
    if (this.validationFraction === 0) return this.splits[side].write(line, inspection, callId);
    const other: Split = side === 'training' ? 'validation' : 'training';
    // While the other side is empty, the group of this side nearest to it waits, in case it must go there.
    const held = this.held[side];
    if (this.splits[other].examples === 0 && held !== null && fraction !== held.fraction) {
      this.severalGroups[side] = true;
      const nearer = side === 'training' ? fraction < held.fraction : fraction > held.fraction;
      if (nearer) {
        this.held[side] = null;
        held.drain(this.splits[side]);
        this.releaseOther(side);
      }
    }
    // Asked again: releasing the other side's waiting group just now may have filled it, and then
    // no group of this side needs to wait (one held now would move at finish without its later lines).
    const waiting = this.held[side];
    if (this.splits[other].examples > 0 || (waiting !== null && waiting.fraction !== fraction)) return this.writeOn(side, line, inspection, callId);
    (this.held[side] ??= new HeldGroup(fraction)).add(line, inspection, callId);
  }

  private writeOn(side: Split, line: Uint8Array, inspection: Inspection, callId: ExampleId): void {
    this.splits[side].write(line, inspection, callId);
    this.releaseOther(side);
  }

  /** `side` has an example written: the other side's held group can go where it hashed. */
  private releaseOther(side: Split): void {
    const other: Split = side === 'training' ? 'validation' : 'training';
    this.release(other, other);
  }

  private release(from: Split, to: Split): void {
    const held = this.held[from];
    this.held[from] = null;
    if (held === null) return;
    held.drain(this.splits[to]);
    // `to` is no longer empty: a group held for it on the other side can no longer be needed
    // there, and must go where it hashed now, or its later lines (written straight to its side,
    // as `to` has examples) and the held ones would end on two sides.
    this.releaseOther(to);
  }

  /** Closes the files; returns each with its validation report. */
  finish(): { split: Split; file: OutputFile; report: ValidationReport }[] {
    const { training, validation } = this.splits;
    if (this.held.training !== null && this.held.validation !== null) {
      this.release('training', 'training');
      this.release('validation', 'validation');
    } else if (this.held.training !== null) {
      // Nothing went to validation: with two groups or more, the nearest goes there.
      this.release('training', this.severalGroups.training ? 'validation' : 'training');
    } else if (this.held.validation !== null) {
      // Nothing went to training: the nearest group goes there, the only one too.
      this.release('validation', 'training');
    }
    // An empty validation file is written only when asked for (fraction 0) and the target takes one.
    const emptyValidation = this.validationFraction === 0 && !this.target.rejectsEmptyValidation;
    if (validation.examples === 0 && !emptyValidation) {
      this.validationNote =
        this.validationFraction === 0
          ? (this.target.noEmptyValidation ?? `${this.target.name} rejects an empty one (without it, the service splits off its own)`)
          : 'its examples have fewer than 2 first-user-message groups, and validation must not share a group with training';
    }
    return [
      // A host's part of a sharded dataset may hold validation lines only: its training lines are on other hosts.
      ...training.finish(!this.settled || training.examples > 0).map((f) => ({ split: 'training' as const, ...f })),
      ...validation.finish(emptyValidation).map((f) => ({ split: 'validation' as const, ...f })),
    ];
  }

  /** Removes what waits on disk (an aborted export). */
  dispose(): void {
    for (const side of SPLITS) {
      this.held[side]?.dispose();
      this.held[side] = null;
    }
  }
}
