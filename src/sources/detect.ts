/**
 * Which recorder wrote a file, from the shape of its content: the keys of its top-level
 * object (or of the first element of a top-level array, or of its first line), read from
 * the first bytes only. File names do not count: Ask writes JSON into `recording.yml`.
 */
import { open } from 'node:fs/promises';
import type { SourceKind } from '../record.js';
import { decodeString, skipString, skipValue, skipWhitespace } from '../canonical/scan.js';

export const SOURCE_KINDS: readonly SourceKind[] = ['synalinks', 'ask', 'klieo'];

const HEAD_BYTES = 64 * 1024;

/**
 * Top-level keys of the first object in `head`, in order, as far as the bytes go: a value
 * cut off by the end of the head still counts its key.
 */
export function headKeys(head: Buffer): string[] {
  const keys: string[] = [];
  let p = skipWhitespace(head, 0, head.length);
  if (head[p] === 0xef && head[p + 1] === 0xbb && head[p + 2] === 0xbf) p = skipWhitespace(head, p + 3, head.length);
  // A list of runs: look at its first element.
  if (head[p] === 0x5b) p = skipWhitespace(head, p + 1, head.length);
  if (head[p] !== 0x7b) return keys;
  p = skipWhitespace(head, p + 1, head.length);
  try {
    while (p < head.length && head[p] === 0x22) {
      const keyEnd = skipString(head, p, head.length);
      keys.push(decodeString(head, p, keyEnd));
      p = skipWhitespace(head, keyEnd, head.length);
      if (head[p] !== 0x3a) break;
      p = skipValue(head, skipWhitespace(head, p + 1, head.length), head.length);
      p = skipWhitespace(head, p, head.length);
      if (head[p] !== 0x2c) break;
      p = skipWhitespace(head, p + 1, head.length);
    }
  } catch {
    // The head ends inside a value: the keys so far are what we know.
  }
  return keys;
}

/** The recorder whose shape these top-level keys have, or null. */
export function kindOfKeys(keys: readonly string[]): SourceKind | null {
  const has = (k: string) => keys.includes(k);
  if (has('synalinks_version')) return 'synalinks';
  if (has('interactions') || (has('test') && has('recorded_at'))) return 'ask';
  if (has('run_log') || has('llm_io')) return 'klieo';
  if (has('run_id') && (has('steps') || has('agent') || has('status'))) return 'klieo';
  // A head cut inside the first value still shows the first key.
  if (keys.length === 1 && keys[0] === 'steps') return 'klieo';
  return null;
}

/** The recorder that wrote the file at `path`, from its first bytes; null when none matches. */
export async function detectSource(path: string): Promise<SourceKind | null> {
  let head: Buffer;
  const handle = await open(path, 'r').catch(() => null);
  if (handle === null) return null;
  try {
    const buffer = Buffer.allocUnsafe(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    head = buffer.subarray(0, bytesRead);
  } catch {
    return null;
  } finally {
    await handle.close();
  }
  return kindOfKeys(headKeys(head));
}
