/** The reason every source gives a damaged line; apart from read.ts, which imports the registry of sources. */
import { JsonSyntaxError } from '../canonical/scan.js';
import { DamagedRecordError } from './synalinks-record.js';

/** Why a line is not a record; a last line with no newline is a crash mid-write. */
export function damageReason(error: unknown, terminated: boolean): string {
  const detail = error instanceof JsonSyntaxError || error instanceof DamagedRecordError ? error.message : String(error);
  return terminated ? detail : `truncated last line, no newline at end of file (${detail})`;
}
