/**
 * Token counts of exported examples, for length reports and context-limit
 * warnings. Counts are of the written line (any target's format), so the
 * validator can count files we did not write.
 *
 * The estimate follows the OpenAI cookbook: each message costs 3 tokens of
 * chat-template framing plus its role and texts, a `name` costs 1 more, and
 * every example 3 more to prime the reply. Real templates differ by a few
 * tokens per message; the figure is for spotting over-long examples, not billing.
 */
import type { GptEncoding } from 'gpt-tokenizer/GptEncoding';
import { isJsonObject, writeRecordJson } from '../canonical/json-value.js';
import { PieceCounts } from './piece-counts.js';
import { PieceSplitter, referenceSplitRegex } from './token-pieces.js';
import { loadRanks } from './token-ranks.js';
export { summarize, type Distribution } from './distribution.js';

export type EncodingName = 'o200k_base' | 'cl100k_base';
export const ENCODING_NAMES: readonly EncodingName[] = ['o200k_base', 'cl100k_base'];

const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const TOKENS_PER_EXAMPLE = 3;
/** An image part counted at the low-detail price of gpt-4o-class models (85 tokens). */
const TOKENS_PER_IMAGE = 85;

export interface TokenCounter {
  readonly encoding: EncodingName;
  count(text: string): number;
}

export interface ExampleTokens {
  /** Every message, tool definitions included. */
  total: number;
  /** What the assistant messages hold (content, reasoning, tool calls): the tokens trained on. */
  assistant: number;
}

/**
 * Loads an encoding (a few hundred milliseconds, hence lazily and once per
 * process). Special tokens in text are counted as plain text: gpt-tokenizer
 * throws on them by default, and training data may legitimately mention them.
 *
 * gpt-tokenizer counts each piece; the pieces come from our own pre-tokenizer and are
 * remembered (see token-pieces.ts and piece-counts.ts), which is several times faster on
 * prose and gives the same counts.
 */
export async function loadTokenCounter(encoding: EncodingName = 'o200k_base'): Promise<TokenCounter> {
  const cached = counters.get(encoding);
  if (cached !== undefined) return cached;
  const pending = importEncoding(encoding).then(({ api, splitter }): TokenCounter => {
    const pieces = new PieceCounts(pieceCounter(api));
    // The text being counted and its running total, shared with the per-piece callback.
    let pieceText = '';
    let tokens = 0;
    const addPiece = (start: number, end: number): void => {
      // Both encodings hold a token for every byte, and an ASCII character is one byte.
      tokens += end - start === 1 && pieceText.charCodeAt(start) < 0x80 ? 1 : pieces.count(pieceText, start, end);
    };
    const repeated = new TextCounts();
    const countText = (text: string): number => {
      tokens = 0;
      pieceText = text;
      splitter.split(text, addPiece);
      return tokens;
    };
    return {
      encoding,
      count(text) {
        let n = repeated.get(text);
        if (n === undefined) repeated.set(text, (n = countText(text)));
        return n;
      },
    };
  });
  counters.set(encoding, pending);
  return pending;
}

const counters = new Map<EncodingName, Promise<TokenCounter>>();

/**
 * Counts of texts already counted. Real programs send the same system prompt, instructions,
 * tool definitions and few-shot examples in thousands of records, and short texts repeat most
 * (roles, tool names, short prompts: on the small-record bench tree, 3 of 4 counts of texts
 * under 256 characters are repeats): hashing and comparing a text (native, in the Map) costs
 * a small fraction of splitting and counting it again. Bounded by the characters held, each
 * entry counted with its overhead; when full it starts over, which keeps whatever repeats
 * most often coming back soon.
 */
export class TextCounts<T = number> {
  private static readonly MAX_CHARS = 8 << 20;
  /** What an entry costs beyond its characters, in characters: bounds the number of tiny texts held. */
  private static readonly ENTRY_CHARS = 32;
  private readonly counts = new Map<string, T>();
  private chars = 0;

  get(text: string): T | undefined {
    return this.counts.get(text);
  }

  set(text: string, count: T): void {
    const chars = text.length + TextCounts.ENTRY_CHARS;
    if (this.chars + chars > TextCounts.MAX_CHARS) {
      this.counts.clear();
      this.chars = 0;
    }
    this.counts.set(text, count);
    this.chars += chars;
  }
}

async function importEncoding(encoding: EncodingName): Promise<{ api: GptEncoding; splitter: PieceSplitter }> {
  if (!ENCODING_NAMES.includes(encoding)) throw new Error(`unknown encoding ${JSON.stringify(encoding)} (known: ${ENCODING_NAMES.join(', ')})`);
  const [{ O200K_TOKEN_SPLIT_REGEX, CL100K_TOKEN_SPLIT_REGEX }, { GptEncoding: Encoding }, ranks] = await Promise.all([
    import('gpt-tokenizer/encodingParams/constants'),
    import('gpt-tokenizer/GptEncoding'),
    loadRanks(encoding),
  ]);
  // What gpt-tokenizer's own encoding module does with the same table.
  const api = Encoding.getEncodingApi(encoding, () => ranks);
  return encoding === 'o200k_base'
    ? { api, splitter: new PieceSplitter('o200k', referenceSplitRegex(O200K_TOKEN_SPLIT_REGEX)) }
    : { api, splitter: new PieceSplitter('cl100k', referenceSplitRegex(CL100K_TOKEN_SPLIT_REGEX)) };
}

