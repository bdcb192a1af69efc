/** How an OTLP file is read: by lines, or as one document (kept apart from read.ts so the registry loads none of it). */
import { parseJsonText } from '../../canonical/json-value.js';
import { readHead } from '../head.js';
import type { TraceFile } from '../trace-file.js';

/** Whether the file is read line by line: `.jsonl`, or a file whose first line is a whole JSON value. */
export function byLines(file: TraceFile): boolean {
  if (file.path.toLowerCase().endsWith('.jsonl')) return true;
  const head = readHead(file.path);
  if (head === null) return true;
  const newline = head.indexOf(0x0a);
  if (newline === -1) return head.length < 64 * 1024;
  try {
    parseJsonText(head.subarray(0, newline));
    return true;
  } catch {
    return false;
  }
}
