import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { canonicalize, canonicalValueHash, canonicalValueText, sha256Hex, writeArray } from '../src/canonical/canonical.js';
import { JsonNumber, parseJsonBytesByWalk, parseJsonText, writeJson } from '../src/canonical/json-value.js';
import { ByteSink } from '../src/canonical/byte-sink.js';
import { JsonSyntaxError, skipValue } from '../src/canonical/scan.js';
import { FIXTURES, seededRandom } from './helpers.js';

interface Vector {
  name: string;
  input: string;
  canonical: string;
  sha256: string;
}

const vectors = JSON.parse(readFileSync(path.join(FIXTURES, 'canonical-vectors.json'), 'utf8')) as { cases: Vector[] };

describe('canonical JSON matches orjson OPT_SORT_KEYS byte for byte', () => {
  for (const vector of vectors.cases) {
    it(vector.name, () => {
      const canonical = canonicalize(vector.input);
      assert.equal(canonical.toString('utf8'), vector.canonical);
      assert.equal(sha256Hex(canonical), vector.sha256);
    });
  }

  it('covers the number and key-order cases the spec names', () => {
    const all = vectors.cases.map((v) => v.input).join('\n');
    for (const needle of ['153133.0', '1e-7', '1e16', '18446744073709551615', '\u2028', '😀', '！']) {
      assert.ok(all.includes(needle), `vectors include ${needle}`);
    }
  });

  it('sorts keys by code point, not by UTF-16 unit', () => {
    // JavaScript's default sort puts U+1F600 (surrogates D83D…) before U+FF01.
    assert.equal(canonicalize('{"😀":1,"！":2}').toString(), '{"！":2,"😀":1}');
    assert.equal(canonicalValueText({ '😀': 1, '！': 2 }), '{"！":2,"😀":1}');
  });

  it('sorts objects of any size, nested ones inside reordered ones included', () => {
    // Small objects are sorted by insertion, objects of more than 32 keys by the built-in sort.
    for (const size of [2, 5, 32, 33, 120]) {
      const keys = Array.from({ length: size }, (_, i) => `k${String((i * 7919) % size).padStart(3, '0')}`);
      const input = `{${keys.map((k, i) => `"${k}":{"z":${i},"a":[{"y":1,"b":2}]}`).join(',')}}`;
      const expected = `{${[...keys].sort().map((k) => `"${k}":{"a":[{"b":2,"y":1}],"z":${keys.indexOf(k)}}`).join(',')}}`;
      assert.equal(canonicalize(input).toString(), expected, `${size} keys`);
    }
  });

  it('keeps number text verbatim where JSON.parse would lose it', () => {
    assert.equal(canonicalize('{"b":1.0,"a":9007199254740993}').toString(), '{"a":9007199254740993,"b":1.0}');
  });

  it('rewrites escapes the way orjson writes strings', () => {
    assert.equal(canonicalize('["\\u00e9\\/\\u001F\\u2028"]').toString(), '["é/\\u001f\u2028"]');
    assert.equal(canonicalize('["\\u0008\\u0009\\u000a\\u000c\\u000d"]').toString(), '["\\b\\t\\n\\f\\r"]');
  });

  it('rewrites any mix of escapes byte for byte as decoding and JSON.stringify would, keys sorted by their decoded text', () => {
    // The rewrite never makes a JavaScript string, so texts past V8's string length still hash.
    const pieces = ['a', 'é', '😀', '\\u00e9', '\\u00E9', '\\/', '\\"', '\\\\', '\\n', '\\u000A', '\\u001f', '\\u0000', '\\u007f',
      '\\ud83d\\ude00', '\\uD83D\\uDE00', '\\u2028', '\\uffff', '\\b', '\\f', '\\u0022', '\\u005c', 'x'.repeat(40)];
    let seed = 7;
    const pick = () => pieces[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % pieces.length];
    for (let n = 0; n < 400; n++) {
      const token = Array.from({ length: 1 + (n % 9) }, pick).join('');
      const key = Array.from({ length: 1 + (n % 4) }, pick).join('');
      const text = `{"${key}":"${token}","${pick()}":1,"m":"${token}"}`;
      const value = JSON.parse(text) as Record<string, unknown>;
      const expected = `{${Object.keys(value)
        .sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
        .map((k) => `${JSON.stringify(k)}:${JSON.stringify(value[k])}`)
        .join(',')}}`;
      assert.equal(canonicalize(text).toString(), expected, text);
    }
  });

  it('copies escapes that are already orjson\'s as they stand', () => {
    const text = '{"k\\"ey":"a\\"b\\\\c\\nd\\u001fe\\u0000","a":1}';
    assert.equal(canonicalize(text).toString(), '{"a":1,"k\\"ey":"a\\"b\\\\c\\nd\\u001fe\\u0000"}');
  });
});

