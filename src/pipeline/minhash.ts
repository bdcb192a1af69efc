/**
 * Near-duplicate signatures: MinHash over word shingles, LSH bands to find candidate pairs,
 * and a compact sketch to estimate a candidate pair's Jaccard similarity.
 *
 * What is compared: the example's non-system text, i.e. the content of user, assistant and
 * tool turns and the assistant's tool calls (name and arguments). System prompts are left
 * out, so a long shared system prompt alone never makes two records similar. Reasoning is
 * left out too: targets differ on whether they keep it.
 *
 * Shingling (SHINGLE_WORDS): the text is lowercased and cut into words at every character
 * that is not a letter, mark or digit, so whitespace, case and punctuation re-runs give the
 * same words (scripts written without spaces between words, Han, Hiragana, Katakana, Thai,
 * Lao, Khmer and Myanmar, give a word per character: a Thai sentence was one word, so two
 * Thai answers one letter apart shared nothing); each run of 5 consecutive words is one
 * shingle (datatrove's choice). A text of fewer than 5 words is one shingle.
 *
 * Hashing: each word is FNV-1a hashed, each shingle is its 5 word hashes mixed into 32 bits.
 * The PERMUTATIONS (128) MinHash values come from one-permutation hashing: the shingle hash's
 * top 7 bits choose one of 128 bins and each bin keeps the minimum of the rest, with empty
 * bins filled by optimal densification (see densify). That is one hash per shingle where
 * classic MinHash (datatrove, NeMo Curator) computes one per permutation, which keeps
 * `export --near-duplicates` close to the cost of a plain export; the estimate of Jaccard
 * similarity from agreeing values is the same.
 *
 * Bands (BANDS × ROWS = 4 × 3): the first 12 MinHash values, 3 to a band, each band hashed
 * to 32 bits. Two records are a candidate pair when any band is equal, which happens with
 * probability 1 - (1 - J^3)^4: 0.94 at Jaccard 0.8, 0.98 at 0.85, 0.995 at 0.9, but 0.41 at
 * 0.5 and 0.14 at 0.33. NeMo Curator's 20 bands of 13 and datatrove's 14 of 8 keep a full
 * signature per document on disk; here every record's bands and sketch stay in memory, so
 * fewer bands are kept and every candidate pair is verified (below) instead of trusting
 * the band match.
 *
 * Verification (SKETCH_BITS): the low 2 bits of all 128 MinHash values are kept (32 bytes,
 * b-bit MinHash). Two values agree with probability J + (1 - J) / 4, so J is estimated as
 * (4 · agreeing / 128 - 1) / 3: a standard error of about 0.04 near 0.8, far from the 0.3
 * or so of texts that share half their words.
 *
 * Memory per record: 4 band hashes and 8 sketch words (48 bytes) for the run, and while
 * clustering (near-duplicates.ts) 4 bucket entries of 8 bytes, a rank and a parent: 88 bytes.
 */

export const SHINGLE_WORDS = 5;
export const PERMUTATIONS = 128;
export const BANDS = 4;
export const ROWS = 3;
export const SKETCH_BITS = 2;
/** 32-bit words of a signature: the band hashes, then the sketch. */
export const SKETCH_WORDS = (PERMUTATIONS * SKETCH_BITS) / 32;
export const SIGNATURE_WORDS = BANDS + SKETCH_WORDS;
export const DEFAULT_NEAR_DUPLICATE_THRESHOLD = 0.8;

const WORD_CHAR = 1;
/** Scripts that write no spaces between words: each character is a word. */
const CHAR_WORD = 2;
/** Each UTF-16 code unit's class, found with the regex engine the first time it is seen (255: not yet). */
const CLASSES = new Uint8Array(0x10000).fill(255);

function classOf(c: number): number {
  let cls = CLASSES[c];
  if (cls === 255) {
    const ch = String.fromCharCode(c);
    // Lone halves of astral characters (emoji, rare letters) count as word characters, so an astral letter stays in its word.
    cls = (c >= 0xd800 && c <= 0xdfff) || /[\p{L}\p{M}\p{N}]/u.test(ch) ? WORD_CHAR : 0;
    if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u.test(ch)) cls = CHAR_WORD;
    CLASSES[c] = cls;
  }
  return cls;
}

/**
 * 32-bit hashes of the words of `text`, lowercased, appended to `out`: runs of letters, marks
 * and digits (each character of a script without spaces on its own), FNV-1a over their code units.
 */
