/**
 * An output folder written safely. Every file is written into a staging folder inside
 * `--out` (`.traces-partial-<pid>`, or a temporary name beside a file outside it) and
 * moved into place only when the whole run has succeeded; the completion marker
 * `_traces/complete` is written last. A run stopped by a signal or an error removes
 * everything it created; a run killed outright leaves no marker, so the next run calls
 * the folder incomplete, and `--force` cleans it. Whether a staging folder's run still lives
 * is told by its lock (run-lock.ts), never by the pid in its name. Every path passes `checkOutputPath`.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.js';
import { isDead, isStale, pidOf, whileRunning } from './cleanup.js';
import { holderOf, RunLock } from './run-lock.js';
import { checkOutputPath, isInside } from './output-path.js';
import { pauseForTestSync } from './test-pause.js';
import { lstatOrNull, tempStem } from './entry.js';
import { nameTakenError, publishAll } from './publish.js';
import { writeAll } from './write-all.js';
import { jsonLine } from '../canonical/json-value.js';

const TEMP_MARK = '.traces-partial-';
const WRITE_BUFFER = 1 << 20;
/** Written last: an output folder without it was interrupted. Lists the files of the run, one per line. */
/** traces' own folder in an output folder: its bookkeeping (marker, manifest, kept keys, run facts). */
export const META_DIR = '_traces';

export const COMPLETE_MARKER = path.join(META_DIR, 'complete');
/** Written before the files are moved into place: what an interrupted move may have left. */
const MOVING_LIST = path.join(META_DIR, 'moving');

/** Descriptors OutputFiles keep open at once, per thread: far below the usual limits (256 on macOS, 1024 on Linux). */
const MAX_OPEN_FILES = 64;
/** Fewest descriptors OutputFiles go down to when the process limit (ulimit -n) is lower than they assumed. */
const MIN_OPEN_FILES = 4;

/**
 * A file being written: buffered, and only visible under its final name after commit.
 *
 * A run may write thousands of files at once (a tree copy, one dataset per module), more
 * than a process may hold open. At most MAX_OPEN_FILES stay open (fewer under a low ulimit -n); the least recently
 * written is closed and opened again, to append, when next written. Again means the staging
 * file this run created: never through a link, never created anew.
 */
export class OutputFile {
  /** -1 while closed to make room for others (or for good, once `closed`). */
  private fd: number;
  /** Shared by every file: a run writes one file at a time, and a buffer per open file would add up. */
  private static readonly buffer = Buffer.allocUnsafe(WRITE_BUFFER);
  private static owner: OutputFile | null = null;
  /** The files with an open descriptor, least recently written first. */
  private static readonly open = new Set<OutputFile>();
  private used = 0;
  bytes = 0;
  closed = false;

  constructor(
    public finalPath: string,
    readonly tempPath: string,
    fd?: number,
    /** The folder of `tempPath` is known to exist (a run creating thousands of files makes each folder once). */
    folderExists = false,
  ) {
    OutputFile.makeRoom();
    if (fd === undefined) {
      if (!folderExists) mkdirSync(path.dirname(tempPath), { recursive: true });
      // 'wx': a name that exists (a link planted there included) is never opened.
      fd = OutputFile.openMakingRoom(() => openSync(tempPath, 'wx'));
    }
    this.fd = fd;
    OutputFile.open.add(this);
  }

  /**
   * The temporary file of an OutputFile, opened again to write it from another thread (which
   * then owns its content), or to add to it once its other writers are done (`append`). Never
   * through a link and never created anew: if the run was aborted meanwhile and its staging
   * removed, this fails rather than write anywhere else.
   */
  static reopen(tempPath: string, options: { append?: boolean } = {}): OutputFile {
    OutputFile.makeRoom();
    return new OutputFile(tempPath, tempPath, OutputFile.openMakingRoom(() => openSync(tempPath, OutputFile.reopenFlags(options.append === true))));
  }

  private static reopenFlags(append: boolean): number {
    return constants.O_WRONLY | constants.O_NOFOLLOW | (append ? constants.O_APPEND : 0);
  }

  /** How many descriptors OutputFiles keep open: MAX_OPEN_FILES, less once the process limit was met. */
  private static maxOpen = MAX_OPEN_FILES;

