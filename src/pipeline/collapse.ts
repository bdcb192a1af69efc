/**
 * Trajectory collapse. An agent records one call per step and step k+1's input holds
 * step k's whole conversation, so keeping every step repeats the same assistant turns.
 * A kept ok record R gives way when another kept ok record S of the same program has
 * input messages that begin with all of R's messages, compared as JSON values (their
 * canonical bytes).
 *
 * Each winner contributes the digest of its whole conversation and the digests of its
 * input prefixes that end at an assistant turn (only those can equal a whole
 * conversation, which ends with the completion).
 */
import { ByteSink } from '../canonical/byte-sink.js';
import { canonicalValueText, lastArrayWrite, latin1Word, sha256Latin1, writeArray } from '../canonical/canonical.js';
import type { TraceRecord } from '../record.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import { Column } from './columns.js';
import { KeyIndex } from './key-index.js';
import { roomFor } from './dedupe.js';

const ASSISTANT = Buffer.from('"role":"assistant"');

/** What collapse needs of an ok record, computed where the record is read (possibly a worker). */
export interface TrajectoryDigests {
  /** Digest of the whole conversation (4 words). */
  conversation: ArrayLike<number>;
  /** Number of input messages (all but the completion). */
  inputs: number;
  /** Digests of the input prefixes that end at an assistant turn, 4 words each. */
  prefixes: ArrayLike<number>;
}

function pushWords(digest: string, into: number[]): void {
  for (let i = 0; i < 4; i++) into.push(latin1Word(digest, i));
}

const sink = new ByteSink();
const elementEnds: number[] = [];

/** Room before the program's name in `sink`, for a digest to sit right before a later segment. */
const DIGEST_ROOM = 32;

/**
 * `sink` as DIGEST_ROOM spare bytes, the program's name, a zero byte, and the canonical
 * messages array without its `[`; where each element ends in `elementEnds`. Returns where the zero byte is.
 */
function writeMessages(record: TraceRecord, sourceSpans: number[] | undefined): number {
  sink.reset();
  elementEnds.length = 0;
  sink.length = DIGEST_ROOM;
  sink.text(record.program);
  const separator = sink.length;
  if (record instanceof SynalinksRecord) {
    const [start, end] = record.span('messages')!;
    writeArray(record.raw, start, end, sink, false, elementEnds, sourceSpans);
  } else {
    sink.byte(0x5b);
    record.messages().forEach((message, i) => {
      if (i > 0) sink.byte(0x2c);
      sink.text(canonicalValueText(message));
      elementEnds.push(sink.length);
    });
    sink.byte(0x5d);
  }
  sink.buffer[separator] = 0;
  return separator;
}

/**
 * Digests of the conversation's prefixes that end at an assistant turn, and of the whole
 * conversation, as a chain: the first covers the program and the messages up to its end,
 * each next one the previous digest and the messages since. Equal messages (as JSON values)
 * of one program give equal chains, whichever record they are read from; each digest is one
 * native call over bytes hashed once, linear in the conversation. For a Synalinks record,
 * `sourceSpans` receives where each message starts and ends in its line (two numbers each).
 */
export function trajectoryDigests(record: TraceRecord, sourceSpans?: number[]): TrajectoryDigests | null {
  const generation = lastArrayWrite.generation;
  const separator = writeMessages(record, sourceSpans);
  // Leading messages equal, byte for byte, to those of the record digested just before (an agent's
  // step holds every earlier step's): their chain is that record's, already hashed.
  const reusable =
    lastArrayWrite.generation === generation + 1 && chained.generation === generation && record.program === chained.program ? lastArrayWrite.repeated : 0;
  const chain = reusable > 0 ? chained.digests : null;
  chained.digests = [];
  chained.generation = reusable === 0 && lastArrayWrite.generation === generation ? -1 : lastArrayWrite.generation;
  chained.program = record.program;
  const bytes = sink.buffer;
  const count = elementEnds.length;
  if (count === 0) return null;
  let segmentStart = DIGEST_ROOM;
  let previous: string | null = null;
  let reused = 0;
  const digestTo = (element: number, into: number[]): void => {
    const end = elementEnds[element];
    const known = chain !== null && element < reusable ? chainAt(chain, element, reused) : -1;
    if (known !== -1) {
      reused = known;
      previous = chain![known + 1] as string;
    } else {
      let from = segmentStart;
      if (previous !== null) {
        // The bytes before the segment are hashed already: the previous digest takes their place.
        from -= previous.length;
        for (let i = 0; i < previous.length; i++) bytes[from + i] = previous.charCodeAt(i);
      }
      previous = sha256Latin1(bytes.subarray(from, end));
    }
    segmentStart = end;
    chained.digests.push(element, previous);
    pushWords(previous, into);
  };
  const prefixes: number[] = [];
  let assistant = bytes.indexOf(ASSISTANT, separator);
  for (let k = 0; k < count - 1 && assistant !== -1; k++) {
    const elementStart = k === 0 ? separator + 1 : elementEnds[k - 1] + 1;
    while (assistant !== -1 && assistant < elementStart) assistant = bytes.indexOf(ASSISTANT, assistant + 1);
    if (assistant !== -1 && assistant < elementEnds[k]) digestTo(k, prefixes);
  }
  const conversation: number[] = [];
  digestTo(count - 1, conversation);
  return { conversation, inputs: count - 1, prefixes };
}

