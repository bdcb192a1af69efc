/**
 * Reads a (possibly large, pretty-printed) JSON document with stream-json, one top-level
 * member at a time, and the elements of chosen array members one at a time, so a long
 * recording is never held as one string nor as one parsed value.
 */
import { listedFileGone } from '../errors.js';
import { open } from 'node:fs/promises';
import { jsonParser } from 'stream-json/parser.js';
import Assembler from 'stream-json/assembler.js';
import { getManyValues, isMany, none } from 'stream-chain/defs.js';
import { JsonNumber } from '../canonical/json-value.js';
import { BOM_REASON, MAX_DEPTH, startsWithBom, textTooLong } from '../canonical/scan.js';

export type JsonEvent =
  /** A member of top-level object number `doc` (0-based), parsed whole. */
  | { kind: 'member'; doc: number; key: string; value: unknown }
  /** An element of a streamed array member. */
  | { kind: 'element'; doc: number; key: string; index: number; value: unknown }
  /** A top-level value that is not an object, parsed whole. */
  | { kind: 'document'; doc: number; value: unknown }
  /** The end of top-level object number `doc`. */
  | { kind: 'end'; doc: number };

export class JsonStreamError extends Error {}

/** The JSON is valid (orjson loads it), but holds a text too long to build: what follows it cannot be read. */
export class JsonTooLongError extends JsonStreamError {}

/** Any other error of the parser, as a JsonStreamError: a text too long to build is valid JSON all the same. */
function streamErrorOf(error: unknown): JsonStreamError {
  const tooLong = textTooLong(error);
  return tooLong !== null ? new JsonTooLongError(tooLong.message) : new JsonStreamError((error as Error).message);
}

/** Numbers are assembled as their recorded text (`JsonNumber`), never rounded through parseFloat. */
function keepingNumberText(assembler: Assembler): Assembler {
  const saving = assembler as unknown as { _saveValue(value: unknown): void; numberValue(text: string): void };
  saving.numberValue = (text: string) => saving._saveValue(new JsonNumber(text));
  return assembler;
}

interface Token {
  name: string;
  value?: unknown;
}

const CHUNK_SIZE = 1 << 20;

export interface JsonStreamOptions {
  /** Top-level keys whose array values are handed out element by element. */
  streamed?: ReadonlySet<string>;
  /** Several documents one after the other (JSON Lines, concatenated JSON). */
  multiple?: boolean;
}

/** Token-driven state: which top-level member or element is being assembled. */
class Walker {
  private doc = 0;
  /** Containers open at this token, across the whole document. */
  private depth = 0;
  /** 0 between documents, 1 inside a top-level object, 2 inside a streamed array. */
  private level = 0;
  private key: string | null = null;
  private index = 0;
  private assembler: Assembler | null = null;
  private target: 'member' | 'element' | 'document' = 'document';

  constructor(
    private readonly options: JsonStreamOptions,
    private readonly out: JsonEvent[],
  ) {}

  get idle(): boolean {
    return this.level === 0 && this.assembler === null;
  }

  private begin(target: Walker['target'], token: Token): void {
    this.target = target;
    this.assembler = keepingNumberText(new Assembler());
    this.feed(token);
  }

  private feed(token: Token): void {
    const assembler = this.assembler!;
    assembler.consume(token as never);
    if (!assembler.done) return;
    const value = assembler.current;
    this.assembler = null;
    if (this.target === 'member') this.out.push({ kind: 'member', doc: this.doc, key: this.key!, value });
    else if (this.target === 'element') this.out.push({ kind: 'element', doc: this.doc, key: this.key!, index: this.index++, value });
    else this.endDocument({ kind: 'document', doc: this.doc, value });
  }

  private endDocument(event: JsonEvent): void {
    this.out.push(event);
    this.doc++;
    this.level = 0;
    if (!this.options.multiple && this.doc > 1) throw new JsonStreamError('more than one JSON value in the file');
  }

