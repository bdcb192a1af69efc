/**
 * A tiny JSON writer that produces exactly the bytes `orjson.dumps` writes (compact, keys in
 * insertion order, non-ASCII raw), for the benchmark generator. JavaScript numbers do not know
 * whether they are floats, so floats are wrapped in `F`; bare numbers are written as integers.
 */

/** A number Python holds as a float: written float-looking (`1.0`, `153133.0`, `1e-7`). */
export class F {
  constructor(readonly v: number) {}
}

export const f = (v: number): F => new F(v);

export type J = null | boolean | number | string | F | J[] | { [key: string]: J | undefined };

/**
 * orjson's float text: the shortest round-trip digits (as JavaScript's), in positional
 * notation when the decimal exponent is in [-5, 16), else `<digits>e<exp>` with no `+`.
 * Checked against orjson 3.8 on 200k random values. (orjson >= 3.11.7 writes `1e+16`;
 * the generator never writes floats >= 1e16, so both versions agree on its output.)
 */
export function formatFloat(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const e = x.toExponential();
  const i = e.indexOf('e');
  const exp = Number(e.slice(i + 1));
  if (exp >= -5 && exp < 16) {
    const s = String(x);
    return s.includes('.') || s.includes('e') ? s : `${s}.0`;
  }
  return `${e.slice(0, i)}e${exp}`;
}

export function dumps(v: J): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      if (!Number.isInteger(v)) throw new Error(`non-integer ${v} not wrapped in F`);
      return String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      break;
  }
  if (v instanceof F) return formatFloat(v.v);
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) s += ',';
      s += dumps(v[i]);
    }
    return s + ']';
  }
  let s = '{';
  let first = true;
  for (const key in v) {
    const value = v[key];
    if (value === undefined) continue;
    if (!first) s += ',';
    first = false;
    s += JSON.stringify(key) + ':' + dumps(value);
  }
  return s + '}';
}
