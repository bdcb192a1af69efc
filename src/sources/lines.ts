/**
 * Splits a file into lines on bytes, never decoding the file as one string: trace files can
 * exceed V8's string limit, and a single line can hold tens of MB of base64 image.
 */
import { open } from 'node:fs/promises';

const NEWLINE = 0x0a;
const CHUNK_SIZE = 4 << 20;

export interface Line {
  /** The line's bytes without the line ending (LF or CRLF) and without a leading BOM. */
  bytes: Buffer;
  /** 1-based. */
  number: number;
  /** Byte offset of the line's first byte in the file. */
  offset: number;
  /** False for a last line with no newline after it: a crash mid-write leaves one. */
  terminated: boolean;
}

function trimLine(bytes: Buffer, offset: number, isFirst: boolean): { bytes: Buffer; offset: number } {
  let start = 0;
  let end = bytes.length;
  if (isFirst && end >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  if (end > start && bytes[end - 1] === 0x0d) end--;
  return { bytes: bytes.subarray(start, end), offset: offset + start };
}

function isBlank(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/**
 * Yields the non-blank lines of a file in batches (one per chunk read), so callers pay
 * one await per few MB rather than per line. Each chunk is a fresh buffer: lines handed
 * out stay valid after the next read.
 */
export async function* readLineBatches(path: string, chunkSize = CHUNK_SIZE): AsyncGenerator<Line[]> {
  const handle = await open(path, 'r');
  try {
    let lineNumber = 0;
    let fileOffset = 0; // offset of the first byte of `pending`
    let pending: Buffer[] = [];
    let pendingLength = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(chunkSize);
      const { bytesRead } = await handle.read(chunk, 0, chunkSize, null);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, bytesRead);
      const batch: Line[] = [];
      let p = 0;
      let nl: number;
      while ((nl = data.indexOf(NEWLINE, p)) !== -1) {
        let raw: Buffer;
        if (pendingLength > 0) {
          pending.push(data.subarray(p, nl));
          raw = Buffer.concat(pending, pendingLength + nl - p);
          pending = [];
          pendingLength = 0;
        } else {
          raw = data.subarray(p, nl);
        }
        lineNumber++;
        const { bytes, offset } = trimLine(raw, fileOffset, lineNumber === 1);
        if (!isBlank(bytes)) batch.push({ bytes, number: lineNumber, offset, terminated: true });
        fileOffset += raw.length + 1;
        p = nl + 1;
      }
      if (p < data.length) {
        pending.push(data.subarray(p));
        pendingLength += data.length - p;
      }
      if (batch.length > 0) yield batch;
    }
    if (pendingLength > 0) {
      lineNumber++;
      const raw = Buffer.concat(pending, pendingLength);
      const { bytes, offset } = trimLine(raw, fileOffset, lineNumber === 1);
      if (!isBlank(bytes)) yield [{ bytes, number: lineNumber, offset, terminated: false }];
    }
  } finally {
    await handle.close();
  }
}