  /**
   * Opens with `open`; when the process is out of descriptors (a low ulimit -n), keeps half as
   * many of its own open from then on and tries again, down to MIN_OPEN_FILES.
   */
  private static openMakingRoom(open: () => number): number {
    for (;;) {
      try {
        return open();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EMFILE' || OutputFile.open.size <= MIN_OPEN_FILES) throw error;
        OutputFile.maxOpen = Math.max(MIN_OPEN_FILES, Math.floor(OutputFile.open.size / 2));
        OutputFile.makeRoom();
      }
    }
  }

  /** Closes the least recently written files until one more may open. */
  private static makeRoom(): void {
    for (const file of OutputFile.open) {
      if (OutputFile.open.size < OutputFile.maxOpen) return;
      file.release();
    }
  }

  /** Closes the descriptor (not the file for good): the next write opens it again. */
  private release(): void {
    try {
      if (OutputFile.owner === this) this.flush();
    } finally {
      if (OutputFile.owner === this) OutputFile.owner = null;
      OutputFile.open.delete(this);
      const fd = this.fd;
      this.fd = -1;
      closeSync(fd);
    }
  }

  /** The descriptor to write with, opened again if it was closed to make room; marks the file as just written. */
  private descriptor(): number {
    if (this.closed) throw new Error(`${this.tempPath}: written after it was closed`);
    OutputFile.open.delete(this);
    if (this.fd === -1) {
      OutputFile.makeRoom();
      this.fd = OutputFile.openMakingRoom(() => openSync(this.tempPath, OutputFile.reopenFlags(true)));
    }
    OutputFile.open.add(this);
    return this.fd;
  }

  write(data: Uint8Array | string): void {
    if (OutputFile.owner !== this) {
      // The buffer is this file's from here, whether or not the last owner's flush succeeds.
      const previous = OutputFile.owner;
      OutputFile.owner = this;
      previous?.flush();
    }
    if (typeof data === 'string') {
      // A UTF-16 unit takes at most 3 bytes: a string sure to fit is encoded straight into the buffer, with no copy of its own.
      if (data.length * 3 > WRITE_BUFFER - this.used) this.flush();
      if (data.length * 3 <= WRITE_BUFFER - this.used) {
        const written = OutputFile.buffer.write(data, this.used, 'utf8');
        this.used += written;
        this.bytes += written;
        return;
      }
    }
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.bytes += bytes.length;
    if (bytes.length > WRITE_BUFFER - this.used) {
      this.flush();
      if (bytes.length > WRITE_BUFFER) {
        this.writeOut(bytes);
        return;
      }
    }
    OutputFile.buffer.set(bytes, this.used);
    this.used += bytes.length;
  }

  /** Writes a line of bytes as they are (a recorded line, a line `writeStrictLine` made), then a newline. */
  writeLine(line: Uint8Array): void {
    this.write(line);
    this.write(NEWLINE);
  }

  /**
   * Writes JSON text as one JSONL line, through the one escaping writer (`jsonLine`): NEL,
   * U+2028 and U+2029 inside strings become escapes, so every reader takes the line whole.
   */
  writeJsonLine(json: string): void {
    this.write(jsonLine(json));
    this.write(NEWLINE);
  }

  private flush(): void {
    if (this.used === 0) return;
    try {
      this.writeOut(OutputFile.buffer.subarray(0, this.used));
    } finally {
      // Written or failed, the buffered bytes are done with: a failure stops the run.
      this.used = 0;
    }
  }

  /** Writes bytes out now; an error names the file by the name it will have. */
  private writeOut(bytes: Uint8Array): void {
    writeAll(this.descriptor(), bytes, this.finalPath);
  }

  close(): void {
    if (this.closed) return;
    try {
      if (OutputFile.owner === this) this.flush();
    } finally {
      if (OutputFile.owner === this) OutputFile.owner = null;
      OutputFile.open.delete(this);
      if (this.fd !== -1) closeSync(this.fd);
      this.fd = -1;
      this.closed = true;
    }
  }
}

const NEWLINE = Buffer.from('\n');

export interface OutputDirOptions {
  force: boolean;
  /** Real paths of what the run reads (`realInputs`): the output may be none of them, inside one or around one. */
  roots: readonly string[];
}