describe('scanner rejects what is not JSON', () => {
  const bad = ['{"a":1', '{"a":tru}', '{"a":1,}', '[1 2]', '{"a" 1}', '"open', '{"a":-}', '{"a":1.}', '{"a":1e}'];
  for (const text of bad) {
    it(JSON.stringify(text), () => {
      const b = Buffer.from(text);
      assert.throws(() => {
        const end = skipValue(b, 0, b.length);
        if (end !== b.length) throw new JsonSyntaxError('trailing', end);
      }, JsonSyntaxError);
    });
  }

  it('finds the end of strings with escaped quotes and backslashes, short and long', () => {
    for (const body of ['a\\"b', 'x\\\\', 'y'.repeat(200) + '\\"' + 'z'.repeat(100) + '\\\\']) {
      const text = `"${body}",1`;
      const b = Buffer.from(text);
      assert.equal(skipValue(b, 0, b.length), body.length + 2);
    }
  });
});

describe('writeArray after an array with the same first elements', () => {
  /** What writeArray gives for `text`: the canonical bytes and where each element ends and sits. */
  function written(text: string, dropLast: boolean): { bytes: string; ends: number[]; spans: number[] } {
    const b = Buffer.from(`xx${text}yy`, 'utf8');
    const out = new ByteSink(8);
    out.text('prefix');
    const ends: number[] = [];
    const spans: number[] = [];
    writeArray(b, 2, b.length - 2, out, dropLast, ends, spans);
    return { bytes: out.view().toString('utf8'), ends, spans };
  }

  /** The same, written with nothing to copy from (another array written just before). */
  function fresh(text: string, dropLast: boolean): ReturnType<typeof written> {
    written('[{"unrelated":true}]', false);
    return written(text, dropLast);
  }

  it('copies what repeats and writes the rest: the same bytes, element ends and spans as written afresh', () => {
    // Elements as recorded (key order, spacing, escapes), numbers that are prefixes of others.
    const pool = [
      '{"role":"system","content":"You are terse."}',
      '{ "content" : "You are terse.", "role" : "system" }',
      '{"role":"user","content":"caf\\u00e9 \\/ 12"}',
      '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","function":{"arguments":"{\\"a\\":1.0}","name":"f"}}]}',
      '12',
      '123',
      '1.50',
      '"text"',
      '[1, [2, 3], {"b":1,"a":2}]',
      '{"a":1,"a":2}',
    ];
    let seed = 7;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    let elements: string[] = [];
    for (let round = 0; round < 400; round++) {
      // Mostly the last array with an element or two added (a trajectory), sometimes cut or changed.
      const move = next(6);
      if (move <= 2) elements = [...elements, pool[next(pool.length)]];
      else if (move === 3) elements = elements.slice(0, next(elements.length + 1));
      else if (move === 4 && elements.length > 0) elements = elements.map((e, i) => (i === elements.length - 1 ? pool[next(pool.length)] : e));
      else elements = [pool[next(pool.length)]];
      if (elements.length > 12) elements = elements.slice(-3);
      const spacing = [',', ', ', ' ,\n '][next(3)];
      const text = `[${next(2) === 0 ? '' : ' '}${elements.join(spacing)}]`;
      const dropLast = next(3) === 0;
      const copied = written(text, dropLast);
      assert.deepEqual(copied, fresh(text, dropLast), text);
      // And the bytes are the canonical text (the last element left out with dropLast).
      const canonical = canonicalize(text).toString('utf8');
      const expected = dropLast && elements.length > 0 ? canonicalize(`[${elements.slice(0, -1).join(',')}]`).toString('utf8') : canonical;
      assert.equal(copied.bytes, `prefix${expected}`, text);
      // Leave the just-written array as the one to copy from for the next round.
      written(text, dropLast);
    }
  });

  it('keeps no array over 1 MB to copy from, and writes the next one right', () => {
    const big = `["${'a'.repeat(1_100_000)}", 1]`;
    written(big, false);
    assert.equal(written(big, true).bytes, `prefix["${'a'.repeat(1_100_000)}"]`);
    assert.equal(written(`${big.slice(0, -1)}, 2]`, false).bytes, `prefix["${'a'.repeat(1_100_000)}",1,2]`);
  });

  it('does not take a number for the same when the last one was its prefix ([12] then [123])', () => {
    written('[12]', false);
    assert.equal(written('[123]', false).bytes, 'prefix[123]');
    written('[12, 5]', false);
    assert.equal(written('[12 ]', false).bytes, 'prefix[12]');
  });
});

