/**
 * Drives the real `traces browse` in a real terminal (tmux): open the samples, move into an
 * agent record, see its tool call, mark it, write the exclusion file, quit, and check the
 * terminal is given back (alternate screen left, shell prompt visible).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { REPO, SAMPLES, tempDir } from './helpers.js';
import { assertFits, assertTreeBadges, footer, HELP_TEXTS, helpTexts, missingHelp, SIZES } from './screen-checks.js';

const BIN = process.env.TRACES_BIN ?? path.join(REPO, 'bin', 'traces.js');
const PROMPT = 'TRACES-TEST$ ';
const TOOL_FILE = path.join(SAMPLES, 'math_agent/tool_calls_generator_math_agent/tool_calls_generator_math_agent_20260708-163045.jsonl');

const TOOL_MODULE = /│ math_agent\/tool_calls_generator_math_agent\s+6/;
/** How long a screen may take to show what a key caused: generous, for loaded machines. */
const DEADLINE_MS = 30_000;

/** The tree rows below "all records" down to the agent's tool-call module, as the list pane titles them. */
const TREE_PATH = ['language_model', 'language_model/language_model', 'math_agent', 'math_agent/final_generator_math_agent', 'math_agent/tool_calls_generator_math_agent'];

/** The list pane's title (right of the tree): names the node the tree cursor is on. */
function listTitle(screen: string): string {
  return screen.split('\n')[1]?.split('│')[1]?.trim() ?? '';
}

const hasTmux = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

class Tmux {
  readonly socket = `traces-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  readonly session = 'browse';

  constructor(width: number, height: number, cwd: string) {
    this.tmux('-f', '/dev/null', 'new-session', '-d', '-s', this.session, '-x', String(width), '-y', String(height), '-c', cwd, `env PS1=${shellQuote(PROMPT)} bash --norc --noprofile`);
  }

  tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  keys(...keys: string[]): void {
    this.tmux('send-keys', '-t', this.session, ...keys);
  }

  type(text: string): void {
    this.tmux('send-keys', '-t', this.session, '-l', text);
  }

  screen(): string {
    return this.tmux('capture-pane', '-p', '-t', this.session);
  }

  alternateOn(): boolean {
    return this.tmux('display-message', '-p', '-t', this.session, '#{alternate_on}').trim() === '1';
  }

  async waitFor(test: RegExp | ((screen: string) => boolean), what: string, timeoutMs = DEADLINE_MS): Promise<string> {
    const check = typeof test === 'function' ? test : (s: string) => test.test(s);
    const until = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < until) {
      last = this.screen();
      if (check(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail(`timed out waiting for ${what}; screen:\n${last}`);
  }

  kill(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // Already gone.
    }
  }
}

function skipWithoutTmux(t: TestContext): boolean {
  if (hasTmux) return false;
  t.skip('tmux is not installed');
  return true;
}

/** Starts `node bin/traces.js browse samples/synalinks` from the repo root in a fresh tmux. */
async function launch(width: number, height: number, extraArgs: string[] = []): Promise<Tmux> {
  const help = spawnSync(process.execPath, [BIN, 'browse', '--help'], { cwd: REPO, encoding: 'utf8' });
  assert.match(help.stdout, /Usage: traces browse/, `\`${path.relative(REPO, BIN)} browse\` is not available: is registerBrowse wired into src/cli.ts?`);
  const term = new Tmux(width, height, REPO);
  await term.waitFor((s) => s.includes(PROMPT.trimEnd()), 'the shell prompt');
  const command = ['env', '-u', 'CI', 'node', path.relative(REPO, BIN) || BIN, 'browse', path.relative(REPO, SAMPLES), ...extraArgs].map(shellQuote).join(' ');
  term.type(command);
  term.keys('Enter');
  await term.waitFor(/all records/, 'the tree');
  await term.waitFor(/[✓✗∅]. \d\d-\d\d \d\d:\d\d:\d\d/, 'a record row');
  return term;
}

