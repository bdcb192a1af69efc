/**
 * Dedupe keys as 16-byte digests. The recorded hashes are sha256 already, so the default
 * key is each hash folded to 64 bits (`foldHex`); other keys hash what they cover.
 */
import { createHash } from 'node:crypto';
import { ByteSink } from '../canonical/byte-sink.js';
import { canonicalValueText, latin1Word, sha256Latin1, writeCanonical } from '../canonical/canonical.js';
import type { TraceRecord } from '../record.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import { foldHex } from '../canonical/fold-hex.js';

export const KEY_KINDS = ['inputs,config,module', 'inputs,config', 'inputs', 'conversation'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

/**
 * The key every command uses unless told otherwise. The recorded hashes cover the messages and
 * the LM config, never the module, its output schema, its tools or its sampling settings: a
 * FunctionCallingAgent's last tool step and its final structured answer share both hashes,
 * and `inputs,config` dropped every final answer as a duplicate of the tool step. So records
 * of different modules are never duplicates. The program belongs in it too: two programs
 * whose auto-named `generator` modules ask the same thing for different output schemas are
 * also one pair of hashes and one module name.
 */
export const DEFAULT_KEY: KeyKind = 'inputs,config,module';

/** What two records of one key share, in the words of --help, the drop gloss and the summaries. */
export const KEY_MEANING: Readonly<Record<KeyKind, string>> = {
  'inputs,config,module': 'same prompt and model config in the same program and module',
  'inputs,config': 'same prompt and model config in any module',
  inputs: 'same prompt',
  conversation: 'same messages, answer included',
};

/** The key kinds that ignore the program and module: a run with one of them counts what it merged across modules. */
export function mergesAcrossModules(kind: KeyKind): boolean {
  return kind === 'inputs,config' || kind === 'inputs';
}

/**
 * How keys are made, as `_traces/run.json` records it: 2 since the recorded hashes are folded
 * whole; 3 since `inputs,config,module` is the folded hashes mixed with the program and module.
 */
export const KEYS_VERSION = 3;

/** The first 16 bytes of a digest held as latin1 characters (`sha256Latin1`), as 4 words. */
function digestWords(digest: string, into: Uint32Array): Uint32Array {
  for (let i = 0; i < 4; i++) into[i] = latin1Word(digest, i);
  return into;
}

function hashOf(parts: (string | Uint8Array)[], into: Uint32Array): Uint32Array {
  const hash = createHash('sha256');
  for (const part of parts) {
    hash.update(part);
    hash.update('\0');
  }
  // 'binary' is Node's name for latin1.
  return digestWords(hash.digest('binary'), into);
}

/** The key of recorded hex hashes, each folded (two 64-bit halves, or the inputs hash alone to 128 bits); hashed when a hash is not 64 hex digits. */
function fromHexHashes(inputs: string, config: string | null, into: Uint32Array): Uint32Array {
  const folded = config === null ? foldHex(inputs, 4, into, 0) : foldHex(inputs, 2, into, 0) && foldHex(config, 2, into, 2);
  return folded ? into : hashOf([inputs, config ?? inputs], into);
}

/**
 * 4 words that stand for a program and module: mixed into the folded hashes (XOR keeps two
 * records of one module apart exactly when their hashes differ), and, for key kinds that ignore
 * the module, what tells a merge across modules. A program has few modules, so they are cached.
 */
const moduleWordsCache = new Map<string, Uint32Array>();
const MODULE_WORDS_CACHE_LIMIT = 4096;

let lastProgram = '';
let lastModule = '';
let lastWords: Uint32Array | null = null;

export function moduleWords(program: string, module: string): Uint32Array {
  // Records come a file at a time, and a file holds one module: most calls end here.
  if (lastWords !== null && program === lastProgram && module === lastModule) return lastWords;
  const name = `${program}\0${module}`;
  let words = moduleWordsCache.get(name);
  if (words === undefined) {
    if (moduleWordsCache.size >= MODULE_WORDS_CACHE_LIMIT) moduleWordsCache.clear();
    words = hashOf(['module', program, module], new Uint32Array(4));
    moduleWordsCache.set(name, words);
  }
  lastProgram = program;
  lastModule = module;
  lastWords = words;
  return words;
}

/** A 32-bit id of a program and module, never 0 (0 means none). */
export function moduleId(program: string, module: string): number {
  return moduleWords(program, module)[0] | 1;
}

function mixModule(record: TraceRecord, into: Uint32Array): Uint32Array {
  const words = moduleWords(record.program, record.module);
  into[0] ^= words[0];
  into[1] ^= words[1];
  into[2] ^= words[2];
  into[3] ^= words[3];
  return into;
}

const conversationSink = new ByteSink();

/** Writes a Synalinks record's canonical messages into `conversationSink`, from the recorded bytes. */
function writeConversation(record: SynalinksRecord): void {
  const [start, end] = record.span('messages')!;
  conversationSink.reset();
  writeCanonical(record.raw, start, end, conversationSink);
}

/** Canonical bytes of all messages, completion included: the same answer to the same prompt. */
export function conversationBytes(record: TraceRecord): Uint8Array {
  if (record instanceof SynalinksRecord) {
    writeConversation(record);
    return conversationSink.view();
  }
  return Buffer.from(canonicalValueText(record.messages()), 'utf8');
}

/** The `conversation` key of a conversation's canonical bytes (for callers that write them themselves). */
export function conversationKey(canonicalMessages: Uint8Array, into: Uint32Array = new Uint32Array(4)): Uint32Array {
  return hashOf([canonicalMessages], into);
}

/**
 * The `conversation` key of the canonical messages that fill `sink`, as `conversationKey`
 * computes it: the separator byte is added in the sink, so one native call hashes it all.
 */
export function conversationKeyInSink(sink: ByteSink, into: Uint32Array = new Uint32Array(4)): Uint32Array {
  sink.byte(0);
  const digest = sha256Latin1(sink.view());
  sink.length--;
  return digestWords(digest, into);
}

const recomputeSink = new ByteSink();

/**
 * The hashes a record's key is made of: as recorded, or, for a Synalinks record that recorded
 * none (null, absent, not a string: older writers, lines made by hand), recomputed from its
 * messages and config as Synalinks computes them. Otherwise every such record had one key, and
 * dedupe dropped all but one of them as duplicates, whatever their messages.
 */
export function hashesOf(record: TraceRecord): { inputs: string; config: string } {
  let inputs = record.inputsHash;
  let config = record.configHash;
  if ((inputs === '' || config === '') && record instanceof SynalinksRecord) {
    const recomputed = record.recomputeHashes(recomputeSink);
    if (inputs === '') inputs = recomputed.inputsHash;
    if (config === '') config = recomputed.configHash ?? '';
  }
  return { inputs, config };
}

/** Writes the record's key of the given kind into `into` (4 words) and returns it. */
export function keyOf(record: TraceRecord, kind: KeyKind, into: Uint32Array = new Uint32Array(4)): Uint32Array {
  // The hash keys of a Synalinks line come straight from its bytes when the hashes are plain hex.
  if (kind !== 'conversation' && record instanceof SynalinksRecord && record.hashKeyWords(kind === 'inputs' ? 'inputs' : 'inputs,config', into)) {
    return kind === 'inputs,config,module' ? mixModule(record, into) : into;
  }
  switch (kind) {
    case 'inputs,config': {
      const { inputs, config } = hashesOf(record);
      return fromHexHashes(inputs, config, into);
    }
    case 'inputs': {
      const { inputs } = hashesOf(record);
      return fromHexHashes(inputs, null, into);
    }
    case 'inputs,config,module': {
      const { inputs, config } = hashesOf(record);
      return mixModule(record, fromHexHashes(inputs, config, into));
    }
    case 'conversation':
      if (record instanceof SynalinksRecord) {
        writeConversation(record);
        return conversationKeyInSink(conversationSink, into);
      }
      return conversationKey(conversationBytes(record), into);
  }
}

export function keyHex(key: Uint32Array): string {
  return Array.from(key, (w) => w.toString(16).padStart(8, '0')).join('');
}
