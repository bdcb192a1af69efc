/**
 * Our pre-tokenizer against the encodings' own regexes (read as tiktoken reads them), and our
 * token counts against tiktoken's (the WASM build of OpenAI's reference), on random text built from the characters each regex alternative turns on
 * and on the texts of the samples.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { get_encoding } from 'tiktoken';
import { PieceCounts } from '../src/targets/piece-counts.js';
import { PieceSplitter, referenceSplitRegex, type PieceGrammar } from '../src/targets/token-pieces.js';
import { loadTokenCounter, type EncodingName } from '../src/targets/tokens.js';
import { SAMPLES } from './helpers.js';

const GRAMMARS: [PieceGrammar, RegExp, EncodingName][] = [
  ['o200k', referenceSplitRegex(O200K_TOKEN_SPLIT_REGEX), 'o200k_base'],
  ['cl100k', referenceSplitRegex(CL100K_TOKEN_SPLIT_REGEX), 'cl100k_base'],
];

/**
 * Every class the regexes distinguish: each kind of whitespace (Unicode White_Space holds
 * U+00A0, U+2028, U+3000 and U+0085 but not U+FEFF, unlike JavaScript's \s), the contraction letters in both cases, digits of every
 * kind (Arabic-Indic, Roman numeral, superscript), symbols (the slash o200k treats apart),
 * lowercase, uppercase, titlecase, modifier and other letters, combining and spacing marks,
 * format characters, and astral characters and a lone surrogate, which hand the decision to the regex.
 */
const ALPHABET = [
  ' ', ' ', ' ', '\t', '\n', '\r', '\v', '\f', "'", 's', 'S', 'l', 'L', 'v', 'V', 'e', 'E', 'r', 'R', 'd', 'm', 't', 'T',
  'A', 'a', 'z', 'Z', '0', '1', '9', '/', '.', '!', '-', '"', '{', '\x00', '\x1f', '\x7f',
  '\u00a0', 'é', 'É', '中', '😀', '\u0301', '١', '\u2028', '\u3000', '\ud800', '\u01c5', '\u02b0', 'ß',
  'Ж', 'ж', 'λ', 'Ω', 'ع', '한', 'क', '\u093f', '\u0903', 'Ⅻ', '²', '\u0085', '\u200b', '\ufeff', '\u00ad', '\u2060', '\u200d', '€', '—', '𝐀',
];

function randomTexts(count: number, seed: number): string[] {
  let state = seed;
  const next = (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state % n;
  };
  return Array.from({ length: count }, () => {
    let text = '';
    for (let i = next(28); i > 0; i--) text += ALPHABET[next(ALPHABET.length)];
    return text;
  });
}

/** Message texts of the bundled samples: prose, JSON, code, tool arguments. */
function sampleTexts(): string[] {
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(walk);
  };
  for (const entry of readdirSync(SAMPLES, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.jsonl')) continue;
    for (const line of readFileSync(join(entry.parentPath, entry.name), 'utf8').split('\n')) {
      try {
        walk((JSON.parse(line) as { messages?: unknown }).messages);
      } catch {
        // The damaged sample line.
      }
    }
  }
  return texts;
}

function pieces(splitter: PieceSplitter, text: string): string[] {
  const out: string[] = [];
  splitter.split(text, (start, end) => out.push(text.slice(start, end)));
  return out;
}

