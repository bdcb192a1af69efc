/**
 * The files traces keeps for itself and the messages it prints hold whatever the records hold:
 * an id is never joined with a character an id may hold; every JSONL line any writer writes
 * reads whole however a reader splits lines; an existing output is refused before the work;
 * a refused line says what is wrong with its bytes; a failure of the temporary folder names it.
 */
import assert from 'node:assert/strict';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { describeFileSystemError } from '../src/errors.js';
import { discover } from '../src/sources/discover.js';
import { OtherRecords } from '../src/ui/other-records.js';
import { REPO, runCli, runCliJson, SAMPLES, synalinksLine, tempDir, flat } from './helpers.js';

const OTEL = path.join(REPO, 'test', 'fixtures', 'otel');

/** Every file under `dir` whose name ends in `.jsonl`. */
function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** A tree of one module whose records are these (call_id, user text, answer). */
function treeOf(records: { callId: string; user: string; answer: string; tool?: boolean }[]): string {
  const tree = path.join(tempDir('traces-bookkeeping-'), 'tree');
  mkdirSync(path.join(tree, 'prog', 'gen'), { recursive: true });
  const lines = records.map(({ callId, user, answer, tool }, index) => {
    const call = { id: `c${index}`, type: 'function', function: { name: 'look_up', arguments: JSON.stringify({ q: user }) } };
    const messages = tool
      ? [{ role: 'user', content: user }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: `c${index}`, content: answer }, { role: 'assistant', content: answer }]
      : [{ role: 'user', content: user }, { role: 'assistant', content: answer }];
    return synalinksLine({ index, callId, program: 'prog', module: 'gen', messages });
  });
  writeFileSync(path.join(tree, 'prog', 'gen', 'gen_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
  return tree;
}

describe('ids are kept apart, never joined with a character an id may hold', () => {
  it('a NUL (or any character) in a call_id: examples.jsonl is one valid row per example, with no pair fields in a supervised export', () => {
    const ids = ['a\u0000b\u0000c', 'x\u0000', '\u0000', 'plain', '["a","b","c"]'];
    const tree = treeOf(ids.map((callId, i) => ({ callId, user: `question ${i}`, answer: `answer ${i}` })));
    for (const format of ['openai', 'nemo']) {
      const out = path.join(tempDir('traces-bookkeeping-'), 'out');
      runCliJson(['export', tree, '--format', format, '--validation-fraction', '0', '--out', out, '--json']);
      const rows = readFileSync(path.join(out, '_traces', 'examples.jsonl'), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.equal(rows.length, ids.length, format);
      assert.deepEqual(rows.map((row) => row.call_id).sort(), [...ids].sort(), format);
      for (const row of rows) assert.deepEqual(Object.keys(row).filter((k) => k === 'rejected_call_id' || k === 'signal'), [], format);
    }
  });
});

describe('every JSONL line written reads whole, whichever writer wrote it', () => {
  it('NEL, U+2028 and U+2029 are escaped in every .jsonl of every format and shape (llamafactory/, _traces/ included)', () => {
    const breakers = 'one\u0085two\u2028three\u2029four';
    const tree = treeOf([
      { callId: `id-${breakers}-1`, user: `ask ${breakers}`, answer: `reply ${breakers}`, tool: true },
      { callId: `id-${breakers}-2`, user: `plain ${breakers}`, answer: `said ${breakers}` },
      { callId: `id-3`, user: `plain ${breakers}`, answer: `said ${breakers}` },
    ]);
    const runs = [
      ['--format', 'hf', '--hf-shape', 'prompt-completion', '--file-format', 'jsonl'],
      ['--format', 'hf', '--hf-shape', 'prompt-completion'],
      ['--format', 'hf'],
      ['--format', 'openai', '--manifest'],
      ['--format', 'nemo'],
    ];
    let files = 0;
    for (const args of runs) {
      const base = tempDir('traces-bookkeeping-');
      const out = path.join(base, 'out');
      const command = ['export', tree, ...args, ...(args.at(-1) === '--manifest' ? [path.join(base, 'manifest.jsonl')] : []), '--validation-fraction', '0', '--out', out];
      const result = runCli(command);
      assert.equal(result.status, 0, `${command.join(' ')}: ${result.stderr}`);
      for (const file of [...jsonlFiles(out), ...jsonlFiles(base).filter((f) => !f.startsWith(out))]) {
        files++;
        const text = readFileSync(file, 'utf8');
        if (text === '') continue;
        assert.doesNotMatch(text, /[\u0085\u2028\u2029]/, `${args.join(' ')}: ${path.relative(base, file)} holds a raw line breaker`);
        for (const line of text.trimEnd().split('\n')) JSON.parse(line);
      }
    }
    assert.ok(files >= 12, `${files} files checked`);
  });
});

describe('index --out DIR onto an existing index', () => {
  it('is refused up front, as a file --out is, and names --force', () => {
    const base = tempDir('traces-bookkeeping-');
    const out = path.join(base, 'idx');
    assert.equal(runCli(['index', SAMPLES, '--out', `${out}/`]).status, 0);
    const before = readFileSync(path.join(out, 'part-0.parquet'));
    for (const given of [`${out}/`, out]) {
      const result = runCli(['index', SAMPLES, '--out', given]);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, /already holds an index: pass --force/);
      assert.doesNotMatch(result.stderr, /appeared while traces was running|indexed/);
    }
    assert.deepEqual(readFileSync(path.join(out, 'part-0.parquet')), before);
  });
});

describe('a line a reader refuses says what its bytes are', () => {
  it('a span file (and a Synalinks file, an Ask file) starting with a BOM: the damaged line names the BOM', () => {
    const base = tempDir('traces-bookkeeping-');
    const spans = path.join(base, 'spans.jsonl');
    writeFileSync(spans, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(path.join(OTEL, 'ai-sdk-genai.jsonl'))]));
    const result = runCli(['stats', spans]);
    assert.match(flat(result.stdout), /spans\.jsonl:1: .*byte order mark \(BOM\)/);
    assert.doesNotMatch(result.stdout + result.stderr, /invalid number at byte 0/);
  });
});

describe('browse: a full temporary folder', () => {
  it('names the temporary folder and TMPDIR, not the span file being read', { skip: process.platform !== 'linux' && 'needs /dev/full' }, async () => {
    const discovery = await discover([path.join(OTEL, 'ai-sdk-genai.jsonl')], {});
    // /dev/full answers each write with the kernel's own ENOSPC, as a full disk does.
    const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
    const full = openSync('/dev/full', 'w');
    const writeSync = fs.writeSync;
    // Only the spill's writes: the run's temporary folder itself is made as usual.
    const isSpill = (fd: number): boolean => fs.readlinkSync(`/proc/self/fd/${fd}`).endsWith('records.jsonl');
    fs.writeSync = ((fd: number, ...rest: unknown[]) => (writeSync as (...a: unknown[]) => number)(isSpill(fd) ? full : fd, ...rest)) as typeof fs.writeSync;
    syncBuiltinESMExports();
    let failure: unknown = null;
    try {
      const spill = await OtherRecords.read(discovery.files);
      spill.remove();
      assert.fail(`read without error; it blamed: ${spill.errors.join('; ')}`);
    } catch (error) {
      failure = error;
    } finally {
      fs.writeSync = writeSync;
      syncBuiltinESMExports();
      closeSync(full);
    }
    const line = describeFileSystemError(failure) ?? String(failure);
    assert.match(line, /records\.jsonl: no space left on the device \(ENOSPC in write\): the temporary folder is full: .*TMPDIR/);
    assert.doesNotMatch(line, /ai-sdk-genai/);
  });
});
