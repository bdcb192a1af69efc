/** The reason every source gives a damaged line; apart from read.ts, which imports the registry of sources. */
import { parseJsonText } from '../canonical/json-value.js';
import { JsonSyntaxError, withEncodingHint } from '../canonical/scan.js';
import { lineTooLongReason, type Line } from './lines.js';
import { DamagedRecordError } from './synalinks-record.js';

/** Why a line is not a record; a last line with no newline is a crash mid-write. */
export function damageReason(error: unknown, terminated: boolean): string {
  const detail = error instanceof JsonSyntaxError || error instanceof DamagedRecordError ? error.message : String(error);
  return terminated ? detail : `truncated last line, no newline at end of file (${detail})`;
}

/**
 * A line parsed strictly (what orjson accepts), or why it is a damaged line: too long, or not
 * JSON, with a BOM or UTF-16 named; the one reading of a JSON line the line-based sources share.
 */
export function parsedLine(line: Line): { value: unknown } | { damage: string } {
  if (line.tooLong) return { damage: damageReason(lineTooLongReason(line.length), line.terminated) };
  try {
    return { value: parseJsonText(line.bytes) };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { damage: withEncodingHint(damageReason(error, line.terminated), line.bytes) };
  }
}
