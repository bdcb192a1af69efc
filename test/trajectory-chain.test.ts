/**
 * Trajectory digests reuse the chain of the record digested just before for the messages the
 * two share byte for byte. A digest must not depend on what was digested before it: each is
 * compared with the same record's digests taken alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { writeCanonical } from '../src/canonical/canonical.js';
import { ByteSink } from '../src/canonical/byte-sink.js';
import { trajectoryDigests, type TrajectoryDigests } from '../src/pipeline/collapse.js';
import { SynalinksRecord } from '../src/sources/synalinks-record.js';
import { seededRandom, synalinksLine } from './helpers.js';

type Json = Record<string, unknown>;

function record(index: number, program: string, messages: Json[]): SynalinksRecord {
  return new SynalinksRecord(Buffer.from(synalinksLine({ index, program, module: 'gen', messages })), { file: 'f', line: index + 1, offset: 0 });
}

const plain = (d: TrajectoryDigests | null) => (d === null ? null : { conversation: Array.from(d.conversation), inputs: d.inputs, prefixes: Array.from(d.prefixes) });

/** An array of another caller written through the same canonical writer. */
function writeOther(text: string): void {
  const b = Buffer.from(text);
  writeCanonical(b, 0, b.length, new ByteSink());
}

/** The record's digests with nothing before them to reuse: another array is written first. */
function alone(r: SynalinksRecord): ReturnType<typeof plain> {
  writeOther(`[${JSON.stringify({ unrelated: Math.random() })}]`);
  return plain(trajectoryDigests(r));
}

describe('trajectory digests in sequence', () => {
  it('equal the digests of each record alone, over agent runs, interleaved programs and other arrays in between', () => {
    const random = seededRandom(7);
    const records: SynalinksRecord[] = [];
    let index = 0;
    for (let run = 0; run < 30; run++) {
      const program = random() < 0.3 ? 'other' : 'agent';
      const conversation: Json[] = [{ role: 'system', content: 'You are a calculator.' }, { role: 'user', content: `task ${run}` }];
      const steps = 1 + Math.floor(random() * 6);
      for (let step = 0; step < steps; step++) {
        const last = step === steps - 1;
        const answer: Json = last
          ? { role: 'assistant', content: `done ${run}` }
          : { role: 'assistant', content: '', tool_calls: [{ id: `c${run}-${step}`, type: 'function', function: { name: 'add', arguments: { a: step, b: 1.5 } } }] };
        // A step sent again without its last tool result, or with a user turn instead: a shorter shared prefix.
        if (random() < 0.2 && conversation.length > 3) records.push(record(index++, program, [...conversation.slice(0, -1), { role: 'user', content: 'again?' }, answer]));
        records.push(record(index++, program, [...conversation, answer]));
        conversation.push(answer);
        if (!last) conversation.push({ role: 'tool', tool_call_id: `c${run}-${step}`, content: String(step + 1.5) });
      }
      // The same conversation from another program digests differently: no reuse across programs.
      if (random() < 0.3) records.push(record(index++, program === 'agent' ? 'other' : 'agent', conversation.slice(0, 3)));
    }
    const expected = records.map(alone);
    let reusedSome = false;
    for (let pass = 0; pass < 2; pass++) {
      records.forEach((r, i) => {
        // In the second pass another array is written now and then between two records.
        if (pass === 1 && i % 7 === 3) writeOther('[{"role":"system","content":"You are a calculator."},{"role":"user","content":"task 1"}]');
        const got = plain(trajectoryDigests(r));
        assert.deepEqual(got, expected[i], `record ${i}, pass ${pass}`);
        if (i > 0 && got !== null && got.prefixes.length > 0) reusedSome = true;
      });
    }
    assert.ok(reusedSome);
    // Another caller's array between two records, equal to the second's first messages: what the
    // writer found repeated is with that array, not with the first record.
    const steps = (task: string): Json[] => [
      { role: 'system', content: 'You are a calculator.' },
      { role: 'user', content: task },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'add', arguments: { task } } }] },
      { role: 'tool', tool_call_id: 'c', content: '2' },
      { role: 'assistant', content: `done ${task}` },
    ];
    const [a, b] = [record(1000, 'agent', steps('a')), record(1001, 'agent', steps('b'))];
    const bAlone = alone(b);
    trajectoryDigests(a);
    writeOther(JSON.stringify(steps('b').slice(0, 3)));
    assert.deepEqual(plain(trajectoryDigests(b)), bAlone);
    // Conversations that hold earlier ones share their digests: the prefix a later step holds.
    const [first, second] = [expected[0]!, expected[1]!];
    if (second.inputs > first.inputs) assert.deepEqual(second.prefixes.slice(-4), first.conversation);
  });
});
