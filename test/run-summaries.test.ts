/**
 * Issue 15, items 8-10: what a run says at its end. A dry run summarises drops by reason
 * (all of them with -v or --json), numbers in drop reasons are rounded for people without
 * turning true, --exclude says which ids it never met, export says what it redacted and
 * warns once, stats lists models and versions by count.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { Expected } from '../bench/generate.js';
import { IdList, isWellFormedId, readIdListFiles } from '../src/pipeline/id-list.js';
import { roundAgainst } from '../src/pipeline/limit-text.js';
import { GITHUB_TOKEN, OPENAI_KEY } from './fake-secrets.js';
import { FIXTURES, SAMPLES, chatTree, generatedTree, runCli, runCliJson, synalinksLine, tempDir, flat, UNWRAPPED } from './helpers.js';

interface Drop {
  call_id?: string;
  file: string;
  line: number;
  reason: string;
  detail?: string;
}

/** A float with more digits than a person reads: what rounding must remove. */
const RAW_FLOAT = /\d\.\d{7,}/;

describe('dry runs on a 3,000-record tree', () => {
  let tree = '';
  let expected: Expected;
  // Drops by cost and duration limits, duplicates and damaged lines: every kind of reason.
  const args = ['--status', 'ok', '--max-cost', '0.001', '--max-duration', '3'];

  before(() => {
    ({ tree, expected } = generatedTree({ mb: 1.5, seed: 5 }));
  });

  it('prints a summary by reason with the first few examples, not a line per drop, and says nothing was written', () => {
    const result = runCli(['dedupe', tree, ...args, '--dry-run'], UNWRAPPED);
    assert.equal(result.status, 0, result.stderr);
    const summary = runCliJson<{ dropped: Record<string, number>; damaged_lines: number; drops: Drop[] }>(['dedupe', tree, ...args, '--dry-run']);
    assert.ok(summary.drops.length > 100, `the tree drops many records (${summary.drops.length})`);
    const reasons = Object.entries(summary.dropped).filter(([, n]) => n > 0);
    assert.ok(reasons.length >= 3, JSON.stringify(summary.dropped));
    const lines = result.stdout.trimEnd().split('\n');
    // Per reason: a heading, at most 3 examples and a "… N more" line.
    assert.ok(lines.length <= (reasons.length + 1) * 5, `${lines.length} lines:\n${result.stdout}`);
    for (const [reason, n] of reasons) {
      assert.match(result.stdout, new RegExp(`would drop ${n.toLocaleString('en-US')} records as ${reason}`));
    }
    assert.match(result.stdout, new RegExp(`would drop ${expected.damaged_lines} lines? as damaged`));
    assert.doesNotMatch(result.stdout, RAW_FLOAT);
    assert.match(result.stdout, /filter \(cost \$0\.\d+ > --max-cost 0\.001\)/);
    assert.doesNotMatch(result.stderr, /manifest/, 'a dry run writes no manifest and must not point to one');
    assert.match(result.stderr, /dry run: nothing written; -v lists all [\d,]+ dropped records/);
  });

  it('-v lists every drop, --json holds every drop, and both agree with the manifest of the real run', () => {
    const verbose = runCli(['filter', tree, ...args, '--dry-run', '-v']);
    assert.equal(verbose.status, 0, verbose.stderr);
    const json = runCliJson<{ dropped: Record<string, number>; damaged_lines: number; drops: Drop[]; dry_run: boolean }>(['filter', tree, ...args, '--dry-run']);
    assert.equal(json.dry_run, true);
    const total = Object.values(json.dropped).reduce((a, b) => a + b, 0) + json.damaged_lines;
    assert.equal(json.drops.length, total);
    assert.equal(verbose.stdout.trimEnd().split('\n').length, total);
    assert.doesNotMatch(verbose.stdout, RAW_FLOAT);

    const out = path.join(tempDir(), 'out');
    const real = runCli(['filter', tree, ...args, '--out', out]);
    assert.equal(real.status, 0, real.stderr);
    const manifestPath = path.join(out, '_traces', 'manifest.jsonl');
    assert.match(flat(real.stderr), new RegExp(`listed in ${manifestPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const manifest = readFileSync(manifestPath, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Drop);
    const key = (d: Drop) => `${d.file}:${d.line}:${d.reason}:${d.detail ?? ''}`;
    assert.deepEqual(json.drops.map(key).sort(), manifest.map(key).sort());
    for (const drop of manifest) if (drop.detail !== undefined) assert.doesNotMatch(drop.detail, RAW_FLOAT, drop.detail);
  });

  it('stats lists models and synalinks versions by count, most first, ties by name', () => {
    const result = runCli(['stats', tree], UNWRAPPED);
    const json = runCliJson<{ models: Record<string, number>; synalinks_versions: Record<string, number> }>(['stats', tree]);
    for (const [label, counts] of [['models', json.models], ['synalinks', json.synalinks_versions]] as const) {
      const line = result.stdout.split('\n').find((l) => l.startsWith(`${label} `));
      assert.ok(line, label);
      const want = Object.entries(counts)
        .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, n]) => `${name} (${n})`)
        .join(', ');
      assert.equal(line.replace(/^\S+\s+/, ''), want);
      assert.ok(Object.keys(counts).length > 1, `the tree has several ${label}`);
    }
  });
});

describe('numbers in drop reasons', () => {
  it('rounds to 3 significant digits, keeping more when rounding would reach the limit', () => {
    assert.equal(roundAgainst(0.0029790000000000003, 0.001), '0.00298');
    assert.equal(roundAgainst(2.2578105600243585, 2), '2.26');
    // "0.003 > 0.003" would read false: the digits that make it true stay.
    assert.equal(roundAgainst(0.0030000001, 0.003), '0.0030000001');
    assert.equal(roundAgainst(0.0029790000000000003, 0.002979), '0.00298');
    assert.equal(roundAgainst(2.0004, 2), '2.0004');
    assert.equal(roundAgainst(1.9996, 2), '1.9996');
    for (let i = 0; i < 2000; i++) {
      const limit = Math.random() * 10;
      const value = limit + (Math.random() - 0.5) * 10 ** -Math.floor(Math.random() * 12);
      if (value === limit) continue;
      assert.equal(Number(roundAgainst(value, limit)) > limit, value > limit, `${value} vs ${limit}`);
    }
  });
});

describe('ids listed in a file but never met', () => {
  it('tells well-formed ids (UUIDs, klieo run:step) from lines that cannot be one', () => {
    for (const id of ['08ad8811-dff0-4419-b934-5695fb1686c2', '01J9Z3K7Q2:3', 'abc']) assert.ok(isWellFormedId(id), id);
    for (const id of ['"08ad8811"', 'a, b', 'a b', '{"call_id":"x"}', 'x\u0007', 'y'.repeat(300)]) assert.ok(!isWellFormedId(id), id);
  });

  it('counts listed, met, not found and malformed, naming where each was read', () => {
    const file = path.join(tempDir(), 'ids.txt');
    writeFileSync(file, '# header\nkeep-1\n\nkeep-2  # a comment\nnever-1\n"quoted"\nkeep-1\nnever-2\nnever-3\nnever-4\n');
    const list = readIdListFiles('--exclude', [file]);
    assert.equal(list.size, 6);
    assert.equal(list.meet('keep-1'), true);
    assert.equal(list.meet('keep-2'), true);
    assert.equal(list.meet('other'), false);
    const report = list.report();
    assert.deepEqual(
      { listed: report.listed, met: report.met, not_found: report.not_found, malformed: report.malformed },
      { listed: 6, met: 2, not_found: 4, malformed: 1 },
    );
    assert.deepEqual(report.not_found_ids[0], { id: 'never-1', file, line: 5 });
    assert.deepEqual(report.malformed_lines, [{ id: '"quoted"', file, line: 6 }]);
    const lines = list.describe('--exclude');
    assert.match(lines[0], /^--exclude: 4 of 6 listed call_ids not found in these records: never-1, never-2, never-3, … \(1 more\)$/);
    assert.match(lines[1], /1 line that cannot be a call_id .*ids\.txt:6 "\\"quoted\\""/);
    assert.deepEqual(new IdList().describe('--exclude'), []);
  });

  it('filter, dedupe and export report unknown and malformed --exclude ids on stderr and in their JSON', () => {
    const file = path.join(tempDir(), 'exclude.txt');
    // One real id (a status-dropped record still counts as found), two unknown, one malformed.
    writeFileSync(file, '08ad8811-dff0-4419-b934-5695fb1686c2\nno-such-id-1\nno-such-id-2\nid1, id2\n');
    for (const command of ['filter', 'dedupe']) {
      const result = runCli([command, SAMPLES, '--exclude', file, '--dry-run'], UNWRAPPED);
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stderr, /--exclude: 2 of 3 listed call_ids not found in these records: no-such-id-1, no-such-id-2\n/);
      assert.match(result.stderr, /--exclude: 1 line that cannot be a call_id .*exclude\.txt:4 "id1, id2"/);
      const json = runCliJson<{ exclude: { listed: number; met: number; not_found: number; malformed: number } }>([command, SAMPLES, '--exclude', file, '--dry-run']);
      assert.deepEqual(
        { listed: json.exclude.listed, met: json.exclude.met, not_found: json.exclude.not_found, malformed: json.exclude.malformed },
        { listed: 3, met: 1, not_found: 2, malformed: 1 },
      );
    }
    const out = path.join(tempDir(), 'ft');
    const result = runCli(['export', SAMPLES, '--format', 'openai', '--exclude', file, '--out', out]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stderr, /--exclude: 2 of 3 listed call_ids not found/);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
    assert.equal(report.exclude.not_found, 2);
    assert.deepEqual(report.exclude.not_found_ids.map((e: { id: string }) => e.id), ['no-such-id-1', 'no-such-id-2']);
  });

  it('says nothing when every listed id is found', () => {
    const file = path.join(tempDir(), 'exclude.txt');
    writeFileSync(file, '08ad8811-dff0-4419-b934-5695fb1686c2\n');
    const result = runCli(['filter', SAMPLES, '--exclude', file, '--dry-run']);
    assert.doesNotMatch(result.stderr, /--exclude:/);
  });
});

describe('end-of-run summaries', () => {
  it("the NeMo Customizer hint (each run exported up to its last step without tool results) only where an agent step was refused", () => {
    const agent = runCli(['export', SAMPLES, '--format', 'nemo-customizer', '--out', path.join(tempDir(), 'agent')]);
    assert.equal(agent.status, 0, agent.stderr);
    assert.match(agent.stderr, /^warning: some agent steps hold tool results/m);
    // Records that hold tool results in their prompt, with no earlier step recorded: no run to fall back on.
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'prog', 'gen'), { recursive: true });
    const call = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } };
    const lines = [0, 1, 2].map((index) =>
      synalinksLine({
        index,
        program: 'prog',
        module: 'gen',
        messages: [
          { role: 'user', content: `question ${index}` },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', content: 'found', tool_call_id: 'call_1' },
          { role: 'assistant', content: `answer ${index}` },
        ],
      }),
    );
    const plain = [3, 4].map((index) => synalinksLine({ index, program: 'prog', module: 'gen', messages: [{ role: 'user', content: `plain ${index}` }, { role: 'assistant', content: `answer ${index}` }] }));
    writeFileSync(path.join(tree, 'prog', 'gen', 'gen_20260101-000000.jsonl'), `${[...lines, ...plain].join('\n')}\n`);
    const standalone = runCli(['export', tree, '--format', 'nemo-customizer', '--out', path.join(tempDir(), 'standalone'), '--json']);
    assert.equal(standalone.status, 0, standalone.stderr);
    assert.equal(JSON.parse(standalone.stdout).dropped.not_representable, 3);
    assert.doesNotMatch(standalone.stderr, /agent steps hold tool results/);
  });

  it('filter --status exception,no_output says the ok records it leaves out were left out for their status, not that they failed', () => {
    const result = runCli(['filter', SAMPLES, '--status', 'exception,no_output', '--dry-run']);
    assert.equal(result.status, 0, result.stderr);
    const line = result.stderr.split('\n').find((l) => /^\s+status\s+\d+/.test(l));
    assert.ok(line !== undefined, result.stderr);
    assert.doesNotMatch(line, /failed/);
    assert.match(line, /its status \(ok, exception or no_output\) is not one --status keeps/);
  });


  it('export says how many values of which kinds it redacted, like report.json', () => {
    const tree = chatTree([`key ${OPENAI_KEY}`, `again ${OPENAI_KEY} and ${GITHUB_TOKEN}`, 'nothing here']);
    const out = path.join(tempDir(), 'ft');
    const result = runCli(['export', tree, '--format', 'nemo', '--out', out, '--validation-fraction', '0'], UNWRAPPED);
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
    const redactions = report.scrub.redactions as Record<string, number>;
    const total = Object.values(redactions).reduce((a, b) => a + b, 0);
    assert.ok(total >= 3, JSON.stringify(redactions));
    const kinds = Object.entries(redactions).map(([k, n]) => `${k} ${n}`);
    assert.match(result.stderr, new RegExp(`^redacted ${total} values by kind: .*; personal data .* is not checked unless --scrub secrets,pii$`, 'm'));
    for (const kind of kinds) assert.ok(result.stderr.includes(kind), `${kind} in ${result.stderr}`);

    const clean = runCli(['export', chatTree(['What is 2 + 2?', 'Name three rivers']), '--format', 'nemo', '--out', path.join(tempDir(), 'clean')], UNWRAPPED);
    assert.match(clean.stderr, /^redacted nothing: no secret found; personal data \(.*\) is not checked unless --scrub secrets,pii$/m);
    const none = runCli(['export', tree, '--format', 'nemo', '--scrub', 'none', '--out', path.join(tempDir(), 'none')], UNWRAPPED);
    assert.match(none.stderr, /^redacted nothing \(--scrub none\): neither secrets nor personal data were checked$/m);
  });

  it('an openai export under 10 training examples says on its last line that OpenAI will refuse the file, once, and never of the validation file', () => {
    const out = path.join(tempDir(), 'ft');
    const result = runCli(['export', SAMPLES, '--format', 'openai', '--out', out, '--validation-fraction', '0.5'], UNWRAPPED);
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
    assert.ok(report.examples.training < 10, 'the samples give fewer than 10 training examples');
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.at(-1), `openai will refuse ${path.join(out, 'training.jsonl')} as it is: ${report.examples.training} training examples: openai refuses a training file with fewer than 10 (a validation file, named validation*.jsonl, has no minimum)`);
    assert.equal(lines.filter((l) => /fewer than 10/.test(l)).length, 1, result.stderr);
    assert.deepEqual(report.refused_by_trainer, [{ dataset: null, files: ['training.jsonl'], reason: lines.at(-1)!.replace(/^.*? as it is: /, '') }]);
    // No file-level warning of it in either file: OpenAI documents no minimum for a validation file.
    assert.ok(!report.files.some((f: { warnings: { code: string }[] }) => f.warnings.some((w) => w.code === 'too_few_examples')));
    assert.ok(report.examples.validation > 0 && report.examples.validation < 10);
  });

  it('every export ends with where its files go (`next: …`), each target its own', () => {
    for (const [format, pattern] of [
      ['openai', /^next: create the fine-tuning job with training_file = the id of .*training\.jsonl and validation_file = the id of .*validation\.jsonl$/],
      ['nemo', /^next: and validation_dataset: the same with path_or_dataset_id: .*validation\.jsonl$/],
      ['nemo-customizer', /^next: register the dataset in the Entity Store and name it in the customization job/],
    ] as const) {
      const out = path.join(tempDir(), format);
      const result = runCli(['export', SAMPLES, '--format', format, '--out', out], UNWRAPPED);
      assert.equal(result.status, 0, result.stderr);
      const lines = result.stderr.trimEnd().split('\n');
      assert.match(lines.at(-1)!, pattern, result.stderr);
      assert.ok(lines.at(-2)!.startsWith('next: '), result.stderr);
    }
  });

  it('an hf folder says where it goes, and every file its next: lines name exists', () => {
    for (const [format, tree, count] of [
      ['hf', SAMPLES, 3],
      ['hf-preference', path.join(FIXTURES, 'genuine-pairs', 'tree'), 1],
    ] as const) {
      const out = path.join(tempDir(), format);
      const result = runCli(['export', tree, '--format', format, '--out', out], UNWRAPPED);
      assert.equal(result.status, 0, result.stderr);
      const next = result.stderr.trimEnd().split('\n').filter((line) => line.startsWith('next: '));
      assert.equal(next.length, 2, result.stderr);
      const named = next.join(' ').match(new RegExp(`${out.replaceAll('/', '\\/')}\\/[\\w./-]+`, 'g')) ?? [];
      assert.equal(named.filter((file) => file !== out).length, count, next.join('\n'));
      for (const file of named) assert.ok(existsSync(file), `${file} (named by ${format}'s next: lines) exists`);
    }
  });

  it('says what the file holds that the records did not: inferred tool definitions with their call counts, and what became of reasoning', () => {
    const out = path.join(tempDir(), 'nc');
    const result = runCli(['export', SAMPLES, '--format', 'nemo-customizer', '--out', out], UNWRAPPED);
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
    const inferred = report.tools.inferred_definitions as { function: { name: string; description: string } }[];
    assert.ok(inferred.length > 0);
    for (const d of inferred) {
      const n = report.tools.inferred_calls[d.function.name];
      assert.equal(d.function.description, `Inferred by traces from ${n} recorded call${n === 1 ? '' : 's'}.`);
      assert.match(result.stderr, new RegExp(`^tools: .*${d.function.name} from ${n} calls?.*--tools FILE$`, 'm'));
    }
    // The whole list on every line, plain answers too, and the console says why.
    const lines = readFileSync(path.join(out, 'training.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.ok(lines.every((l) => Array.isArray(l.tools)) && lines.some((l) => l.messages.at(-1).tool_calls === undefined));
    assert.equal(report.tools.every_line, true);
    assert.match(result.stderr, /^tools: every line carries the whole tool list, plain answers too: nemo-customizer reads one schema per file, set by its first line$/m);
    // Reasoning: counted from the records, and what the target did with it.
    const withThink = lines.filter((l) => l.messages.some((m: { content?: string }) => typeof m.content === 'string' && m.content.startsWith('<think>'))).length;
    assert.ok(report.reasoning_recorded.examples > 0);
    assert.ok(withThink <= report.reasoning_recorded.examples && withThink > 0);
    assert.match(result.stderr, new RegExp(`^reasoning: recorded in ${report.reasoning_recorded.examples} examples? \\(${report.reasoning_recorded.turns} assistant turns?\\); nemo-customizer: inlined as <think>…</think> before the answer`, 'm'));
    const openai = runCli(['export', SAMPLES, '--format', 'openai', '--out', path.join(tempDir(), 'oa')], UNWRAPPED);
    assert.match(openai.stderr, /^reasoning: recorded in \d+ examples? \(\d+ assistant turns?\); openai: left out$/m);
  });
});
