/** A file discovery found, as every source reads it: apart from discover.ts, which imports the registry of sources. */
import type { SourceKind } from '../record.js';
import type { FileStamp } from './lines.js';

export interface TraceFile {
  /** Absolute path. */
  path: string;
  /** Path shown to users: relative to the current folder when inside it. */
  display: string;
  root: string;
  /** The recorder that wrote the file. */
  source: SourceKind;
  /** Bytes, as discovery found it: the reading plan covers these (a recorder may append more meanwhile). */
  size?: number;
  /** The file as discovery found it, which second reads check they still read (see `changedSince`). */
  stamp?: FileStamp;
  /**
   * Other files of the input set whose content the source joins to this file's as it reads it,
   * by what they hold (OTLP: `logs`, log records joined to the spans they were written in), set
   * by the source's `gather`; one object shared by the files it is set on.
   */
  companions?: Readonly<Record<string, readonly string[]>>;
}
