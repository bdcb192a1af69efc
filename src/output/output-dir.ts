/**
 * An output folder written safely: every file goes to a temporary name beside its final
 * one and is renamed into place only when the whole run has succeeded. Interrupted runs
 * (Ctrl-C, SIGTERM, an error) remove their temporary files, so the folder never holds a
 * partial file. Inputs are never written: a folder inside a root is refused.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.js';

const TEMP_MARK = '.traces-partial-';
const WRITE_BUFFER = 1 << 20;

export function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** A file being written: buffered, and only visible under its final name after commit. */
export class OutputFile {
  private readonly fd: number;
  /** Shared by every file: a run writes one file at a time, and a buffer per open file would add up. */
  private static readonly buffer = Buffer.allocUnsafe(WRITE_BUFFER);
  private static owner: OutputFile | null = null;
  private used = 0;
  bytes = 0;
  closed = false;

  constructor(
    public finalPath: string,
    readonly tempPath: string,
  ) {
    mkdirSync(path.dirname(tempPath), { recursive: true });
    this.fd = openSync(tempPath, 'wx');
  }

  write(data: Uint8Array | string): void {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.bytes += bytes.length;
    if (OutputFile.owner !== this) {
      OutputFile.owner?.flush();
      OutputFile.owner = this;
    }
    if (bytes.length > WRITE_BUFFER - this.used) {
      this.flush();
      if (bytes.length > WRITE_BUFFER) {
        writeSync(this.fd, bytes);
        return;
      }
    }
    OutputFile.buffer.set(bytes, this.used);
    this.used += bytes.length;
  }

  /** Writes `line` followed by a newline. */
  writeLine(line: Uint8Array | string): void {
    this.write(line);
    this.write(NEWLINE);
  }

  private flush(): void {
    if (this.used > 0) writeSync(this.fd, OutputFile.buffer, 0, this.used);
    this.used = 0;
  }

  close(): void {
    if (this.closed) return;
    if (OutputFile.owner === this) {
      this.flush();
      OutputFile.owner = null;
    }
    closeSync(this.fd);
    this.closed = true;
  }
}

const NEWLINE = Buffer.from('\n');

const openOutputs = new Set<OutputDir>();
let signalsInstalled = false;

function installSignalCleanup(): void {
  if (signalsInstalled) return;
  signalsInstalled = true;
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(signal, () => {
      for (const output of openOutputs) output.abort();
      process.stderr.write(`\ntraces: interrupted; no output was written\n`);
      process.exit(code);
    });
  }
}

export interface OutputDirOptions {
  force: boolean;
  /** Folders the run reads: the output may not be inside one. */
  roots: readonly string[];
}

export class OutputDir {
  private readonly files: OutputFile[] = [];

  private constructor(readonly dir: string) {}

  static open(dir: string, options: OutputDirOptions): OutputDir {
    const absolute = path.resolve(dir);
    for (const root of options.roots) {
      const rootPath = path.resolve(root);
      const rootDir = existsSync(rootPath) && statSync(rootPath).isFile() ? path.dirname(rootPath) : rootPath;
      if (isInside(absolute, rootDir)) {
        throw new UserError(`--out ${dir} is inside the input ${root}: choose a folder outside the traces being read`);
      }
      if (isInside(rootDir, absolute)) {
        throw new UserError(`--out ${dir} contains the input ${root}: choose a folder outside the traces being read`);
      }
    }
    if (existsSync(absolute)) {
      if (!statSync(absolute).isDirectory()) throw new UserError(`--out ${dir} exists and is not a folder`);
      const entries = readdirSync(absolute);
      for (const stale of entries.filter((e) => e.includes(TEMP_MARK))) unlinkSync(path.join(absolute, stale));
      if (entries.some((e) => !e.includes(TEMP_MARK)) && !options.force) {
        throw new UserError(`--out ${dir} is not empty: pass --force to replace the files this run writes, or choose an empty folder`);
      }
    }
    const output = new OutputDir(absolute);
    openOutputs.add(output);
    installSignalCleanup();
    return output;
  }

  /** Resolves a path inside the output folder, refusing one that would leave it. */
  resolve(relative: string): string {
    const full = path.resolve(this.dir, relative);
    if (!isInside(full, this.dir) || full === this.dir) throw new UserError(`refusing to write outside --out: ${relative}`);
    return full;
  }

  create(relative: string): OutputFile {
    return this.createAt(this.resolve(relative));
  }

  /** A file outside the folder (e.g. `--manifest FILE`), written with the same safety. */
  createAt(finalPath: string): OutputFile {
    const tempPath = path.join(path.dirname(finalPath), `${path.basename(finalPath)}${TEMP_MARK}${process.pid}`);
    const file = new OutputFile(finalPath, tempPath);
    this.files.push(file);
    return file;
  }

  /** Renames every file into place. */
  commit(): string[] {
    for (const file of this.files) file.close();
    for (const file of this.files) renameSync(file.tempPath, file.finalPath);
    openOutputs.delete(this);
    return this.files.map((f) => f.finalPath);
  }

  /** Removes every temporary file; nothing of this run remains. */
  abort(): void {
    for (const file of this.files) {
      try {
        file.close();
      } catch {
        // Already closed or never opened: the unlink below is what matters.
      }
      try {
        unlinkSync(file.tempPath);
      } catch {
        // Already gone.
      }
    }
    openOutputs.delete(this);
  }
}