/** The part of gpt-tokenizer's byte-pair encoder a piece's count needs (not in its typings). */
interface BytePairCore {
  getBpeRankFromString(piece: string): number | undefined;
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  binarySearch(bytes: Uint8Array): number;
  bytePairNonUtfSortedEncoder: [Uint8Array, number][];
  bytePairEncode(piece: string): number[];
}

/**
 * Tokens of one piece, by byte-pair merges alone: the piece is already one match of the
 * split regex, so it is not split again (gpt-tokenizer's own count would re-split it with
 * JavaScript's \s).
 *
 * gpt-tokenizer looks a byte string up by decoding it with TextDecoder, which drops a
 * leading byte order mark: the bytes of U+FEFF decode to "", and "\ufeffusing" to "using",
 * so every token that starts with U+FEFF (9 in o200k, 8 in cl100k) was missed or taken for
 * another. Such byte strings are looked up by their bytes instead.
 */
function pieceCounter(api: GptEncoding): (piece: string) => number {
  const core = (api as unknown as { bytePairEncodingCoreProcessor: BytePairCore }).bytePairEncodingCoreProcessor;
  const byText = core.getBpeRankFromBytes.bind(core);
  core.getBpeRankFromBytes = (bytes) => {
    if (bytes[0] !== 0xef || bytes[1] !== 0xbb || bytes[2] !== 0xbf) return byText(bytes);
    const index = core.binarySearch(bytes);
    return index === -1 ? undefined : core.bytePairNonUtfSortedEncoder[index][1];
  };
  const countOne = (piece: string) => (core.getBpeRankFromString(piece) !== undefined ? 1 : core.bytePairEncode(piece).length);
  return (piece) => {
    if (piece.length <= LONG_PIECE) return countOne(piece);
    // A piece of millions of characters (a run of one letter, base64 without a break) is counted
    // in slices: the encoder's merge lists grow with the piece, and 250 MB of "x" made an array
    // V8 cannot hold. No token is longer than a few hundred characters, so a slice boundary
    // changes the count by a token or so per slice at most: a figure for spotting long examples.
    let n = 0;
    for (let at = 0; at < piece.length; ) {
      let end = Math.min(piece.length, at + LONG_PIECE);
      // Never between the two halves of a surrogate pair.
      if (end < piece.length && (piece.charCodeAt(end) & 0xfc00) === 0xdc00) end--;
      n += countOne(piece.slice(at, end));
      at = end;
    }
    return n;
  };
}

/** Pieces longer than this (in UTF-16 units) are counted in slices of this length. */
const LONG_PIECE = 1 << 12;

/** Counts one example line. Never throws: malformed parts (validation reports those) count as their JSON text. */
export function countExampleTokens(counter: TokenCounter, example: unknown): ExampleTokens {
  if (!isRecord(example) || !Array.isArray(example.messages)) return { total: 0, assistant: 0 };
  let total = TOKENS_PER_EXAMPLE;
  let assistant = 0;
  for (const message of example.messages) {
    if (!isRecord(message)) continue;
    const body = messageBodyTokens(counter, message);
    total += TOKENS_PER_MESSAGE + counter.count(String(message.role ?? '')) + body;
    if (typeof message.name === 'string') total += TOKENS_PER_NAME + counter.count(message.name);
    // OpenAI's weight 0 (what --train-on last writes on the earlier turns) leaves the turn out of the loss.
    if (message.role === 'assistant' && !isZeroWeight(message.weight)) assistant += body;
  }
  if (Array.isArray(example.tools) && example.tools.length > 0) total += counter.count(writeRecordJson(example.tools));
  return { total, assistant };
}

/** Whether a message's `weight` leaves it untrained (absent means trained). */
export function isZeroWeight(weight: unknown): boolean {
  return weight !== undefined && weight !== null && Number(String(weight)) === 0;
}

/** Content, reasoning (either field name) and tool calls of one message. */
function messageBodyTokens(counter: TokenCounter, message: Record<string, unknown>): number {
  let n = contentTokens(counter, message.content);
  for (const key of ['reasoning_content', 'thinking']) {
    if (typeof message[key] === 'string') n += counter.count(message[key] as string);
  }
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : null;
      if (fn === null) continue;
      n += counter.count(String(fn.name ?? ''));
      n += counter.count(typeof fn.arguments === 'string' ? fn.arguments : writeRecordJson(fn.arguments ?? {}));
    }
  }
  return n;
}

function contentTokens(counter: TokenCounter, content: unknown): number {
  if (typeof content === 'string') return counter.count(content);
  if (content === null || content === undefined) return 0;
  if (!Array.isArray(content)) return counter.count(writeRecordJson(content));
  let n = 0;
  for (const part of content) {
    if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') n += counter.count(part.text);
    else if (isRecord(part) && part.type === 'image_url') n += TOKENS_PER_IMAGE;
    else n += counter.count(writeRecordJson(part));
  }
  return n;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return isJsonObject(value);
}
