/**
 * Training/validation split by group. Records that share a program and a
 * first user message (the steps of one agent run, retries of one input) must
 * land on the same side, or validation would score the model on inputs it
 * trained on. The side is a pure function of (seed, group), so it is
 * reproducible and does not move when records are added.
 */
import { createHash } from 'node:crypto';
import { canonicalValueText } from '../canonical/canonical.js';
import type { Message } from '../record.js';

export type Split = 'training' | 'validation';

/**
 * The program plus the first user message's content (canonical JSON when it is
 * not a string). A record without a user message groups by its program alone.
 */
export function groupKey(program: string, messages: readonly Message[]): string {
  const user = messages.find((m) => m.role === 'user');
  const content = user?.content;
  const text = typeof content === 'string' ? content : content === undefined ? '' : canonicalValueText(content);
  // NUL cannot occur in a folder name, so distinct (program, text) pairs give distinct keys.
  return `${program}\u0000${text}`;
}

export function assignSplit(group: string, seed: number | string, validationFraction: number): Split {
  if (!(validationFraction >= 0 && validationFraction <= 1)) {
    throw new RangeError(`validation fraction must be between 0 and 1, got ${validationFraction}`);
  }
  if (validationFraction === 0) return 'training';
  return groupFraction(group, seed) < validationFraction ? 'validation' : 'training';
}

/** sha256 of seed and group, first 8 bytes read as a fraction in [0, 1). */
export function groupFraction(group: string, seed: number | string): number {
  const digest = createHash('sha256').update(`${seed}\u0000${group}`, 'utf8').digest();
  // 53 bits: the most a double holds exactly, so the result is uniform and never 1.
  return Number(digest.readBigUInt64BE(0) >> 11n) / 2 ** 53;
}