export function appendWordHashes(text: string, out: number[]): void {
  const lower = text.toLowerCase();
  let h = 0x811c9dc5;
  let inWord = false;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    const cls = classOf(c);
    if (cls === WORD_CHAR) {
      h = Math.imul(h ^ c, 0x01000193);
      inWord = true;
      continue;
    }
    if (inWord) out.push(h >>> 0);
    h = 0x811c9dc5;
    inWord = false;
    if (cls === CHAR_WORD) out.push(Math.imul(h ^ c, 0x01000193) >>> 0);
  }
  if (inWord) out.push(h >>> 0);
}

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const BIN_BITS = Math.log2(PERMUTATIONS);
const EMPTY = 0xffffffff;
const minimums = new Uint32Array(PERMUTATIONS);

/**
 * The signature of a text given as its word hashes: BANDS band hashes then the sketch, or
 * null when there are no words (nothing to compare).
 */
export function signatureOf(words: readonly number[]): Uint32Array | null {
  if (words.length === 0) return null;
  minimums.fill(EMPTY);
  const shingles = Math.max(1, words.length - SHINGLE_WORDS + 1);
  for (let s = 0; s < shingles; s++) {
    let h = 0x2545f491;
    const end = Math.min(words.length, s + SHINGLE_WORDS);
    for (let w = s; w < end; w++) h = mix(h ^ words[w]);
    // One permutation: the top bits choose the bin, the rest is the value whose minimum the bin keeps.
    const bin = h >>> (32 - BIN_BITS);
    const value = mix(h ^ 0x5bd1e995) >>> 1;
    if (value < minimums[bin]) minimums[bin] = value;
  }
  densify();
  const signature = new Uint32Array(SIGNATURE_WORDS);
  for (let b = 0; b < BANDS; b++) {
    let h = 0x27d4eb2f ^ b;
    for (let r = 0; r < ROWS; r++) h = mix(h ^ minimums[b * ROWS + r]);
    signature[b] = h;
  }
  const perWord = 32 / SKETCH_BITS;
  const mask = (1 << SKETCH_BITS) - 1;
  for (let i = 0; i < PERMUTATIONS; i++) {
    signature[BANDS + Math.floor(i / perWord)] |= (mix(minimums[i]) & mask) << ((i % perWord) * SKETCH_BITS);
  }
  return signature;
}

/**
 * Optimal densification (Shrivastava, 2017): an empty bin takes the value of the first
 * non-empty bin along its own fixed pseudo-random probe sequence, marked by the attempt, so
 * two texts' copies agree exactly when their sources do, and short texts still get a full
 * signature.
 */
function densify(): void {
  const filled = minimums.slice();
  for (let i = 0; i < PERMUTATIONS; i++) {
    if (filled[i] !== EMPTY) continue;
    for (let attempt = 1; ; attempt++) {
      const j = mix(Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(attempt, 0x85ebca6b)) >>> (32 - BIN_BITS);
      if (filled[j] !== EMPTY) {
        minimums[i] = mix(filled[j] ^ attempt);
        break;
      }
    }
  }
}

/** Estimated Jaccard similarity of two sketches (SKETCH_WORDS words each, at the given offsets). */
export function estimatedSimilarity(a: Uint32Array, aOffset: number, b: Uint32Array, bOffset: number): number {
  let agree = 0;
  const mask = (1 << SKETCH_BITS) - 1;
  for (let w = 0; w < SKETCH_WORDS; w++) {
    const x = a[aOffset + w] ^ b[bOffset + w];
    for (let k = 0; k < 32; k += SKETCH_BITS) if (((x >>> k) & mask) === 0) agree++;
  }
  const chance = 1 / (1 << SKETCH_BITS);
  const estimate = (agree / PERMUTATIONS - chance) / (1 - chance);
  return Math.max(0, Math.min(1, estimate));
}

/** Word hashes of a conversation's non-system text: content of user, assistant and tool turns, and tool calls. */
export function conversationWords(messages: readonly ({ role?: unknown; content?: unknown; tool_calls?: unknown } | null)[]): number[] {
  const words: number[] = [];
  for (const message of messages) {
    // A recorded message of another type (null, a number) holds no words: one record's value must not stop the run.
    if (typeof message !== 'object' || message === null) continue;
    if (message.role === 'system' || message.role === 'developer') continue;
    appendText(message.content, words);
    if (Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        const fn = typeof call === 'object' && call !== null ? (call as { function?: { name?: unknown; arguments?: unknown } }).function : undefined;
        if (typeof fn !== 'object' || fn === null) continue;
        appendText(fn.name, words);
        appendText(fn.arguments, words);
      }
    }
  }
  return words;
}

function appendText(value: unknown, words: number[]): void {
  if (typeof value === 'string') appendWordHashes(value, words);
  else if (Array.isArray(value)) for (const part of value) appendText(part, words);
  else if (typeof value === 'object' && value !== null) {
    // Content parts ({type, text}) and structured values: the values' text, not the keys.
    for (const [key, inner] of Object.entries(value)) if (key !== 'type') appendText(inner, words);
  } else if (typeof value === 'number' || typeof value === 'boolean') appendWordHashes(String(value), words);
}
