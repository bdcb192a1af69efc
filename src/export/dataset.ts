/**
 * One dataset: a training and a validation file (sharded past --max-file-mb), each
 * validated line by line as it is written, so a file the trainer would reject is
 * caught before it is renamed into place.
 */
import path from 'node:path';
import type { OutputDir, OutputFile } from '../output/output-dir.js';
import type { Split } from '../pipeline/split.js';
import { LineValidator, type EncodingName, type Inspection, type Target, type ValidationReport } from '../targets/index.js';

export const SPLITS: readonly Split[] = ['training', 'validation'];

interface Shard {
  file: OutputFile;
  validator: LineValidator;
  examples: number;
}

class SplitFiles {
  readonly shards: Shard[] = [];
  examples = 0;

  constructor(
    private readonly output: OutputDir,
    private readonly folder: string,
    private readonly split: Split,
    private readonly target: Target,
    private readonly encoding: EncodingName,
    private readonly maxBytes: number,
  ) {
    this.openShard();
  }

  private openShard(): Shard {
    const shard = {
      file: this.output.create(path.join(this.folder, `${this.split}.jsonl`)),
      validator: new LineValidator(this.target, null, this.encoding),
      examples: 0,
    };
    this.shards.push(shard);
    return shard;
  }

  /** Writes one example line (UTF-8, no newline), already inspected by `inspectExample`. */
  write(line: Uint8Array, inspection: Inspection): void {
    let shard = this.shards[this.shards.length - 1];
    if (shard.examples > 0 && shard.file.bytes + line.length + 1 > this.maxBytes) shard = this.openShard();
    shard.file.writeLine(line);
    shard.examples++;
    this.examples++;
    shard.validator.addInspection(inspection, true);
  }

  /** Numbers the shards when there are several (`training-001.jsonl`, …) and closes them. */
  finish(): { file: OutputFile; report: ValidationReport }[] {
    if (this.shards.length > 1) {
      this.shards.forEach((shard, i) => {
        const name = `${this.split}-${String(i + 1).padStart(3, '0')}.jsonl`;
        shard.file.finalPath = path.join(path.dirname(shard.file.finalPath), name);
      });
    }
    return this.shards.map((shard) => {
      shard.file.close();
      return { file: shard.file, report: shard.validator.report(shard.file.finalPath) };
    });
  }
}

export class Dataset {
  readonly splits: Record<Split, SplitFiles>;

  constructor(output: OutputDir, readonly folder: string, target: Target, encoding: EncodingName, maxBytes: number) {
    this.splits = {
      training: new SplitFiles(output, folder, 'training', target, encoding, maxBytes),
      validation: new SplitFiles(output, folder, 'validation', target, encoding, maxBytes),
    };
  }
}