describe('ByteSink.detachedCopy', () => {
  it('holds exactly the bytes written, in a backing store of their own, unchanged by later writes', () => {
    const sink = new ByteSink(4);
    sink.text('example line one\n');
    sink.text('x'.repeat(5000));
    const copy = sink.detachedCopy();
    assert.equal(copy.length, sink.length);
    // Structured clone copies a view's whole backing store: the copy's must be its own bytes only.
    assert.equal(copy.buffer.byteLength, sink.length);
    assert.ok(sink.buffer.length > sink.length, 'the sink grew past what it holds');
    assert.equal(copy.toString('utf8'), `example line one\n${'x'.repeat(5000)}`);
    sink.reset();
    sink.text('overwritten');
    assert.equal(copy.subarray(0, 7).toString('utf8'), 'example');
    const cloned = structuredClone(copy);
    assert.equal(cloned.buffer.byteLength, copy.length);
  });
});

/**
 * The canonical text of a parsed value as it was first written (entries sorted with a Buffer
 * per comparison): the reference the faster writer (issue 40's OTLP hashes) must match.
 */
function referenceValueText(value: unknown): string {
  if (value instanceof String) return value.valueOf();
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map(referenceValueText).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${referenceValueText(v)}`).join(',')}}`;
}

describe('canonicalValueText of a parsed value', () => {
  const KEYS = ['role', 'content', 'a', 'b', 'ab', 'A', '', '1', '10', '2', 'é', '！', '😀', '\ud800', 'x\udc00', '\uffff', '\ue000', '\u2028', 'k"ey', '__proto__', 'tool_calls'];
  const LEAVES: unknown[] = ['text', '', 'é😀\u2028"\\', '\ud800 lone', 0, -1.5, 1e21, NaN, Infinity, true, false, null, undefined, new JsonNumber('1.0'), new JsonNumber('18446744073709551615'), new String('2e5'), () => 1];

  function generate(random: () => number, depth: number): unknown {
    const pick = random();
    if (depth > 3 || pick < 0.4) return LEAVES[Math.floor(random() * LEAVES.length)];
    if (pick < 0.65) {
      const list: unknown[] = Array.from({ length: Math.floor(random() * 5) }, () => generate(random, depth + 1));
      if (random() < 0.1) list[list.length + 1] = 'after a hole';
      return list;
    }
    const object: Record<string, unknown> = {};
    const size = Math.floor(random() * 8);
    for (let i = 0; i < size; i++) Object.defineProperty(object, KEYS[Math.floor(random() * KEYS.length)], { value: generate(random, depth + 1), enumerable: true, configurable: true, writable: true });
    return object;
  }

  it('writes what the first writer wrote, and hashes its UTF-8 bytes, on 5,000 generated values', () => {
    const random = seededRandom(40);
    for (let n = 0; n < 5000; n++) {
      const value = generate(random, 0);
      const expected = referenceValueText(value);
      assert.equal(canonicalValueText(value), expected);
      assert.equal(canonicalValueHash(value), createHash('sha256').update(Buffer.from(expected, 'utf8')).digest('hex'));
    }
  });
});

