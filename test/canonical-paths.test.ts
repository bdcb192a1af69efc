/**
 * The canonical writer has two paths: plain objects (scalar values under keys without
 * escapes) are located first and copied once in key order; other objects are written as read
 * and reordered afterwards. Both must give the bytes orjson gives, whatever the input mixes:
 * unsorted and repeated keys, escapes in keys and values, unicode, numbers in every recorded
 * form, whitespace, nesting. Two references: `canonicalValueText` over the parsed value (an
 * independent writer that keeps number text), and Python's orjson for texts whose numbers are
 * in the form orjson writes them (orjson rewrites `1e5` as `100000.0`; recorders write what
 * orjson wrote, and the writer keeps recorded number text, as the spec says).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { ByteSink } from '../src/canonical/byte-sink.js';
import { canonicalize, canonicalValueText, writeArray, writeCanonical } from '../src/canonical/canonical.js';
import { parseJsonText } from '../src/canonical/json-value.js';
import { seededRandom } from './helpers.js';
import { hasOrjson, NO_ORJSON } from './strict-reference.js';


/** Keys as a recorder may write them: plain, escaped, unicode, look-alikes of each other. */
const KEYS = ['role', 'content', 'a', 'b', 'ab', 'a!', 'a"b', 'tool_calls', 'name', 'é', '！', '😀', 'z', ' ', 'A', 'aa', '\u2028', 'k\\ey', 'k\ney', '\u0000'];
/** String bodies, as JSON text: canonical escapes, escapes orjson writes differently, unicode. */
const STRING_BODIES = [
  'plain',
  '',
  'line\\nnext\\ttab',
  'quote \\" and \\\\ backslash',
  '\\u00e9t\\u00E9',
  '\\/slash',
  '\\u001f\\u0000\\u0008\\u000a\\b\\f\\r',
  '\\u2028\\u2029',
  '\\ud83d\\ude00 emoji',
  '😀 raw ！ é',
  'x'.repeat(100) + '\\n' + 'y'.repeat(80),
  '{\\"a\\": 1.0, \\"b\\": [1e5]}',
  '\\"tool_calls\\":[1]',
];
/** Numbers as orjson writes them (the orjson reference applies to these). */
const ORJSON_NUMBERS = ['0', '-1', '1.0', '153133.0', '1e16', '1e-7', '18446744073709551615', '-0.0', '3.2480113636363637', '1.5e300'];
/** Numbers in forms orjson would rewrite: the writer keeps their text, on either path. */
const OTHER_NUMBERS = ['1.5e+300', '1e5', '1E+2', '0.1e-7', '-0', '100000.00', '12345678901234567890123456789012345678'];

interface Shape {
  numbers: readonly string[];
  spaces: boolean;
}

function generate(next: () => number, shape: Shape, depth: number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const space = (): string => (shape.spaces && next() < 0.3 ? pick([' ', '\n', '\t', '  ', '\r\n']) : '');
  const r = next();
  if (depth > 4 || r < 0.35) {
    const s = next();
    if (s < 0.5) return `"${pick(STRING_BODIES)}"`;
    if (s < 0.85) return pick(shape.numbers);
    return pick(['true', 'false', 'null']);
  }
  if (r < 0.55) {
    const n = Math.floor(next() * 5);
    const items = Array.from({ length: n }, () => space() + generate(next, shape, depth + 1) + space());
    return `[${items.join(',')}]${space()}`;
  }
  // Objects: most plain (scalars only), some holding containers, some with repeated keys.
  const n = Math.floor(next() * 6);
  const members: string[] = [];
  const plain = next() < 0.6;
  for (let i = 0; i < n; i++) {
    const key = next() < 0.15 && members.length > 0 ? pick(KEYS.slice(0, 4)) : pick(KEYS);
    // Non-ASCII keys are sometimes written as escapes (a pair of them beyond U+FFFF).
    const keyText = JSON.stringify(key).replace(/[\u{80}-\u{10ffff}]/gu, (c) =>
      next() < 0.3 ? Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('') : c,
    );
    const value = plain ? generate(next, shape, 99) : generate(next, shape, depth + 1);
    members.push(`${space()}${keyText}${space()}:${space()}${value}${space()}`);
  }
  return `{${members.join(',')}}`;
}

