/**
 * What a person must see on a browser screen, whatever draws it (ink-testing-library in
 * browse-sizes.test.tsx, a real terminal in tmux-browse.test.ts): the screen is text, one row
 * a line.
 */
import assert from 'node:assert/strict';
import { HELP } from '../src/ui/components/Panels.js';
import { textWidth } from '../src/ui/text.js';

/** 80x24 first: the default terminal. */
export const SIZES = [
  { width: 80, height: 24 },
  { width: 60, height: 20 },
  { width: 200, height: 50 },
];

/** The footer: the last row of the screen that holds text. */
export function footer(screen: string): string {
  return screen.trimEnd().split('\n').at(-1)?.trimEnd() ?? '';
}

/** The tree pane's node rows (left of the first `│`, below its title). */
export function treeRows(screen: string): string[] {
  return screen
    .split('\n')
    .slice(2)
    .filter((line) => line.includes('│'))
    .map((line) => line.split('│')[0]!.trimEnd())
    .filter((cell) => cell.trim() !== '');
}

/** Every tree row holds its ok count, and no status glyph shows without a number after it. */
export function assertTreeBadges(screen: string, what: string): void {
  const rows = treeRows(screen);
  assert.ok(rows.length >= 9, `${what}: the tree's rows\n${screen}`);
  for (const row of rows) {
    assert.match(row, /✓\d+$|✓\d+ /, `${what}: the ok count on ${JSON.stringify(row)}`);
    assert.doesNotMatch(row, /[✓✗∅≡⚠](?!\d)/, `${what}: a glyph without its number on ${JSON.stringify(row)}`);
  }
}

export function assertFits(screen: string, width: number, what: string): void {
  for (const line of screen.split('\n')) assert.ok(textWidth(line) <= width, `${what}: ${textWidth(line)} > ${width} cells: ${line}`);
}

/** The help's texts, each as one line with single spaces: what the screen must show whole. */
export const HELP_TEXTS = HELP.map(([, text]) => text.replace(/\s+/g, ' ').trim()).filter((text) => text !== '');

/** The help rows on screen joined back into one text: a wrapped row continues the one above. */
export function helpTexts(rows: readonly string[]): string {
  return rows
    .map((row) => row.trim())
    .join(' ')
    .replace(/\s+/g, ' ');
}

/** Help texts the rows do not show whole (cut, or not reached). */
export function missingHelp(rows: readonly string[]): string[] {
  const shown = helpTexts(rows);
  return HELP_TEXTS.filter((text) => !shown.includes(text));
}