describe('PieceSplitter', () => {
  for (const [grammar, regex] of GRAMMARS) {
    it(`${grammar}: splits 30,000 random texts exactly as the regex does`, () => {
      const splitter = new PieceSplitter(grammar, regex);
      let checked = 0;
      for (const text of randomTexts(30_000, grammar === 'o200k' ? 7 : 11)) {
        const expected = [...text.matchAll(regex)].map((m) => m[0]);
        assert.deepEqual(pieces(splitter, text), expected, JSON.stringify(text));
        checked++;
      }
      assert.equal(checked, 30_000);
    });

    it(`${grammar}: splits the samples' texts exactly as the regex does`, () => {
      const splitter = new PieceSplitter(grammar, regex);
      const texts = sampleTexts();
      assert.ok(texts.length > 100);
      for (const text of texts) assert.deepEqual(pieces(splitter, text), [...text.matchAll(regex)].map((m) => m[0]));
    });
  }

  for (const [grammar, regex] of GRAMMARS) {
    it(`${grammar}: every character of the Basic Multilingual Plane, in the contexts its class matters in`, () => {
      const splitter = new PieceSplitter(grammar, regex);
      let checked = 0;
      for (let c = 0; c < 0x10000; c++) {
        if (c >= 0xd800 && c <= 0xdfff) continue;
        const ch = String.fromCharCode(c);
        for (const text of [ch + ch, `a${ch}`, `${ch}a`, ` ${ch}`, `A${ch}b`, `${ch}1`, `'${ch}`, `AB${ch}${ch}x`]) {
          const expected = [...text.matchAll(regex)].map((m) => m[0]);
          const actual = pieces(splitter, text);
          if (actual.length !== expected.length || actual.some((piece, k) => piece !== expected[k])) {
            assert.deepEqual(actual, expected, `U+${c.toString(16).padStart(4, '0')} in ${JSON.stringify(text)}`);
          }
          checked++;
        }
      }
      assert.equal(checked, (0x10000 - 0x800) * 8);
    });
  }

  it('o200k: plain ASCII (words, digits, symbol runs: read without the classes) meeting every BMP character', () => {
    const [, regex] = GRAMMARS[0];
    const splitter = new PieceSplitter('o200k', regex);
    let checked = 0;
    for (let c = 0x80; c < 0x10000; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCharCode(c);
      // Where the ASCII path must stop and hand over: after letters of each case, a leading space
      // or symbol, one to three digits, a symbol run and its tail, a contraction, one space.
      for (const text of [`ab${ch}`, `AB${ch}`, `ABc${ch}`, ` x${ch}`, `"x${ch}`, `1${ch}`, `12${ch}`, `123${ch}`, `!${ch}`, ` !${ch}`, `.\n${ch}`, `x'${ch}`, `x's${ch}`, `x'l${ch}`, ` 1${ch}`, `"${ch}x`]) {
        const expected = [...text.matchAll(regex)].map((m) => m[0]);
        const actual = pieces(splitter, text);
        if (actual.length !== expected.length || actual.some((piece, k) => piece !== expected[k])) {
          assert.deepEqual(actual, expected, `U+${c.toString(16).padStart(4, '0')} in ${JSON.stringify(text)}`);
        }
        checked++;
      }
    }
    assert.equal(checked, (0x10000 - 0x80 - 0x800) * 16);
  });

  it('o200k: 20,000 random texts of mostly plain ASCII prose, code and JSON, with some past ASCII', () => {
    const [, regex] = GRAMMARS[0];
    const splitter = new PieceSplitter('o200k', regex);
    const words = ['the', ' The', ' HTTPServer', 'isn', "'t", "'S", "'LL", "'ve", ' 2024', '7', '{"', '":', '",', ' "', '.\n', '\n\n', '  ', '/', '//', '\t', ' -', ':\n', '\r\n', ' ', "'", '\\n', 'x1', '$5'];
    const past = ['é', '\u0301', '١', '²', '—', '€', '中', '😀', '\ud800', '\u00a0', '\u3000', '\u0085', '\ufeff', 'ſ', 'K'];
    let state = 29;
    const next = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
      return state % n;
    };
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      for (let i = next(24); i > 0; i--) text += next(8) === 0 ? past[next(past.length)] : words[next(words.length)];
      assert.deepEqual(pieces(splitter, text), [...text.matchAll(regex)].map((m) => m[0]), JSON.stringify(text));
    }
  });

  it('the cases each alternative turns on', () => {
    const o = new PieceSplitter('o200k', GRAMMARS[0][1]);
    const c = new PieceSplitter('cl100k', GRAMMARS[1][1]);
    assert.deepEqual(pieces(o, "HELLO world's end"), ['HELLO', " world's", ' end']);
    assert.deepEqual(pieces(o, "Don'T helloWorld"), ["Don'T", ' hello', 'World']);
    assert.deepEqual(pieces(c, "Don'T helloWorld"), ['Don', "'T", ' helloWorld']);
    assert.deepEqual(pieces(o, '12345 x'), ['123', '45', ' x']);
    assert.deepEqual(pieces(o, 'a  \n\n  b'), ['a', '  \n\n', ' ', ' b']);
    assert.deepEqual(pieces(o, '!!/\n/x'), ['!!/\n/', 'x']);
    assert.deepEqual(pieces(c, '!!/\n/x'), ['!!/\n', '/x']);
    assert.deepEqual(pieces(o, 'x   '), ['x', '   ']);
    assert.deepEqual(pieces(o, 'café naïve'), ['café', ' naïve']);
    // U+FEFF is a format character, not whitespace: it leads a word as any symbol does.
    assert.deepEqual(pieces(o, 'hello\ufeff world'), ['hello', '\ufeff', ' world']);
    assert.deepEqual(pieces(o, '\ufeffusing'), ['\ufeffusing']);
    assert.deepEqual(pieces(c, 'a\u0085 b'), ['a', '\u0085', ' b']);
  });
});

/** Every format character (Cf) and every whitespace character of either definition, astral ones included. */
function formatAndSpaceCharacters(): string[] {
  const out: string[] = [];
  for (let c = 0; c < 0x110000; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const ch = String.fromCodePoint(c);
    if (/[\p{Cf}\p{White_Space}\s]/u.test(ch)) out.push(ch);
  }
  return out;
}