function cases(seed: number, count: number, shape: Shape): string[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => {
    // Message lists, as the conversation hash sees them, and bare values.
    const messages = Array.from({ length: 1 + Math.floor(next() * 4) }, () => generate(next, shape, 1));
    return next() < 0.7 ? `[${messages.join(',')}]` : generate(next, shape, 0);
  });
}

/** Hand-picked objects at the edges between the two paths. */
const EDGES = [
  '{"role":"user","content":"a"}',
  '{"content":"a","role":"user"}',
  '{"b":1,"a":2,"b":3}',
  '{"role":"assistant","content":"","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":{"b":1.0,"a":1e5}}}]}',
  '{"a":1,"\\u0061":2}',
  '{"\\u0061":1,"a":2,"c":{"z":1,"y":[{"q":1,"p":2}]}}',
  '{"z":[],"y":{},"x":1,"x":{"b":2,"a":1}}',
  '{ "b" : "x\\/y" , "a" : 1E+2 }',
  '{"a":"\\u00e9","a":"\\n"}',
  '{"k":{"b":1,"a":2},"k":{"d":3,"c":4}}',
  '[{"role":"tool","content":{"result":1143.3,"log":"ok"},"tool_call_id":"c","name":"add"}]',
  `{${Array.from({ length: 40 }, (_, i) => `"k${(i * 17) % 40}":${i}`).join(',')}}`,
  `{${Array.from({ length: 40 }, (_, i) => `"k${(i * 17) % 40}":[${i}]`).join(',')},"k3":"last"}`,
];

describe('canonical writer: plain and reordering paths give the same bytes as the references', () => {
  it('agrees with canonicalValueText over the parsed value on 3,000 generated texts and the edge cases, numbers in any form', () => {
    const texts = [...EDGES, ...cases(1, 1500, { numbers: [...ORJSON_NUMBERS, ...OTHER_NUMBERS], spaces: false }), ...cases(2, 1500, { numbers: [...ORJSON_NUMBERS, ...OTHER_NUMBERS], spaces: true })];
    const wrong = texts.filter((t) => canonicalize(t).toString('utf8') !== canonicalValueText(parseJsonText(t)));
    assert.deepEqual(wrong.slice(0, 5), []);
  });

  it('agrees with orjson.dumps(orjson.loads(text), option=OPT_SORT_KEYS) on 2,000 generated texts', { skip: hasOrjson() ? false : NO_ORJSON }, () => {
    const texts = [...EDGES.filter((t) => !/1e5|1E\+2/.test(t)), ...cases(3, 1000, { numbers: ORJSON_NUMBERS, spaces: false }), ...cases(4, 1000, { numbers: ORJSON_NUMBERS, spaces: true })];
    const program = 'import sys,json,orjson\nprint(json.dumps([orjson.dumps(orjson.loads(t), option=orjson.OPT_SORT_KEYS).decode() for t in json.load(sys.stdin)]))';
    const result = spawnSync('python3', ['-c', program], { input: JSON.stringify(texts), encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(result.status, 0, result.stderr);
    const expected = JSON.parse(result.stdout) as string[];
    const wrong = texts.map((t, i) => ({ text: t, ours: canonicalize(t).toString('utf8'), orjson: expected[i] })).filter((c) => c.ours !== c.orjson);
    assert.deepEqual(wrong.slice(0, 5), []);
  });

  it('gives the same bytes inside a longer buffer, after other values, and in reused sinks', () => {
    // Entry points reset what they remember of a buffer: the same sink and a different buffer
    // at the same place must not see the last call's backslashes.
    const sink = new ByteSink(16);
    const texts = cases(5, 300, { numbers: ORJSON_NUMBERS, spaces: true });
    for (const text of texts) {
      const padded = Buffer.from(`  {"x":"\\n\\"",  "v": ${text}} `);
      const start = padded.indexOf(text);
      sink.reset();
      writeCanonical(padded, start, start + Buffer.byteLength(text), sink);
      assert.equal(sink.view().toString('utf8'), canonicalize(text).toString('utf8'));
      if (text.startsWith('[')) {
        const ends: number[] = [];
        sink.reset();
        writeArray(padded, start, start + Buffer.byteLength(text), sink, false, ends);
        assert.equal(sink.view().toString('utf8'), canonicalize(text).toString('utf8'));
        assert.equal(ends.length, (parseJsonText(text) as unknown[]).length);
      }
    }
  });
});