describe('traces browse in a real terminal (tmux)', { timeout: 4 * DEADLINE_MS }, () => {
  it('opens an agent record, sees the tool call, marks it, writes the exclusion file, quits and restores the terminal', async (t) => {
    if (skipWithoutTmux(t)) return;
    const dir = tempDir('traces-tmux-');
    const excludeFile = path.join(dir, 'traces-exclude.txt');
    const term = await launch(100, 30, ['--exclude', excludeFile]);
    try {
      assert.ok(term.alternateOn(), 'the browser draws on the alternate screen');
      // Move down the tree to the agent's tool-call module, one key at a time: each `j` is sent
      // only once the list pane's title names the node the previous one selected.
      let screen = term.screen();
      for (const node of TREE_PATH) {
        term.keys('j');
        screen = await term.waitFor((s) => listTitle(s).startsWith(`${node} `), `the tree cursor on ${node}`);
      }
      assert.match(screen, TOOL_MODULE);
      term.keys('Enter');
      await term.waitFor(/Enter open {2}h tree/, 'the list pane focused');
      term.keys('Enter');
      screen = await term.waitFor(/⚙ multiply/, 'the tool call');
      assert.match(screen, /"a": 423,/);
      assert.match(screen, /▍assistant/);

      term.keys('x');
      await term.waitFor(/x marked/, 'the mark');
      term.keys('w');
      await term.waitFor(/write marked call_ids to:/, 'the write prompt');
      term.keys('Enter');
      await term.waitFor(/wrote 1 call_id/, 'the write message');

      term.keys('q');
      screen = await term.waitFor((s) => !/traces browse/.test(s) && s.trimEnd().endsWith(PROMPT.trimEnd()), 'the shell prompt after quitting');
      assert.equal(term.alternateOn(), false, 'the alternate screen is left');
      assert.match(screen, /browse'? '?samples\/synalinks/, 'the command line typed before is back on screen');

      assert.ok(existsSync(excludeFile));
      const firstCallId = (JSON.parse(readFileSync(TOOL_FILE, 'utf8').split('\n')[0]) as { call_id: string }).call_id;
      const ids = readFileSync(excludeFile, 'utf8')
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'));
      assert.deepEqual(ids, [firstCallId]);
    } finally {
      term.kill();
    }
  });

  it('reflows on resize, fits 80x24, and Ctrl+C restores the terminal', async (t) => {
    if (skipWithoutTmux(t)) return;
    const term = await launch(120, 35);
    try {
      term.tmux('resize-window', '-t', term.session, '-x', '80', '-y', '24');
      const screen = await term.waitFor((s) => {
        const lines = s.split('\n');
        return lines[0].startsWith(' traces browse') && /j\/k move/.test(lines[22] ?? '');
      }, 'the layout redrawn at 80x24');
      const lines = screen.split('\n');
      assert.match(lines[1], /programs \/ modules\s+│/);
      assert.ok(lines.every((line) => line.length <= 80));
      term.keys('C-c');
      await term.waitFor((s) => !/traces browse/.test(s) && s.trimEnd().endsWith(PROMPT.trimEnd()), 'the shell prompt after Ctrl+C');
      assert.equal(term.alternateOn(), false);
    } finally {
      term.kill();
    }
  });

  it('at 80x24, 60x20 and 200x50 a person sees ? keys and q quit, every ok count and the whole help', async (t) => {
    if (skipWithoutTmux(t)) return;
    const [first, ...others] = SIZES;
    const term = await launch(first.width, first.height);
    try {
      for (const { width, height } of SIZES) {
        const what = `${width}x${height}`;
        if (width !== first.width || height !== first.height) {
          term.tmux('resize-window', '-t', term.session, '-x', String(width), '-y', String(height));
        }
        // The app keeps the terminal's last row free: its footer is the row above.
        const sized = (s: string): boolean => {
          const lines = s.split('\n');
          // Indexing done (the title bar counts the files read), so every count is final.
          return lines.length >= height - 1 && / traces browse .* \d+ files, /.test(lines[0] ?? '') && /\? keys {2}q quit$/.test((lines[height - 2] ?? '').trimEnd());
        };
        let screen = await term.waitFor((s) => sized(s) && /j\/k move {2}Enter records/.test(footer(s)), `${what}: the tree with its footer`);
        assertFits(screen, width, what);
        assertTreeBadges(screen, what);

        term.keys('Enter');
        screen = await term.waitFor((s) => /Enter open .*\? keys {2}q quit$/.test(footer(s)), `${what}: the records footer`);
        term.keys('Enter');
        screen = await term.waitFor((s) => /conversation/.test(s) && /j\/k scroll .*\? keys {2}q quit$/.test(footer(s)), `${what}: the record view footer`);
        assertFits(screen, width, what);

        // The help, a page at a time, until its last line has shown.
        term.keys('?');
        screen = await term.waitFor(/Moving/, `${what}: the help`);
        const rows: string[] = [];
        const last = HELP_TEXTS.at(-1)!;
        for (let page = 0; !helpTexts(rows).includes(last); page++) {
          assert.ok(page < 20, `${what}: the help never reached its last line:\n${helpTexts(rows)}`);
          const panel = screen.split('\n').slice(2, height - 3);
          for (const row of panel) if (!rows.includes(row) || row.trim() === '') rows.push(row);
          if (helpTexts(rows).includes(last)) break;
          const top = panel[0];
          term.keys('NPage');
          screen = await term.waitFor((s) => s.split('\n')[2] !== top, `${what}: the next page of help`);
        }
        for (const row of rows) assert.doesNotMatch(row, /…\s*$/, `${what}: a help row cut short: ${row}`);
        assert.deepEqual(missingHelp(rows), [], `${what}: help lines missing or cut`);
        term.keys('Escape');
        // The help's title row ("Esc closes") shows while it is open, however far it was paged
        // ("Moving" scrolls away): waiting on it keeps the next key from arriving glued to the
        // Escape, which a terminal then reads as Alt+key.
        await term.waitFor((s) => !/Esc closes/.test(s), `${what}: the help closed`);
        term.keys('h');
        await term.waitFor((s) => /Enter open .*\? keys {2}q quit$/.test(footer(s)), `${what}: back in the list`);
        term.keys('h');
        await term.waitFor((s) => /Enter records/.test(footer(s)), `${what}: back in the tree`);
      }
      assert.equal(others.length, 2);
    } finally {
      term.kill();
    }
  });
});