/**
 * The chain of the record digested last: (element index, digest) pairs in element order, the
 * generation of its `writeArray` (-1 when it wrote none) and its program.
 */
const chained: { digests: (number | string)[]; generation: number; program: string } = { digests: [], generation: -1, program: '' };

/** Where in `chain`, searched from `from` on, the digest ending at `element` is, or -1. */
function chainAt(chain: (number | string)[], element: number, from: number): number {
  for (let i = from; i < chain.length; i += 2) {
    if (chain[i] === element) return i;
    if ((chain[i] as number) > element) break;
  }
  return -1;
}

/** A trajectory digest's row in the digest partitions: the digest, the record's arrival, its input count, and (prefixes) its call_id. */
export const DigestRow = {
  digest: 0,
  seq: 4,
  /** Input messages of a prefix's record; `CONVERSATION` on a conversation's row. */
  inputs: 5,
  /** 4 words: a prefix's call_id as a uuid (zeros: in the side table by seq). */
  callId: 6,
  words: 10,
} as const;

/** `DigestRow.inputs` of a whole conversation's row. */
export const CONVERSATION = 0xffffffff;

/** A winner that gives way: its arrival, and the arrival and call_id of the winner whose inputs hold its conversation. */
export const GaveWayRow = { seq: 0, holderSeq: 1, holderCallId: 2, words: 6 } as const;

/** What `collapseJoin` holds of a prefix digest's holder, and hands to `gaveWay`: its arrival, input count and call_id. */
export const HolderRow = { seq: 0, inputs: 1, callId: 2, words: 6 } as const;

/**
 * Collapse as a join on disk, one digest partition at a time. The rows come from every ok
 * record met (winner or not, which the scan cannot know); `standing(seq)` says which are final
 * winners with digests. Within a partition, each prefix digest's holder is the standing winner
 * with the most inputs (ties: the earlier in file order, as rows come in arrival order); then
 * each standing winner's conversation gives way when a holder other than itself has it.
 * Returns the bytes the largest partition held.
 */
export function collapseJoin(
  digests: { partitions: number; rows(partition: number): number; read(partition: number): Iterable<Uint32Array>; close(partition: number): void },
  standing: (seq: number) => boolean,
  /** `holder[at]` is the holder's `HolderRow`. */
  gaveWay: (seq: number, holder: Uint32Array, at: number) => void,
): number {
  const digest = new Uint32Array(4);
  let peak = 0;
  for (let partition = 0; partition < digests.partitions; partition++) {
    const rows = digests.rows(partition);
    const holders = new KeyIndex(Math.ceil(roomFor(rows) * 1.5));
    const held = new Column(Uint32Array, HolderRow.words, roomFor(rows));
    /** The standing winners' conversations met on the way (digest, seq): joined once every holder is known. */
    const conversations = new Column(Uint32Array, 5, roomFor(rows));
    let count = 0;
    let conversationCount = 0;
    for (const row of digests.read(partition)) {
      const inputs = row[DigestRow.inputs];
      if (!standing(row[DigestRow.seq])) continue;
      if (inputs === CONVERSATION) {
        conversations.ensure(conversationCount + 1);
        conversations.data.set(row.subarray(DigestRow.digest, DigestRow.seq + 1), conversationCount++ * 5);
        continue;
      }
      for (let i = 0; i < 4; i++) digest[i] = row[DigestRow.digest + i];
      let holder = holders.get(digest);
      if (holder === -1) {
        holder = count++;
        holders.set(digest, holder);
        held.ensure(count);
      } else if (held.data[holder * HolderRow.words + HolderRow.inputs] >= inputs) continue;
      const at = holder * HolderRow.words;
      held.data[at + HolderRow.seq] = row[DigestRow.seq];
      held.data[at + HolderRow.inputs] = inputs;
      for (let i = 0; i < 4; i++) held.data[at + HolderRow.callId + i] = row[DigestRow.callId + i];
    }
    for (let c = 0; c < conversationCount && count > 0; c++) {
      const at = c * 5;
      const holder = holders.get(conversations.data.subarray(at, at + 4));
      const seq = conversations.data[at + 4];
      const holderAt = holder * HolderRow.words;
      if (holder !== -1 && held.data[holderAt + HolderRow.seq] !== seq) gaveWay(seq, held.data, holderAt);
    }
    peak = Math.max(peak, holders.byteSize + held.byteSize + conversations.byteSize);
    digests.close(partition);
  }
  return peak;
}
