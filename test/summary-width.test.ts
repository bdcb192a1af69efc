/**
 * Issue 52: summary lines fit 80 columns without cutting words. Each command runs twice, once
 * at the default width and once as wide as it likes (COLUMNS): the first run's lines are at
 * most 80 columns unless one word alone (a path, a call_id) is longer, and its words are the
 * second run's, in order (wrapping split none and lost none).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SUMMARY_WIDTH, wrap, wrapLine } from '../src/format.js';
import { FIXTURES, runCli, SAMPLES, synalinksLine, tempDir } from './helpers.js';

const WIDE = '100000';

function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

/** Lines over the width that are more than one word: what wrapping must never leave. */
function overWide(text: string, width = SUMMARY_WIDTH): string[] {
  return text.split('\n').filter((line) => [...line].length > width && words(line).length > 1);
}

describe('wrapLine', () => {
  it('breaks between words only, continues under the text after the label columns, and leaves a line that fits alone', () => {
    const line = 'tokens (ok)     prompt 10,583, completion 1,169, reasoning 285, cached 6,784, as recorded (usage)';
    const wrapped = wrapLine(line);
    assert.deepEqual(wrapped, ['tokens (ok)     prompt 10,583, completion 1,169, reasoning 285, cached 6,784, as', '                recorded (usage)']);
    assert.deepEqual(wrapLine('short line'), ['short line']);
    const drop = '  duplicate          1  the same key as a kept record (--key, default: same prompt and model config in the same program and module)';
    for (const continued of wrapLine(drop).slice(1)) assert.match(continued, /^ {24}\S/);
  });

  it('keeps a word longer than the width whole on its own line, and every word in order', () => {
    const long = `/tmp/${'deep-folder-name/'.repeat(8)}file.jsonl`;
    const line = `dropped 3 records, each listed with its reason in ${long}: and after it more words that need a line of their own`;
    const wrapped = wrapLine(line);
    assert.ok(wrapped.includes(`  ${long}:`), wrapped.join('\n'));
    assert.deepEqual(words(wrapped.join('\n')), words(line));
    assert.deepEqual(overWide(wrapped.join('\n')), []);
    assert.equal(wrap(`${line}\n${line}`).split('\n').length, wrapped.length * 2);
  });
});

/** A tree whose program, module and file names and call_ids are long, with a refusal asked again under one key. */
function longNamesTree(): string {
  const tree = path.join(tempDir(), 'a-recordings-folder-with-a-rather-long-name-for-its-project', 'tree');
  const program = 'customer_support_assistant_for_the_enterprise_billing_department';
  const module = 'final_answer_generator_with_a_structured_output_schema_and_tools';
  const dir = path.join(tree, program, module);
  mkdirSync(dir, { recursive: true });
  const user = { role: 'user', content: 'How do I update the billing address on my account?' };
  const lines = [
    synalinksLine({ index: 0, callId: '0192a4b8-7c3d-7e4f-9a1b-2c3d4e5f6a7b', program, module, messages: [user, { role: 'assistant', content: "I'm sorry, but I can't help with that request." }] }),
    synalinksLine({ index: 1, callId: '0192a4b8-7c3d-7e4f-9a1b-2c3d4e5f6a7c', program, module, messages: [user, { role: 'assistant', content: 'Open Settings, then Billing, and edit the address.' }] }),
    synalinksLine({ index: 2, callId: '0192a4b8-7c3d-7e4f-9a1b-2c3d4e5f6a7d', program, module, messages: [user, { role: 'assistant', content: 'Open Settings, then Billing, and edit the address.' }] }),
    ...Array.from({ length: 12 }, (_, i) =>
      synalinksLine({ index: 3 + i, program, module, messages: [{ role: 'user', content: `Question number ${i} about invoices?` }, { role: 'assistant', content: `Answer ${i}: see the invoices page.` }] }),
    ),
  ];
  writeFileSync(path.join(dir, `${module}_20260707-101530.jsonl`), `${lines.join('\n')}\n{"cut short`);
  return tree;
}

/** Runs `args` at 80 columns and unbounded; `out` folders differ between the runs and are named OUT in both. */
function bothWidths(args: (out: string) => string[]): { narrow: string; wide: string; status: number } {
  const run = (columns: string) => {
    const out = path.join(tempDir(), 'out');
    const result = runCli(args(out), { env: { ...process.env, COLUMNS: columns } });
    return { text: `${result.stdout}\n${result.stderr}`.split(out).join('OUT'), status: result.status ?? -1 };
  };
  const narrow = run('80');
  const wide = run(WIDE);
  assert.equal(narrow.status, wide.status);
  return { narrow: narrow.text, wide: wide.text, status: narrow.status };
}

