/**
 * What a source other than Synalinks gives the rest of traces: its name, how its files are
 * told from their first bytes, and how they are read. Each source is one folder under
 * `src/sources/` exporting one `Source`, listed once in `registry.ts`; no other module
 * names it. Synalinks files, read on bytes line by line in parallel, are the built-in case.
 */
import type { DamagedLine, TraceRecord } from '../record.js';
import type { TraceFile } from './trace-file.js';
import type { ByteRange } from './lines.js';
import type { SourceRun } from './source-run.js';

/** What one step of reading a file yields. */
export interface SourceBatch {
  records: TraceRecord[];
  damaged: DamagedLine[];
  /** Runs as the recorder describes them, when it does. */
  runs?: SourceRun[];
  /** Calls read but kept as no record (a second span of one call), by reason: counted. */
  skippedCalls?: Record<string, number>;
  /** Bytes of the file this batch covers, when the source reads by lines (`splits`). */
  bytes?: number;
}

export interface Source {
  /** The `--source` name and the `source` of its records: lower case, no spaces. */
  readonly kind: string;
  /** How users know it, for messages: `Ask recording`, `klieo run`. */
  readonly label: string;
  /**
   * Whether its reader describes the runs (`SourceBatch.runs`): else `traces runs` chains its
   * records as it does Synalinks records, a step whose input begins with another's whole conversation.
   */
  readonly describesRuns: boolean;
  /**
   * The recorder whose version its records carry (`TraceRecord.version`), as reports name it:
   * stats' `<name>` line and `<name>_versions`, browse's `<name>` field. Absent: its records
   * carry none, and no report shows a version for them.
   */
  readonly versionOf?: string;
  /**
   * Where its files lie under a home folder, when that is a hidden folder (`.claude/projects`):
   * a walk enters these, and only these, of the hidden folders it meets (discover.ts).
   */
  readonly homeFolders?: readonly string[];
  /**
   * Whether a file whose content starts with these top-level keys (of its first object, of
   * the first element of a top-level list, or of its first line) is this source's; `head`
   * is the file's first bytes, for a source that needs more than keys.
   */
  detect(keys: readonly string[], head: Buffer): boolean;
  /**
   * The file's records, in order; `ref.line` of each is its ordinal in the file (1-based),
   * stable across reads, which later passes select records by. Loaded on demand: most runs
   * read only Synalinks files, and every worker thread would pay for the modules.
   */
  read(file: TraceFile, range?: ByteRange): AsyncGenerator<SourceBatch>;
  /**
   * Whether this file is read by lines, so a work share reads only the lines that start in its
   * byte range (as Synalinks files are), `ref.line` of each record then being computable from
   * the range alone; else the share holding the file's start reads it whole. Absent: never.
   */
  splits?(file: TraceFile): boolean;
  /**
   * Once discovery has found every file, links files whose content belongs together across the
   * input set (`TraceFile.companions`: OTLP log records written in spans of another file).
   */
  gather?(files: TraceFile[]): void;
  /**
   * What the file holds when it gave no record and no damaged line (`3 spans, no LLM call among
   * them (…)`), for the message that no record was read; null when it cannot say. Absent: the
   * message says the file has no line.
   */
  describeUnread?(file: TraceFile): string | null;
}