  token(token: Token): void {
    // A lone surrogate can only come from an escape (the bytes are valid UTF-8): orjson refuses it.
    if ((token.name === 'stringValue' || token.name === 'keyValue') && LONE_SURROGATE.test(token.value as string)) {
      throw new JsonStreamError('a string holds a lone surrogate (an unpaired \\ud800-\\udfff escape)');
    }
    // Only an exponent or 309 digits make a number infinite as a double, which orjson refuses.
    if (token.name === 'numberValue' && !Number.isFinite(Number(token.value))) {
      const text = token.value as string;
      throw new JsonStreamError(`a number is too large for a double (${text.length > 24 ? `${text.slice(0, 24)}…` : text}), which strict JSON parsers refuse`);
    }
    // The same bound as trace lines: the walkers after reading recurse, and orjson refuses deeper.
    if (token.name === 'startObject' || token.name === 'startArray') {
      if (++this.depth > MAX_DEPTH) throw new JsonStreamError(`nested deeper than ${MAX_DEPTH} levels`);
    } else if (token.name === 'endObject' || token.name === 'endArray') this.depth--;
    if (this.assembler !== null) return this.feed(token);
    switch (this.level) {
      case 0:
        if (!this.options.multiple && this.doc > 0) throw new JsonStreamError('text after the JSON value');
        if (token.name === 'startObject') this.level = 1;
        else this.begin('document', token);
        return;
      case 1:
        if (token.name === 'keyValue') {
          this.key = token.value as string;
          return;
        }
        if (token.name === 'endObject') return this.endDocument({ kind: 'end', doc: this.doc });
        if (token.name === 'startArray' && this.options.streamed?.has(this.key!)) {
          this.level = 2;
          this.index = 0;
          return;
        }
        return this.begin('member', token);
      case 2:
        if (token.name === 'endArray') {
          this.level = 1;
          return;
        }
        return this.begin('element', token);
    }
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What stream-json lets through and orjson refuses, in the bytes: a raw control byte inside a
 * string. Fed chunk after chunk; throws JsonStreamError.
 */
class RawControlCheck {
  private inString = false;
  private escaped = false;

  check(bytes: Uint8Array): void {
    let inString = this.inString;
    let escaped = this.escaped;
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes[i];
      if (!inString) {
        if (c === 0x22) inString = true;
      } else if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
      else if (c < 0x20) throw new JsonStreamError(`a string holds a raw control character (0x${c.toString(16).padStart(2, '0')}), which strict JSON parsers refuse`);
    }
    this.inString = inString;
    this.escaped = escaped;
  }
}

/**
 * Events of a JSON file, in batches (one per chunk read). Throws JsonStreamError on what
 * orjson would not load: broken JSON, invalid UTF-8, a byte order mark, a raw control
 * character or a lone surrogate in a string, a number infinite as a double, nesting past MAX_DEPTH.
 */
export async function* streamJson(path: string, options: JsonStreamOptions = {}): AsyncGenerator<JsonEvent[]> {
  const parse = jsonParser({ packValues: true, streamValues: false, jsonStreaming: options.multiple === true });
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const controls = new RawControlCheck();
  const decode = (bytes?: Uint8Array): string => {
    try {
      return bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true });
    } catch {
      throw new JsonStreamError('invalid UTF-8');
    }
  };
  const events: JsonEvent[] = [];
  const walker = new Walker(options, events);
  const take = (result: unknown) => {
    if (result === none) return;
    const tokens = isMany(result) ? (getManyValues(result) as Token[]) : [result as Token];
    for (const token of tokens) walker.token(token);
  };
  let failure: JsonStreamError | null = null;
  const run = (fn: () => unknown) => {
    if (failure !== null) return;
    try {
      take(fn());
    } catch (error) {
      failure = error instanceof JsonStreamError ? error : streamErrorOf(error);
    }
  };
  const handle = await open(path, 'r').catch((error: unknown) => {
    throw listedFileGone(error, path);
  });
  try {
    let first = true;
    while (failure === null) {
      const chunk = Buffer.allocUnsafe(CHUNK_SIZE);
      const { bytesRead } = await handle.read(chunk, 0, CHUNK_SIZE, null);
      if (bytesRead === 0) break;
      const bytes = chunk.subarray(0, bytesRead);
      run(() => {
        if (first && startsWithBom(bytes)) throw new JsonStreamError(BOM_REASON);
        controls.check(bytes);
        // Fed a line at a time: a syntax error then loses the tokens of its own line only. Fed
        // a chunk at once, the parser threw away the whole chunk's, so a broken second RunLog
        // of a small klieo file lost the first one's records too.
        const text = decode(bytes);
        let from = 0;
        for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', from)) {
          take(parse(text.slice(from, newline + 1)));
          from = newline + 1;
        }
        return parse(text.slice(from));
      });
      first = false;
      // Values completed before a syntax error are still handed out.
      if (events.length > 0) yield events.splice(0);
    }
    run(() => parse(decode()));
    run(() => parse(none as never));
    if (failure === null && !walker.idle) failure = new JsonStreamError('unexpected end of file');
    if (events.length > 0) yield events.splice(0);
    if (failure !== null) throw failure;
  } finally {
    await handle.close();
  }
}