describe('token counts', () => {
  it("U+FEFF: the issue's table, equal to tiktoken's", async () => {
    const o = await loadTokenCounter('o200k_base');
    assert.equal(o.count('\ufeff'), 1);
    assert.equal(o.count('\ufeff\ufeff'), 1);
    assert.equal(o.count('hello\ufeff world'), 3);
  });

  for (const [, , encoding] of GRAMMARS) {
    it(`${encoding}: equal to tiktoken's on every format and space character in context, random mixes and sample texts`, async () => {
      const counter = await loadTokenCounter(encoding);
      const reference = get_encoding(encoding);
      try {
        const special = formatAndSpaceCharacters();
        assert.ok(special.length > 150);
        const texts = [...randomTexts(3000, 5), ...sampleTexts(), 'see <|endoftext|> and <|im_start|>user', ' '.repeat(100), 'x'.repeat(200)];
        for (const ch of special) {
          texts.push(ch, ch + ch, `a${ch}b`, ` ${ch}x`, `hello${ch} world`, `${ch}using`, `!${ch}!`, `12${ch}3`, `A${ch}`, `x\n${ch}\n`, `${ch}  y`, `${ch}\n\n`, `${ch}//`);
        }
        // Random mixes of those characters with words, digits, punctuation and emoji.
        let state = 99;
        const next = (n: number) => (state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff) % n;
        const parts = [...special, 'the', ' Word', 'naïve', '42', '!', '/', '\n', ' ', '😀', '中文', "'s"];
        for (let i = 0; i < 3000; i++) {
          let text = '';
          for (let k = next(12); k > 0; k--) text += parts[next(parts.length)];
          texts.push(text);
        }
        let total = 0;
        for (const text of texts) {
          const expected = reference.encode(text, [], []).length;
          assert.equal(counter.count(text), expected, JSON.stringify(text));
          total += expected;
        }
        assert.ok(total > 10_000);
      } finally {
        reference.free();
      }
    });
  }
});

describe('a piece of millions of characters', () => {
  it('is counted in slices, as a run of short pieces would be: 250 MB of one letter made an array V8 cannot hold', { timeout: 60_000 }, async () => {
    for (const encoding of ['o200k_base', 'cl100k_base'] as EncodingName[]) {
      const counter = await loadTokenCounter(encoding);
      // One piece for the split regex; distinct letters, so no slice repeats one already counted.
      const letters = 'abcdefghijklmnopqrstuvwxyz';
      const run = Array.from({ length: 1 << 20 }, (_, i) => letters[(i * 7 + (i >> 5)) % 26]).join('');
      const sliced = Array.from({ length: run.length / 4096 }, (_, k) => counter.count(run.slice(k * 4096, (k + 1) * 4096))).reduce((a, b) => a + b, 0);
      assert.equal(counter.count(run), sliced, encoding);
      assert.ok(sliced > run.length / 16 && sliced < run.length, encoding);
    }
  });
});

describe('PieceCounts', () => {
  it('remembers each piece once, and starts over when full without changing any count', () => {
    let calls = 0;
    const counts = new PieceCounts((piece) => {
      calls++;
      return piece.length % 5;
    });
    const text = 'alpha beta alpha';
    assert.equal(counts.count(text, 0, 5), 0);
    assert.equal(counts.count(text, 11, 16), 0);
    assert.equal(calls, 1);
    assert.equal(counts.count(text, 5, 10), 0); // ' beta' is another piece
    assert.equal(calls, 2);
    // 100,000 distinct pieces overflow the table (65,536 entries) at least once.
    const many = Array.from({ length: 100_000 }, (_, i) => `w${i}`).join('');
    let offset = 0;
    for (let i = 0; i < 100_000; i++) {
      const length = `w${i}`.length;
      assert.equal(counts.count(many, offset, offset + length), length % 5);
      offset += length;
    }
    assert.equal(calls, 100_002);
    // Growing keeps every entry: 40,000 distinct pieces (the table doubles from 4,096 slots five
    // times) are each counted once, however often they are asked for again after each doubling.
    const grown = new PieceCounts((piece) => {
      calls++;
      return piece.length % 7;
    });
    const distinct = Array.from({ length: 40_000 }, (_, i) => `p${i}`);
    const joined = distinct.join('');
    const starts: number[] = [];
    for (let i = 0, at = 0; i < distinct.length; at += distinct[i].length, i++) starts.push(at);
    calls = 0;
    for (let i = 0; i < distinct.length; i++) {
      assert.equal(grown.count(joined, starts[i], starts[i] + distinct[i].length), distinct[i].length % 7);
      if ((i & (i + 1)) === 0 || i === distinct.length - 1) {
        for (let k = 0; k <= i; k++) assert.equal(grown.count(joined, starts[k], starts[k] + distinct[k].length), distinct[k].length % 7);
        assert.equal(calls, i + 1, `after ${i + 1} pieces`);
      }
    }
    calls = 100_002;
    // Long pieces are not remembered.
    const long = 'y'.repeat(40);
    counts.count(long, 0, 40);
    counts.count(long, 0, 40);
    assert.equal(calls, 100_004);
  });
});
