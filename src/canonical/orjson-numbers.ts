/**
 * Numbers written as orjson writes them. A line that another tool rewrote (Python's `json`
 * writes `1e16` as `1e+16` and `1e-5` as `1e-05`) keeps its values but not its number text,
 * so its recorded hashes no longer match its bytes. `verify` tells such a line from an edited
 * one by hashing its canonical bytes again with every float written the way orjson writes it:
 * before 3.11.7 (ryu's shortest form, `1e16`) and from 3.11.7 on (`1e+16`).
 */
import { ByteSink } from './byte-sink.js';

export type OrjsonSpelling = 'before-3.11.7' | 'from-3.11.7';
export const ORJSON_SPELLINGS: readonly OrjsonSpelling[] = ['before-3.11.7', 'from-3.11.7'];

/**
 * What a line's integer `-0` was when it was hashed. orjson reads `-0` as the integer 0 and
 * writes `0`; a writer that drops the fraction of a float's negative zero (Go's encoding/json)
 * turns the `-0.0` orjson hashed into `-0`. Either way the value is zero, as written again:
 * both readings are tried, like the two spellings.
 */
export type NegativeZero = '0' | '-0.0';

/** Every way of writing a line's numbers back that `verify` tries: each spelling with each reading of `-0`. */
export const ORJSON_READINGS: readonly { spelling: OrjsonSpelling; negativeZero: NegativeZero }[] = ORJSON_SPELLINGS.flatMap((spelling) =>
  (['0', '-0.0'] as const).map((negativeZero) => ({ spelling, negativeZero })),
);

/**
 * The shortest text that reads back as `value`, laid out as ryu (and so orjson) lays it out:
 * plain digits with `.0` up to 16 integer digits, `0.000ddd` down to 5 leading zeros, else
 * one digit, the rest after a point, and the exponent.
 */
export function orjsonFloat(value: number, spelling: OrjsonSpelling): string {
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const [mantissa, exponentText] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  // The decimal point sits after `point` digits: value = 0.digits × 10^point.
  const point = exponent + 1;
  const trailingZeros = point - digits.length;
  let text: string;
  if (trailingZeros >= 0 && point <= 16) text = `${digits}${'0'.repeat(trailingZeros)}.0`;
  else if (point > 0 && point <= 16) text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  else if (point > -5 && point <= 0) text = `0.${'0'.repeat(-point)}${digits}`;
  else {
    const sign = exponent < 0 ? '-' : spelling === 'from-3.11.7' ? '+' : '';
    text = `${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${sign}${Math.abs(exponent)}`;
  }
  return value < 0 ? `-${text}` : text;
}

function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/**
 * Compact JSON (as the canonical writer makes it) with every float rewritten as orjson writes
 * it; integers stay as they are, since every writer keeps them, but `-0` (see `NegativeZero`).
 * Strings are copied untouched.
 */
export function withOrjsonNumbers(json: Buffer, spelling: OrjsonSpelling, out: ByteSink = new ByteSink(), negativeZero: NegativeZero = '0'): Buffer {
  out.reset();
  let p = 0;
  while (p < json.length) {
    const c = json[p];
    if (c === 0x22) {
      const start = p++;
      while (json[p] !== 0x22) p += json[p] === 0x5c ? 2 : 1;
      out.copy(json, start, ++p);
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = p;
      let float = false;
      while (p < json.length && isNumberByte(json[p])) {
        if (json[p] === 0x2e || json[p] === 0x65 || json[p] === 0x45) float = true;
        p++;
      }
      const text = json.toString('latin1', start, p);
      const value = Number(text);
      out.text(float && Number.isFinite(value) ? orjsonFloat(value, spelling) : text === '-0' ? negativeZero : text);
    } else {
      out.byte(c);
      p++;
    }
  }
  return out.view();
}
