/**
 * A JSON number as a Python trainer prints it after `json.loads`: an integer keeps its digits,
 * anything else is a float written by `repr` (`153126.0`, `1e-05`). The chat template's
 * `{{ x }}` and `tojson` print the same text, so the counts of a rendered example use it too.
 */
import { isIntegerText } from '../../canonical/json-value.js';

/** A JSON number's text as Python reads and writes it back: an integer stays exact, anything else is a float. */
export function pythonNumber(text: string): string {
  if (isIntegerText(text)) return BigInt(text).toString();
  return pythonFloatRepr(Number(text));
}

/** `repr(float)`: the shortest digits that read back, in exponent form below 1e-4 and from 1e16 on. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa, expText] = Math.abs(x).toExponential().split('e');
  const exp = Number(expText);
  const digits = mantissa.replace('.', '');
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const fraction = digits.slice(exp + 1);
  return `${sign}${whole}.${fraction === '' ? '0' : fraction}`;
}

