/**
 * singleSpaced against the regex it replaces (`/\s+/g` to one space), on every character
 * JavaScript's `\s` holds, the ones it does not (U+0085, U+200B, zero-width joiners), lone
 * surrogates and astral characters, in runs of every length and at both ends.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { groupKey } from '../src/pipeline/split.js';
import { foldForPhrases } from '../src/pipeline/quality/text.js';
import { singleSpaced } from '../src/white-space.js';
import { seededRandom } from './helpers.js';

const reference = (text: string): string => text.replace(/\s+/g, ' ');

/** Every member of JavaScript's \s. */
const JS_SPACES = [
  ' ', '\t', '\n', '\v', '\f', '\r', '\u00a0', '\u1680', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005',
  '\u2006', '\u2007', '\u2008', '\u2009', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff',
];
/** Look like space, or sit beside it, and are not \s. */
const NOT_SPACES = ['\u0085', '\u200b', '\u200d', '\u180e', 'a', 'Z', '.', 'é', '\ud800', '\udc00', '😀', '\u0000'];

describe('singleSpaced', () => {
  it('writes what /\\s+/g to one space writes, on hand-picked texts', () => {
    const texts = [
      '', ' ', '  ', 'a', 'a b', 'a  b', ' a', 'a ', '\n', '\na\n', 'a\tb', 'a \n b', 'a\n\n\nb', '\u00a0', 'a\u00a0b',
      '\ufeffa', 'a\u3000\u3000b', ' \u2028 ', '\ud800 \udc00', '😀\t😀', 'x\u0085y', 'x\u200b y', 'one two  three   four',
      ...JS_SPACES.map((s) => `a${s}b`),
      ...JS_SPACES.map((s) => `${s}${s}`),
      ...JS_SPACES.map((s) => ` ${s}`),
      ...JS_SPACES.map((s) => `${s} `),
    ];
    for (const text of texts) assert.equal(singleSpaced(text), reference(text), JSON.stringify(text));
  });

  it('writes the same on 20,000 random texts of spaces, near-spaces, surrogates and letters', () => {
    const random = seededRandom(29);
    const alphabet = [...JS_SPACES, ...NOT_SPACES, ' ', ' ', ' ', 'w', 'o', 'r', 'd'];
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      const length = Math.floor(random() * 40);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      assert.equal(singleSpaced(text), reference(text), JSON.stringify(text));
    }
  });

  it('writes the same on a text of megabytes with runs of every length', () => {
    const random = seededRandom(7);
    const parts: string[] = [];
    for (let i = 0; i < 200_000; i++) {
      parts.push('word');
      const run = Math.floor(random() * 4);
      for (let k = 0; k < run; k++) parts.push(JS_SPACES[Math.floor(random() * JS_SPACES.length)]);
      if (run === 0) parts.push(' ');
    }
    const text = parts.join('');
    assert.ok(text.length > 1_000_000);
    assert.equal(singleSpaced(text), reference(text));
  });

  it('is what split groups and quality phrases read: the keys and folds are the regex\'s', () => {
    const chat = (user: string) => [
      { role: 'user', content: user },
      { role: 'assistant', content: 'ok' },
    ];
    for (const text of ['What\u2003is\n\n2+2?\u00a0', ' \t Ｗhat  is\u3000it ', 'one two']) {
      const folded = (/[^\x00-\x7f]/.test(text) ? text.normalize('NFKC') : text).toLowerCase();
      assert.equal(groupKey('p', chat(text)), `user\u0000${reference(folded).trim()}`);
      assert.equal(foldForPhrases(`I\u2019m\n\nhere  now`), "i'm here now");
    }
  });
});
