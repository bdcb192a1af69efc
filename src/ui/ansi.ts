/**
 * A screen row as one string with SGR styles: how every row of the browser is drawn, by the
 * ink app (one <Text> a row, see components/Line.tsx) and by the pre-paint alike.
 */
import type { Seg } from './chat-lines.js';
import { fitSegs } from './rows.js';

const COLORS: Record<string, number> = { black: 30, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, white: 37, gray: 90, grey: 90 };

function colorCode(name: string): number | null {
  if (Object.hasOwn(COLORS, name)) return COLORS[name];
  const bright = /^(\w+)Bright$/.exec(name);
  return bright !== null && Object.hasOwn(COLORS, bright[1]) ? COLORS[bright[1]] + 60 : null;
}

/** One row fitted to `width` cells as text with SGR styles; `selected` inverts it (and drops dim, as a highlight reads better bright). */
export function segsToAnsi(segs: readonly Seg[], width: number, selected = false, color = true): string {
  let out = '';
  for (const seg of fitSegs(segs, width)) {
    if (!color) {
      out += seg.text;
      continue;
    }
    const codes: number[] = [];
    const fg = seg.color !== undefined ? colorCode(seg.color) : null;
    if (fg !== null) codes.push(fg);
    if (seg.bold) codes.push(1);
    if (seg.dim && !selected) codes.push(2);
    if (seg.italic) codes.push(3);
    if (seg.underline) codes.push(4);
    if (selected ? !seg.inverse : seg.inverse) codes.push(7);
    out += codes.length > 0 ? `\x1b[${codes.join(';')}m${seg.text}\x1b[0m` : seg.text;
  }
  return out;
}
