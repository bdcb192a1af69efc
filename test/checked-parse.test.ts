/**
 * The export's second read builds a kept record's messages while it validates the line
 * (`parseCheckedValue` in place of the validating skip): it must refuse exactly what the skip
 * refuses, end where the skip ends, and build what `parseJson` builds, or a line changed
 * between the plan and the second read could be exported as another record. Checked on
 * record-shaped texts and on every cut and every one-byte change of them, on nesting at the
 * limit, and on a record read as the export reads it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isJsonNumber, parseCheckedValue, parseJson, parsedEnd } from '../src/canonical/json-value.js';
import { checkTextRules, isWhitespace, MAX_DEPTH, skipValue } from '../src/canonical/scan.js';
import { SynalinksRecord } from '../src/sources/synalinks-record.js';
import { synalinksLine } from './helpers.js';

const TEXTS = [
  '[{"role":"user","content":"Hi \\"there\\" \\u00e9 \\ud83d\\ude00"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":{"a":1.50,"b":-0,"c":1e300}}}]}]',
  '[{"role":"user","content":"Hi \\"there\\" \\u00e9 \\ud83d\\ude00"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":{"a":1.50,"b":-0,"c":1e300,"d":1e400}}}]}]',
  '[{"role":"tool","content":{"result":18446744073709551615,"log":[true,false,null,[],{}]},"tool_call_id":"c1"}]',
  '[ { "role" : "user" , "content" : [ { "type" : "text" , "text" : "é" } ] } ]',
  '[1,-0.5e+3,"x",[[[]]],{"a":{"b":{}}}]',
  '[]',
  '["\\\\","\\/","\\b\\f\\n\\r\\t"]',
];

/** What the skip says of [0, b.length) at depth: the end, or the error's class. */
function skipped(b: Buffer, depth: number): number | string {
  try {
    return skipValue(b, 0, b.length, depth);
  } catch (error) {
    return (error as Error).constructor.name;
  }
}

function parsed(b: Buffer, depth: number): { end: number | string; value?: unknown } {
  try {
    const value = parseCheckedValue(b, 0, b.length, depth);
    return { end: parsedEnd(), value };
  } catch (error) {
    return { end: (error as Error).constructor.name };
  }
}

/** Numbers compared by their recorded text. */
function plain(value: unknown): unknown {
  if (isJsonNumber(value)) return { number: value.valueOf() };
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

function agrees(b: Buffer, depth: number, label: string): void {
  try {
    checkTextRules(b);
  } catch {
    return; // The contract: the line passed checkTextRules first,
  }
  if (b.length > 0 && isWhitespace(b[0])) return; // and the value starts where its member's white space ends.
  const skip = skipped(b, depth);
  const parse = parsed(b, depth);
  assert.equal(typeof parse.end === 'number' ? parse.end : 'refused', typeof skip === 'number' ? skip : 'refused', `${label}: ${b.toString('latin1')}`);
  if (typeof skip === 'number') {
    assert.equal(parse.end, skip, label);
    assert.deepEqual(plain(parse.value), plain(parseJson(b, 0, skip)), label);
  }
}

describe('parseCheckedValue', () => {
  it('ends where the skip ends and builds what parseJson builds, on record-shaped texts with text after them', () => {
    for (const text of TEXTS) {
      for (const after of ['', ',"inputs_hash":"x"}', ' ]']) agrees(Buffer.from(text + after), 1, text + after);
    }
  });

  it('refuses what the skip refuses: every cut, and every byte replaced by each structural byte', () => {
    let checked = 0;
    for (const text of TEXTS) {
      const whole = Buffer.from(text);
      for (let cut = 0; cut < whole.length; cut++) agrees(whole.subarray(0, cut), 1, `cut ${cut}`);
      for (let at = 0; at < whole.length; at++) {
        for (const byte of [0x2c, 0x3a, 0x5d, 0x7d, 0x5b, 0x7b, 0x22, 0x20, 0x78, 0x31, 0x2d, 0x2e, 0x65, 0x6e, 0x74]) {
          const changed = Buffer.from(whole);
          changed[at] = byte;
          agrees(changed, 1, `byte ${at} = ${byte}`);
          checked++;
        }
      }
    }
    assert.ok(checked > 2000);
  });

  it('holds nesting to MAX_DEPTH counting the containers around the value, empty ones too', () => {
    for (const outer of [0, 1, 5]) {
      for (const depth of [MAX_DEPTH - outer - 1, MAX_DEPTH - outer, MAX_DEPTH - outer + 1]) {
        agrees(Buffer.from('['.repeat(depth) + ']'.repeat(depth)), outer, `arrays ${depth} in ${outer}`);
        agrees(Buffer.from('[{"a":'.repeat(depth / 2) + '{}' + '}]'.repeat(depth / 2)), outer, `objects ${depth} in ${outer}`);
      }
    }
    assert.equal(parsed(Buffer.from('['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH)), 0).end, MAX_DEPTH * 2);
    assert.equal(parsed(Buffer.from('['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH)), 1).end, 'JsonSyntaxError');
  });

  it('a record built with its messages parsed in validation holds what one parsed when asked holds, or is refused alike', () => {
    const line = synalinksLine({ index: 1, program: 'p', module: 'm', messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'ok', tool_calls: [] }] });
    const ref = { file: 'f.jsonl', line: 1, offset: 0 };
    const lazy = new SynalinksRecord(Buffer.from(line), ref);
    const eager = new SynalinksRecord(Buffer.from(line), ref, true);
    assert.deepEqual(plain(eager.messages()), plain(lazy.messages()));
    assert.equal(eager.callId, lazy.callId);
    // The last of two messages members counts, in both.
    const twice = line.replace('"messages":[', '"messages":[{"role":"user","content":"first"}],"messages":[');
    assert.deepEqual(plain(new SynalinksRecord(Buffer.from(twice), ref, true).messages()), plain(new SynalinksRecord(Buffer.from(twice), ref).messages()));
    // Damage inside the messages, at the same length: both refuse the line.
    const damaged = line.replace('"role":"assistant"', '"role";"assistant"');
    assert.throws(() => new SynalinksRecord(Buffer.from(damaged), ref));
    assert.throws(() => new SynalinksRecord(Buffer.from(damaged), ref, true));
  });
});
