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
import { canonicalValueText, sha256, writeArray } from '../canonical/canonical.js';
import type { TraceRecord } from '../record.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import { Column } from './columns.js';
import { KeyIndex } from './key-index.js';

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

function pushWords(digest: Buffer, into: number[]): void {
  for (let i = 0; i < 4; i++) into.push(digest.readUInt32BE(i * 4));
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
  const separator = writeMessages(record, sourceSpans);
  const bytes = sink.buffer;
  const count = elementEnds.length;
  if (count === 0) return null;
  let segmentStart = DIGEST_ROOM;
  let previous: Buffer | null = null;
  const digestTo = (end: number, into: number[]): void => {
    let from = segmentStart;
    if (previous !== null) {
      // The bytes before the segment are hashed already: the previous digest takes their place.
      from -= previous.length;
      previous.copy(bytes, from);
    }
    previous = sha256(bytes.subarray(from, end));
    segmentStart = end;
    pushWords(previous, into);
  };
  const prefixes: number[] = [];
  let assistant = bytes.indexOf(ASSISTANT, separator);
  for (let k = 0; k < count - 1 && assistant !== -1; k++) {
    const elementStart = k === 0 ? separator + 1 : elementEnds[k - 1] + 1;
    while (assistant !== -1 && assistant < elementStart) assistant = bytes.indexOf(ASSISTANT, assistant + 1);
    if (assistant !== -1 && assistant < elementEnds[k]) digestTo(elementEnds[k], prefixes);
  }
  const conversation: number[] = [];
  digestTo(elementEnds[count - 1], conversation);
  return { conversation, inputs: count - 1, prefixes };
}

export class TrajectoryCollapse {
  private readonly prefixes = new KeyIndex();
  private readonly inputLengths = new Column(Int32Array);
  private readonly conversations = new Column(Uint32Array, 4);
  private readonly hasConversation = new Column(Int32Array);
  private readonly digest = new Uint32Array(4);
  private groups = 0;

  /** Records the current winner of `group`, an ok record, by its digests. */
  observe(group: number, digests: TrajectoryDigests): void {
    if (group >= this.groups) {
      this.groups = group + 1;
      for (const column of [this.inputLengths, this.conversations, this.hasConversation]) column.ensure(this.groups);
    }
    this.conversations.data.set(digests.conversation, group * 4);
    this.hasConversation.data[group] = 1;
    this.inputLengths.data[group] = digests.inputs;
    for (let at = 0; at < digests.prefixes.length; at += 4) {
      for (let i = 0; i < 4; i++) this.digest[i] = digests.prefixes[at + i];
      const holder = this.prefixes.get(this.digest);
      if (holder === -1 || this.inputLengths.data[holder] < digests.inputs) this.prefixes.set(this.digest, group);
    }
  }
  /** Forgets the conversation of a group whose winner is no longer an ok record. */
  forget(group: number): void {
    if (group < this.groups) this.hasConversation.data[group] = 0;
  }

  /** The group whose winner contains `group`'s whole conversation in its inputs, or -1. */
  containerOf(group: number): number {
    if (group >= this.groups || this.hasConversation.data[group] === 0) return -1;
    const holder = this.prefixes.get(this.conversations.data.subarray(group * 4, group * 4 + 4));
    // A holder whose winner is no longer ok cannot stand for the trajectory.
    return holder === group || holder === -1 || this.hasConversation.data[holder] === 0 ? -1 : holder;
  }

  get byteSize(): number {
    return this.prefixes.byteSize + this.inputLengths.byteSize + this.conversations.byteSize + this.hasConversation.byteSize;
  }
}