/** Relative paths listed in a marker or moving list, ignoring any that would leave the folder. */
function listedFiles(dir: string, relative: string): string[] {
  let text: string;
  try {
    text = readFileSync(path.join(dir, relative), 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((line) => line !== '' && isInside(path.resolve(dir, line), dir) && path.resolve(dir, line) !== dir);
}

/** Removes a file or a link (never what a link points to); false when it is a folder. */
function removeEntry(file: string): boolean {
  const info = lstatOrNull(file);
  if (info === null) return true;
  if (info.isDirectory()) return false;
  unlinkSync(file);
  return true;
}

/**
 * Removes a file an earlier run listed, never through a link: a link on the way (planted
 * where traces had a folder) is itself removed, and what it points to is left alone.
 */
function removeListed(dir: string, relative: string): void {
  let at = dir;
  for (const part of relative.split(path.sep)) {
    at = path.join(at, part);
    const info = lstatOrNull(at);
    if (info === null) return;
    if (info.isSymbolicLink() || at === path.join(dir, relative)) {
      removeEntry(at);
      return;
    }
    if (!info.isDirectory()) return;
  }
}

/** Turns a file-system error on the output side into one line the user can act on. */
function outputError(flag: string, given: string, error: unknown): never {
  if (error instanceof UserError) throw error;
  const e = error as NodeJS.ErrnoException;
  if (typeof e.code !== 'string') throw error;
  const where = e.path !== undefined ? ` (${e.path})` : '';
  const what: Record<string, string> = {
    EACCES: 'permission denied: choose a folder you can write to',
    EPERM: 'not permitted: choose a folder you can write to',
    EROFS: 'the file system is read-only: choose another place',
    ENOSPC: 'no space left on the device: free some space or choose another place',
    EDQUOT: 'disk quota exceeded: free some space or choose another place',
    ENOTDIR: 'a part of the path is a file, not a folder: choose another path',
    EEXIST: 'a file appeared where traces writes: rerun, with --force to replace it',
    ELOOP: 'too many symbolic links: give a real path',
  };
  throw new UserError(`${flag} ${given}: cannot write${where}: ${what[e.code] ?? `${e.code} ${e.message}`}`);
}

export class OutputDir {
  private readonly files: OutputFile[] = [];
  /** The temporary names in use, for `create` to keep them apart without a search through `files`. */
  private readonly tempPaths = new Set<string>();
  /** Staging folders made so far: a tree copy creates thousands of files in few folders. */
  private readonly stagingFolders = new Set<string>();
  /** Files named by a flag (`--manifest`), by final path: the flag and path the user named them with. */
  private readonly namedByFlag = new Map<string, { flag: string; given: string }>();
  /** Folders this run created above and at --out, deepest last: removed again if the run does not finish. */
  private readonly createdDirs: string[] = [];
  private readonly staging: string;
  /** Held while the run writes (see run-lock.ts); null where no lock could be made. */
  private lock: RunLock | null = null;
  private readonly release: () => void;
  private done = false;

  private constructor(
    readonly dir: string,
    private readonly given: string,
    private readonly options: OutputDirOptions,
  ) {
    this.staging = path.join(dir, `${TEMP_MARK}${process.pid}`);
    this.release = whileRunning(() => this.abort());
  }

  static open(dir: string, options: OutputDirOptions): OutputDir {
    try {
      const checked = checkOutputPath({ flag: '--out', given: dir, kind: 'folder', inputs: options.roots, force: options.force });
      const absolute = checked.absolute;
      if (checked.existing !== null) OutputDir.checkExisting(absolute, dir, options.force);
      const output = new OutputDir(absolute, dir, options);
      output.makeFolder(absolute);
      output.makeStaging();
      return output;
    } catch (error) {
      outputError('--out', dir, error);
    }
  }

  /**
   * The staging folder, locked before it takes its name: made under a name of its own, given
   * its lock, then renamed. A staging folder under its final name always has its lock (where
   * locks can be made), so no other run takes a run starting up for a dead one.
   */
  private makeStaging(): void {
    const starting = `${this.staging}-${randomBytes(4).toString('hex')}`;
    mkdirSync(starting);
    try {
      this.lock = RunLock.take(starting);
      renameSync(starting, this.staging);
    } catch (error) {
      this.lock?.release();
      rmSync(starting, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * An existing --out: staging folders no live run holds are removed (with --force also those
   * whose run cannot be known from here), then the folder is refused unless empty, or --force.
   */
  private static checkExisting(absolute: string, given: string, force: boolean): void {
    let entries = readdirSync(absolute);
    let interrupted = false;
    for (const entry of entries.filter((e) => e.startsWith(TEMP_MARK))) {
      const pid = pidOf(entry, TEMP_MARK);
      const holder = holderOf(path.join(absolute, entry), pid, (p) => !isDead(p));
      if (holder === 'live') {
        throw new UserError(`--out ${given}: another traces run (pid ${pid}) is writing there: wait for it, or choose another folder`);
      }
      if (holder === 'unknown' && !force) {
        throw new UserError(
          `--out ${given}: ${entry} may belong to a traces run still writing there (pid ${pid}, which traces cannot check from here): wait for it, or if no run is writing there, pass --force to remove it`,
        );
      }
      // A run killed outright left its staging folder: nothing in it was ever moved into place.
      rmSync(path.join(absolute, entry), { recursive: true, force: true });
      process.stderr.write(`traces: removed the temporary files of an interrupted run (pid ${pid}) from --out ${given}\n`);
      interrupted = true;
    }
    entries = entries.filter((e) => !e.startsWith(TEMP_MARK));
    if (entries.length === 0) return;
    const meta = lstatOrNull(path.join(absolute, META_DIR));
    if (meta !== null && meta.isSymbolicLink() && !force) {
      throw new UserError(`--out ${given}: ${path.join(absolute, META_DIR)} is a symbolic link; traces never writes through a link: remove it, or pass --force to replace the link (not what it points to)`);
    }
    if (meta !== null && meta.isDirectory()) {
      // A kill while the marker or the moving list was being written leaves its temporary name.
      for (const entry of readdirSync(path.join(absolute, META_DIR))) {
        const pid = /\.traces-partial-(\d+)$/.exec(entry)?.[1];
        if (pid !== undefined && isDead(Number(pid))) rmSync(path.join(absolute, '_traces', entry), { force: true });
      }
    }
    const incomplete = meta !== null && lstatOrNull(path.join(absolute, COMPLETE_MARKER)) === null;
    if (force) return;
    if (incomplete) {
      throw new UserError(`--out ${given} is incomplete, from an earlier interrupted run: rerun with --force to clean it, or choose another folder`);
    }
    throw new UserError(
      `--out ${given} is not empty${interrupted ? ' (an interrupted run\'s temporary files were removed)' : ''}: pass --force to replace the files this run writes, or choose an empty folder`,
    );
  }

  /** mkdir -p that remembers what it made, so an unfinished run can take it away again. */
  private makeFolder(folder: string): void {
    const missing: string[] = [];
    for (let at = folder; lstatOrNull(at) === null; at = path.dirname(at)) missing.unshift(at);
    for (const each of missing) {
      mkdirSync(each);
      this.createdDirs.push(each);
    }
  }

  /** Resolves a path inside the output folder, refusing one that would leave it. */
  resolve(relative: string): string {
    const full = path.resolve(this.dir, relative);
    if (!isInside(full, this.dir) || full === this.dir) throw new UserError(`refusing to write outside --out: ${relative}`);
    if (path.relative(this.dir, full).split(path.sep)[0]!.startsWith(TEMP_MARK)) throw new UserError(`refusing to write into traces' staging folder: ${relative}`);
    return full;
  }

  create(relative: string): OutputFile {
    const finalPath = this.resolve(relative);
    // Shards of one split start under the same name and are renamed when numbered: keep their temporary names apart.
    let tempPath = path.join(this.staging, path.relative(this.dir, finalPath));
    for (let n = 2; this.tempPaths.has(tempPath); n++) tempPath = path.join(this.staging, `${path.relative(this.dir, finalPath)}.${n}`);
    const folder = path.dirname(tempPath);
    if (!this.stagingFolders.has(folder)) {
      mkdirSync(folder, { recursive: true });
      this.stagingFolders.add(folder);
    }
    return this.track(new OutputFile(finalPath, tempPath, undefined, true));
  }

  /**
   * Two files of this run under one name (`--manifest DIR/training.jsonl`, or a name of its
   * bookkeeping): the second would replace the first. Refused before anything is moved, naming
   * the flag that chose the name.
   */
  private checkNamesDistinct(bookkeeping: readonly string[]): void {
    const seen = new Set(bookkeeping);
    for (const file of this.files) {
      if (!seen.has(file.finalPath)) {
        seen.add(file.finalPath);
        continue;
      }
      const clash = this.files.find((other) => other.finalPath === file.finalPath && this.namedByFlag.has(other.finalPath)) ?? file;
      const named = this.namedByFlag.get(clash.finalPath) ?? { flag: '--out', given: this.given };
      const where = isInside(file.finalPath, this.dir) ? `${path.relative(this.dir, file.finalPath)} is a file traces writes itself into --out ${this.given}` : `${file.finalPath} is named twice`;
      throw new UserError(`${named.flag} ${named.given}: ${where}: choose another path`);
    }
  }

  /** The error for a name taken while the run went on, naming the flag that named it. */
  private nameTakenError(final: string): UserError {
    const named = this.namedByFlag.get(final);
    return nameTakenError(named?.flag ?? '--out', named?.given ?? this.given, final);
  }

  /** A file named by a flag (e.g. `--manifest FILE`), written with the same checks and safety. */
  /** The list of dropped records: at `given` (--manifest) when the user names a place, else DIR/_traces/manifest.jsonl. */
  manifest(given: string | undefined): OutputFile {
    return given !== undefined ? this.createAt(given) : this.create(path.join(META_DIR, 'manifest.jsonl'));
  }

  createAt(finalPath: string, flag = '--manifest'): OutputFile {
    const absolute = path.resolve(finalPath);
    if (isInside(absolute, this.dir) && absolute !== this.dir) {
      const file = this.create(path.relative(this.dir, absolute));
      this.namedByFlag.set(file.finalPath, { flag, given: finalPath });
      return file;
    }
    try {
      const checked = checkOutputPath({ flag, given: finalPath, kind: 'file', inputs: this.options.roots, force: this.options.force });
      this.namedByFlag.set(checked.absolute, { flag, given: finalPath });
      const folder = path.dirname(checked.absolute);
      const prefix = `.${tempStem(path.basename(checked.absolute))}${TEMP_MARK}`;
      this.makeFolder(folder);
      for (const entry of readdirSync(folder)) {
        // One named with this process's pid is not yet this run's (it is made just below): a dead run's, whose pid this one has (pid 1 in a container).
        if (isStale(entry, prefix) || pidOf(entry, prefix) === process.pid) rmSync(path.join(folder, entry), { force: true });
      }
      return this.track(new OutputFile(checked.absolute, path.join(folder, `${prefix}${process.pid}`)));
    } catch (error) {
      outputError(flag, finalPath, error);
    }
  }

  private track(file: OutputFile): OutputFile {
    this.files.push(file);
    this.tempPaths.add(file.tempPath);
    return file;
  }

  /**
   * Moves every file into place, then writes the completion marker. The files of an earlier
   * run into this folder (listed in its marker) that this run does not write are removed
   * first, so a `--force` rerun leaves no stale shard beside the new ones.
   */
  commit(): string[] {
    try {
      for (const file of this.files) file.close();
      const inside = this.files.filter((f) => isInside(f.finalPath, this.dir));
      const relatives = inside.map((f) => path.relative(this.dir, f.finalPath));
      const marker = path.join(this.dir, COMPLETE_MARKER);
      const bookkeeping = [marker, path.join(this.dir, MOVING_LIST)];
      this.checkNamesDistinct(bookkeeping);
      // Without --force the folder was empty when the run began: whatever holds one of its names now came meanwhile (the user, a second run) and is left alone.
      if (!this.options.force) {
        const taken = [...bookkeeping, ...this.files.map((f) => f.finalPath)].find((name) => lstatOrNull(name) !== null);
        if (taken !== undefined) throw this.nameTakenError(taken);
      }
      const earlier = [...new Set([...listedFiles(this.dir, COMPLETE_MARKER), ...listedFiles(this.dir, MOVING_LIST)])];
      const prepared = new Set<string>();
      for (const file of inside) {
        const folder = path.dirname(file.finalPath);
        if (prepared.has(folder)) continue;
        this.prepareFolders(file.finalPath);
        prepared.add(folder);
      }
      // From here until the marker, the folder is incomplete.
      removeEntry(marker);
      this.prepareFolders(path.join(this.dir, MOVING_LIST));
      this.writeSmall(MOVING_LIST, [...new Set([...earlier, ...relatives])]);
      const now = new Set(relatives);
      for (const old of earlier) if (!now.has(old)) removeListed(this.dir, old);
      for (const file of this.files) {
        const info = lstatOrNull(file.finalPath);
        if (info !== null && info.isDirectory()) throw new UserError(`--out ${this.given}: ${file.finalPath} is a folder where traces writes a file: remove it or choose another folder`);
      }
      publishAll(
        this.files.map((file) => [file.tempPath, file.finalPath] as const),
        this.options.force,
        (final) => this.nameTakenError(final),
        () => pauseForTestSync('moving'),
      );
      this.writeSmall(COMPLETE_MARKER, relatives);
      removeEntry(path.join(this.dir, MOVING_LIST));
      rmSync(this.staging, { recursive: true, force: true });
      this.done = true;
      this.lock?.release();
      this.release();
      return this.files.map((f) => f.finalPath);
    } catch (error) {
      outputError('--out', this.given, error);
    }
  }

  /**
   * Makes the folders above a file inside --out, each a real folder: a link on the way is
   * refused, or with --force removed (the link itself, never what it points to).
   */
  private prepareFolders(finalPath: string): void {
    const parts = path.relative(this.dir, path.dirname(finalPath)).split(path.sep).filter((p) => p !== '');
    let at = this.dir;
    for (const part of parts) {
      at = path.join(at, part);
      const info = lstatOrNull(at);
      if (info !== null && info.isSymbolicLink()) {
        if (!this.options.force) {
          throw new UserError(`--out ${this.given}: ${at} is a symbolic link; traces never writes through a link: remove it, or pass --force to replace the link (not what it points to)`);
        }
        unlinkSync(at);
      } else if (info !== null && !info.isDirectory()) {
        throw new UserError(`--out ${this.given}: ${at} is a file where traces needs a folder: remove it or choose another folder`);
      } else if (info !== null) continue;
      mkdirSync(at);
    }
    // The file's own name: a link there is replaced by the rename, never written through.
    const own = lstatOrNull(finalPath);
    if (own !== null && own.isSymbolicLink() && !this.options.force) {
      throw new UserError(`--out ${this.given}: ${finalPath} is a symbolic link; traces never writes through a link: remove it, or pass --force to replace the link (not what it points to)`);
    }
  }

  /** A small file of lines, written to a temporary name and renamed, inside --out. */
  private writeSmall(relative: string, lines: readonly string[]): void {
    const final = path.join(this.dir, relative);
    const temp = path.join(path.dirname(final), `.${path.basename(final)}${TEMP_MARK}${process.pid}`);
    removeEntry(temp);
    const fd = openSync(temp, 'wx');
    try {
      writeAll(fd, lines.map((l) => `${l}\n`).join(''), final);
    } finally {
      closeSync(fd);
    }
    publishAll([[temp, final]], this.options.force, () => this.nameTakenError(final));
  }

  /** A file this run wrote that a target's `finish` replaced with others (the `sts` target's sessions): never published. */
  discard(file: OutputFile): void {
    file.close();
    const at = this.files.indexOf(file);
    if (at >= 0) this.files.splice(at, 1);
    this.tempPaths.delete(file.tempPath);
    rmSync(file.tempPath, { force: true });
  }

  /** Removes everything this run created: its temporary files, staging folder and the folders it made. */
  abort(): void {
    if (this.done) return;
    this.done = true;
    this.release();
    try {
      this.lock?.release();
    } catch {
      // Closed already: the folder goes below all the same.
    }
    for (const file of this.files) {
      try {
        file.close();
      } catch {
        // Already closed or never opened: the removal below is what matters.
      }
      try {
        unlinkSync(file.tempPath);
      } catch {
        // Already gone.
      }
    }
    try {
      rmSync(this.staging, { recursive: true, force: true });
    } catch {
      // Best effort.
    }
    for (const folder of [...this.createdDirs].reverse()) {
      try {
        rmdirSync(folder);
      } catch {
        // Not empty (something else wrote there) or gone: leave it.
      }
    }
  }
}