/** The stats report less its group tables, which are as wide as their cells. */
function statsProse(text: string): string {
  const blocks = text.split('\n\n');
  return [blocks[0], ...blocks.slice(3)].join('\n\n');
}

describe('every summary line fits 80 columns, on the samples and on long names', () => {
  const trees = [
    { name: 'samples', tree: SAMPLES },
    { name: 'long names', tree: longNamesTree() },
  ];
  const pairs = path.join(tempDir(), 'pairs');
  cpSync(path.join(FIXTURES, 'genuine-pairs', 'tree'), pairs, { recursive: true });

  for (const { name, tree } of trees) {
    const commands: [string, (out: string) => string[], ((text: string) => string)?][] = [
      ['stats', () => ['stats', tree], statsProse],
      ['verify', () => ['verify', tree]],
      ['scan', () => ['scan', tree]],
      ['dedupe --dry-run', () => ['dedupe', tree, '--dry-run']],
      ['dedupe', (out) => ['dedupe', tree, '--out', out]],
      ['filter', (out) => ['filter', tree, '--status', 'ok', '--out', out]],
      ['export hf', (out) => ['export', tree, '--format', 'hf', '--out', out]],
      ['export openai', (out) => ['export', tree, '--format', 'openai', '--out', out]],
      ['export nemo', (out) => ['export', tree, '--format', 'nemo', '--out', out]],
      ['export --dry-run', () => ['export', tree, '--format', 'nemo', '--dry-run']],
      ['index', (out) => ['index', tree, '--out', out]],
    ];
    for (const [command, args, prose] of commands) {
      it(`${command} on ${name}`, () => {
        const { narrow, wide, status } = bothWidths(args);
        assert.ok(status === 0 || status === 1, `${command}: exit ${status}\n${narrow}`);
        const [shown, whole] = prose === undefined ? [narrow, wide] : [prose(narrow), prose(wide)];
        assert.deepEqual(overWide(shown), [], `${command} on ${name}:\n${narrow}`);
        assert.deepEqual(words(shown), words(whole));
        // The test can fail: these summaries hold lines longer than 80 columns before wrapping.
        if (command.startsWith('export') || command.startsWith('dedupe')) assert.ok(overWide(whole).length > 0, `the unwrapped ${command} has long lines to wrap`);
      });
    }
  }

  it('export hf-preference and validate of the folders', () => {
    const { narrow, wide, status } = bothWidths((out) => ['export', pairs, '--format', 'hf-preference', '--out', out]);
    assert.equal(status, 0, narrow);
    assert.deepEqual(overWide(narrow), [], narrow);
    assert.deepEqual(words(narrow), words(wide));
    for (const format of ['hf', 'openai']) {
      const out = path.join(tempDir(), format);
      assert.equal(runCli(['export', SAMPLES, '--format', format, '--out', out]).status, 0);
      const checked = bothWidths(() => ['validate', out]);
      assert.deepEqual(overWide(checked.narrow), [], checked.narrow);
      assert.deepEqual(words(checked.narrow), words(checked.wide));
    }
  });

  it('index, keep-list and map on long names', () => {
    const tree = longNamesTree();
    const work = tempDir();
    const index = path.join(work, 'a-folder-of-indexes-one-per-host-of-the-sharded-run/');
    assert.equal(runCli(['index', tree, '--format', 'nemo', '--out', index]).status, 0);
    const list = bothWidths((out) => ['keep-list', index, '--out', `${out}-keep-list-of-the-whole-run.txt`, '--tools-out', `${out}-tools-inferred-once.json`]);
    assert.equal(list.status, 0, list.narrow);
    assert.deepEqual(overWide(list.narrow), [], list.narrow);
    assert.deepEqual(words(list.narrow), words(list.wide));
    assert.ok(overWide(list.wide).length > 0, list.wide);
    const keepList = path.join(work, 'keep.txt');
    const tools = path.join(work, 'tools.json');
    assert.equal(runCli(['keep-list', index, '--out', keepList, '--tools-out', tools]).status, 0);
    const file = path.join(tree, ...readdirSync(tree, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl')).slice(0, 1));
    const mapped = runCli(['map', '--format', 'nemo', '--keep-list', keepList, '--inferred-tools', tools], { input: readFileSync(file, 'utf8') });
    assert.equal(mapped.status, 0, mapped.stderr);
    assert.deepEqual(overWide(mapped.stderr), [], mapped.stderr);
  });

  it('--json is not wrapped', () => {
    const { narrow } = bothWidths(() => ['dedupe', longNamesTree(), '--dry-run', '--json']);
    const json = narrow.slice(0, narrow.lastIndexOf('}') + 1);
    assert.ok(JSON.parse(json.slice(json.indexOf('{'))));
    assert.ok(json.split('\n').some((line) => line.length > SUMMARY_WIDTH), 'a JSON line keeps its whole value');
  });
});
