/**
 * sha256 of one buffer in one native call. A Hash object per value (createHash, update,
 * digest) costs more than hashing a few kilobytes: crypto.hash (Node 20.12 and later)
 * skips it.
 */
import crypto from 'node:crypto';

export const sha256: (data: Uint8Array) => Buffer =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha256', data, 'buffer')
    : (data) => crypto.createHash('sha256').update(data).digest();