describe('parseJsonText by the native parser', () => {
  /** What parseJsonText gave before it used the native parser: the validating walk of parseAt. */
  function referenceParse(text: string | Buffer): unknown {
    return parseJsonBytesByWalk(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
  }
  function outcome(parse: () => unknown): string {
    try {
      const value = parse();
      // writeJson keeps key order, own `__proto__` keys and every number's text, and tells a number's text from a string.
      return `ok ${writeJson(value)} ${value instanceof JsonNumber}`;
    } catch (error) {
      return `error ${error instanceof JsonSyntaxError} ${(error as Error).message}`;
    }
  }

  const NUMBERS = ['0', '-0', '1', '-1', '1.0', '0.5', '-0.5', '-0.0', '1e5', '1E+2', '5e-324', '0.227021615', '123456789012345', '1234567890123456', '18446744073709551615', '1796426166523000000', '3.2480113636363637', '1.5e300', '1e400', '01', '1.', '-'];
  const STRINGS = ['"a"', '""', '"key"', '"__proto__"', '"0"', '"10"', '"é😀"', '"\\ud83d\\ude00"', '"\\ud800"', '"tab\\there"', '"raw\ttab"', '"\\u0000"', '"\\/"', '"\\x"', '"\u2028"'];

  function generate(random: () => number, depth: number): string {
    const pick = random();
    const space = () => (random() < 0.1 ? ' \n\t\r'[Math.floor(random() * 4)] : '');
    if (depth > 4 || pick < 0.45) {
      const leaves = [...NUMBERS, ...STRINGS, 'true', 'false', 'null'];
      return leaves[Math.floor(random() * leaves.length)];
    }
    const size = Math.floor(random() * 5);
    if (pick < 0.7) return `[${space()}${Array.from({ length: size }, () => space() + generate(random, depth + 1) + space()).join(',')}]`;
    return `{${space()}${Array.from({ length: size }, () => `${STRINGS[Math.floor(random() * 6)]}${space()}:${space()}${generate(random, depth + 1)}`).join(',')}${space()}}`;
  }

  it('builds what the validating walk builds, and refuses what it refuses with its message, on 20,000 generated texts and their damaged copies', () => {
    const random = seededRandom(4040);
    let native = 0;
    for (let n = 0; n < 20000; n++) {
      let text = generate(random, 0);
      if (random() < 0.2) {
        const at = Math.floor(random() * (text.length + 1));
        text = random() < 0.5 ? text.slice(0, at) : text.slice(0, at) + ['\ud800', '\u0001', '}', ',', '"', '\\', '\ufeff', ' x'][Math.floor(random() * 8)] + text.slice(at);
      }
      const bytes = Buffer.from(text, 'utf8');
      for (const input of [text, bytes]) {
        const expected = outcome(() => referenceParse(input));
        assert.equal(outcome(() => parseJsonText(input)), expected, JSON.stringify(text));
        if (expected.startsWith('ok')) native++;
      }
    }
    assert.ok(native > 10000, `${native} texts parsed`);
  });

  it('keeps nesting to the strict limit and reads deep texts as before', () => {
    for (const depth of [1023, 1024, 1025]) {
      const text = '['.repeat(depth) + '1.0,2' + ']'.repeat(depth);
      const plain = '['.repeat(depth) + '2' + ']'.repeat(depth);
      // An empty container opens a level too (the one-pass check counts it before it looks inside).
      const empty = '['.repeat(depth - 1) + '{}' + ']'.repeat(depth - 1);
      const member = '{"a":'.repeat(depth - 1) + '[]' + '}'.repeat(depth - 1);
      for (const input of [text, plain, empty, member]) assert.equal(outcome(() => parseJsonText(input)), outcome(() => referenceParse(input)), `${depth}: ${input.slice(0, 12)}`);
    }
  });

  it('refuses bytes that are not UTF-8 as the walk does, wherever they stand', () => {
    const random = seededRandom(2028);
    // Overlong, encoded surrogate, past U+10FFFF, cut sequences, a stray continuation byte.
    const bad = [[0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xff]];
    let refused = 0;
    for (let n = 0; n < 3000; n++) {
      const bytes = Buffer.from(generate(random, 0), 'utf8');
      const at = Math.floor(random() * (bytes.length + 1));
      const input = Buffer.concat([bytes.subarray(0, at), Buffer.from(bad[n % bad.length]), bytes.subarray(at)]);
      const expected = outcome(() => referenceParse(input));
      assert.equal(outcome(() => parseJsonText(input)), expected);
      if (expected.startsWith('error')) refused++;
    }
    assert.equal(refused, 3000);
  });
});
