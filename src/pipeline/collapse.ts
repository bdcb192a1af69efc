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
import { createHash } from 'node:crypto';
import { ByteSink } from '../canonical/byte-sink.js';
import { canonicalValueText, writeArray } from '../canonical/canonical.js';
import type { TraceRecord } from '../record.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import { Column } from './columns.js';
import { KeyIndex } from './key-index.js';

const ASSISTANT = Buffer.from('"role":"assistant"');

function digestInto(program: string, bytes: Uint8Array, end: number, into: Uint32Array, at: number): void {
  const digest = createHash('sha256').update(program).update('\0').update(bytes.subarray(1, end)).digest();
  for (let i = 0; i < 4; i++) into[at + i] = digest.readUInt32BE(i * 4);
}

export class TrajectoryCollapse {
  private readonly prefixes = new KeyIndex();
  private readonly inputLengths = new Column(Int32Array);
  private readonly conversations = new Column(Uint32Array, 4);
  private readonly hasConversation = new Column(Int32Array);
  private readonly sink = new ByteSink();
  private readonly elementEnds: number[] = [];
  private readonly digest = new Uint32Array(4);
  private groups = 0;

  /** Canonical messages array in `sink`, with where each element ends. */
  private writeMessages(record: TraceRecord): void {
    this.sink.reset();
    this.elementEnds.length = 0;
    if (record instanceof SynalinksRecord) {
      const [start, end] = record.span('messages')!;
      writeArray(record.raw, start, end, this.sink, false, this.elementEnds);
      return;
    }
    this.sink.byte(0x5b);
    record.messages().forEach((message, i) => {
      if (i > 0) this.sink.byte(0x2c);
      this.sink.text(canonicalValueText(message));
      this.elementEnds.push(this.sink.length);
    });
    this.sink.byte(0x5d);
  }

  /** Records the current winner of `group` (an ok record). */
  observe(group: number, record: TraceRecord): void {
    if (group >= this.groups) {
      this.groups = group + 1;
      for (const column of [this.inputLengths, this.conversations, this.hasConversation]) column.ensure(this.groups);
    }
    this.writeMessages(record);
    const bytes = this.sink.buffer;
    const ends = this.elementEnds;
    const count = ends.length;
    if (count === 0) return;
    digestInto(record.program, bytes, ends[count - 1], this.conversations.data, group * 4);
    this.hasConversation.data[group] = 1;
    const inputs = count - 1;
    this.inputLengths.data[group] = inputs;
    for (let k = 0; k < inputs; k++) {
      const elementStart = k === 0 ? 1 : ends[k - 1] + 1;
      const at = bytes.indexOf(ASSISTANT, elementStart);
      if (at === -1 || at >= ends[k]) continue;
      digestInto(record.program, bytes, ends[k], this.digest, 0);
      const holder = this.prefixes.get(this.digest);
      if (holder === -1 || this.inputLengths.data[holder] < inputs) this.prefixes.set(this.digest, group);
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
