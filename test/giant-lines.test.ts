/**
 * A line longer than a record may be (MAX_LINE_BYTES, 256 MiB): a crash can leave gigabytes of
 * zero bytes with no newline. Every command reports it as a damaged line `line_too_long`,
 * without reading it into memory, and reads the records around it. The files are sparse
 * (truncate), so a 2.1 GB line costs no disk; the commands other than stats and the browser
 * run with TRACES_TEST_MAX_LINE, a lower limit, over a 3 MB line.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { MAX_LINE_BYTES } from '../src/sources/lines.js';
import { IndexStore } from '../src/ui/index-store.js';
import { runCli, runCliJson, SAMPLES, tempDir, flat } from './helpers.js';

const SAMPLE_LINES = readFileSync(path.join(SAMPLES, 'my_program', 'generator', 'generator_20260707-101530.jsonl'), 'utf8').split('\n');

/** A trace file: a record, then `zeros` bytes of zeros as line 2 (sparse), then a record as line 3. */
function treeWithZeroLine(zeros: number): { tree: string; file: string } {
  const tree = tempDir('traces-giant-');
  mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
  const file = path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl');
  const first = `${SAMPLE_LINES[0]}\n`;
  writeFileSync(file, first);
  truncateSync(file, Buffer.byteLength(first) + zeros);
  appendFileSync(file, `\n${SAMPLE_LINES[1]}\n`);
  return { tree, file };
}

const TOO_LONG = /^line_too_long: the line is .*, more than the .* a record may be; skipped without being read/;

interface StatsJson {
  records: number;
  damaged_lines: number;
  damaged: { line: number; reason: string }[];
}

describe('a line longer than a record may be', () => {
  it('a sparse line of 2.1 GB is damaged line_too_long in stats and in the browser, not a crash', async () => {
    const zeros = 2150 * 2 ** 20;
    assert.ok(zeros > MAX_LINE_BYTES && zeros > 2 ** 31);
    const { tree } = treeWithZeroLine(zeros);
    const stats = runCliJson<StatsJson>(['stats', tree]);
    assert.equal(stats.records, 2);
    assert.equal(stats.damaged_lines, 1);
    assert.equal(stats.damaged[0]!.line, 2);
    assert.match(stats.damaged[0]!.reason, TOO_LONG);
    assert.match(stats.damaged[0]!.reason, /2\.25 GB/);

    const store = await IndexStore.open([tree]);
    try {
      await store.whenDone();
      const reasons = [0, 1, 2].map((i) => store.damagedReason(i));
      assert.equal(reasons.filter((r) => r !== null).length, 1);
      assert.match(reasons[1]!, TOO_LONG);
      assert.equal(store.record(0)?.callId, JSON.parse(SAMPLE_LINES[0]!).call_id);
      assert.equal(store.record(2)?.callId, JSON.parse(SAMPLE_LINES[1]!).call_id);
      // Shown by its start only.
      assert.ok(store.readBytes(1).length < 2 ** 20);
    } finally {
      store.close();
    }
  });

  describe('every command, with a lower limit', () => {
    const env = { TRACES_TEST_MAX_LINE: String(2 ** 20) };
    let tree: string;
    let work: string;
    before(() => {
      ({ tree } = treeWithZeroLine(3 * 2 ** 20));
      work = tempDir('traces-giant-out-');
    });

    it('stats, verify, scan, index and runs read the two records and report the line', () => {
      const stats = runCliJson<StatsJson>(['stats', tree], { env });
      assert.equal(stats.records, 2);
      assert.match(stats.damaged[0]!.reason, TOO_LONG);
      const verify = runCli(['verify', tree], { env });
      assert.equal(verify.status, 0, verify.stderr);
      assert.match(verify.stdout + verify.stderr, /2 records checked, 0 mismatches, 1 damaged line/);
      const scan = runCli(['scan', tree], { env });
      assert.match(scan.stdout + scan.stderr, /2 records scanned, 0 findings, 1 damaged line/);
      const index = runCli(['index', tree, '--out', path.join(work, 'idx.parquet')], { env });
      assert.equal(index.status, 0, index.stderr);
      assert.match(flat(index.stderr), /:2: damaged line, not indexed: line_too_long/);
      assert.match(index.stderr, /indexed 2 records/);
      const runs = runCliJson<unknown[]>(['runs', tree], { env });
      assert.equal(runs.length, 2);
    });

    it('dedupe, filter and export keep or export the records and list the line as damaged', () => {
      for (const [command, extra] of [
        ['dedupe', []],
        ['filter', []],
        ['export', ['--format', 'openai']],
      ] as const) {
        const out = path.join(work, command);
        const run = runCli([command, tree, '--out', out, ...extra], { env });
        assert.equal(run.status, 0, `${command}: ${run.stderr}`);
        const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { line?: number; reason: string; detail?: string });
        const damaged = manifest.filter((entry) => entry.reason === 'damaged');
        assert.equal(damaged.length, 1, command);
        assert.equal(damaged[0]!.line, 2);
        assert.match(damaged[0]!.detail!, TOO_LONG);
        const written = readdirSync(out, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile() && entry.name.endsWith('.jsonl') && !entry.parentPath.includes('_traces'))
          .flatMap((entry) => readFileSync(path.join(entry.parentPath, entry.name), 'utf8').split('\n').filter((l) => l !== ''));
        assert.equal(written.length, 2, command);
      }
    });

    it('a line below the limit but longer than a read is still a record, read whole', () => {
      const record = JSON.parse(SAMPLE_LINES[0]!) as { messages: { content: string }[] };
      const long = tempDir('traces-giant-');
      mkdirSync(path.join(long, 'p', 'm'), { recursive: true });
      const line = SAMPLE_LINES[0]!.replace(JSON.stringify(record.messages[1]!.content), JSON.stringify('x'.repeat(900_000)));
      writeFileSync(path.join(long, 'p', 'm', 'm_20260101-000000.jsonl'), `${line}\n${SAMPLE_LINES[1]}\n`);
      const stats = runCliJson<StatsJson & { bytes: number }>(['stats', long], { env });
      assert.equal(stats.records, 2);
      assert.equal(stats.damaged_lines, 0);
    });

    it('validate reports the line as line_too_long, an error, and checks the others', () => {
      const file = path.join(work, 'training.jsonl');
      const example = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] });
      writeFileSync(file, `${example}\n`);
      truncateSync(file, example.length + 1 + 3 * 2 ** 20);
      appendFileSync(file, `\n${example}\n`);
      const run = runCli(['validate', file, '--format', 'openai', '--json'], { env });
      assert.equal(run.status, 1, run.stderr);
      const report = JSON.parse(run.stdout) as { examples: number; errors: { code: string; lines: number[]; message: string }[] };
      // And OpenAI's minimum of 10 training examples, a file-level class of its own.
      assert.deepEqual(report.errors.map((e) => [e.code, e.lines]), [['line_too_long', [2]], ['too_few_examples', []]]);
      assert.match(report.errors[0]!.message, /^the line is 3\.1 MB, more than the 1\.0 MB a record may be/);
      assert.equal(report.examples, 3);
    });
  });
});
