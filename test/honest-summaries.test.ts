/**
 * What a run says at its end is what happened: a run that read no record says so and exits 2
 * (naming an exported dataset as one, and the default root by its folder); the export summary
 * gives examples and tokens per split, where report.json is, a gloss of each drop reason, and
 * says that personal data went unchecked.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { DROP_REASON_GLOSS, EXPORT_REASONS } from '../src/pipeline/drop-reasons.js';
import { chatTree, REPO, SAMPLES, runCli, tempDir, flat } from './helpers.js';

describe('a run that reads no record', () => {
  let work = '';
  let dataset = '';
  let text = '';

  before(() => {
    work = tempDir('traces-honest-');
    const out = path.join(work, 'ds');
    assert.equal(runCli(['export', SAMPLES, '--format', 'openai', '--out', out]).status, 0);
    dataset = path.join(out, 'training.jsonl');
    text = path.join(work, 'notes.jsonl');
    writeFileSync(text, 'first line of notes\nsecond line\n');
  });

  it('says an exported dataset is one, and exits 2, in every reading command', () => {
    for (const command of [['stats'], ['verify'], ['scan'], ['runs'], ['dedupe', '--dry-run'], ['filter', '--dry-run']]) {
      const result = runCli([...command, dataset]);
      assert.equal(result.status, 2, `${command[0]}: ${result.stderr}`);
      // runs groups calls and counts no lines: it names the file only.
      const found = command[0] === 'runs' ? /\(1 file\)/ : /\(1 file: 14 damaged lines/;
      assert.match(result.stderr, new RegExp(`^traces: no record read from .*training\\.jsonl ${found.source}`, 'm'), command[0]);
      assert.match(result.stderr, /training\.jsonl looks like an exported dataset \(its lines have "messages" and no "call_id"\).*traces validate .*training\.jsonl --format/, command[0]);
      assert.doesNotMatch(result.stdout, /records\s+0/, `${command[0]}: no table of zeros`);
    }
  });

  it('export writes nothing, where it used to write an empty dataset and exit 0', () => {
    for (const format of ['nemo', 'ask-recording']) {
      const out = path.join(work, `from-text-${format}`);
      const result = runCli(['export', text, '--format', format, '--out', out]);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, /^traces: no record read from .*notes\.jsonl \(1 file: 2 damaged lines\): name a Synalinks trace folder/m);
      assert.doesNotMatch(result.stderr, /looks like an exported dataset/);
      assert.equal(existsSync(path.join(out, 'training.jsonl')), false);
      assert.equal(existsSync(path.join(out, 'report.json')), false);
    }
  });

  it('stats --json still prints what it found, then says so and exits 2', () => {
    const result = runCli(['stats', text, '--json']);
    assert.equal(result.status, 2);
    const json = JSON.parse(result.stdout) as { records: number; damaged_lines: number };
    assert.deepEqual([json.records, json.damaged_lines], [0, 2]);
    assert.match(result.stderr, /the first .*notes\.jsonl:1: /);
  });

  it('names the default root by its folder', () => {
    const home = path.join(work, 'home');
    mkdirSync(path.join(home, '.synalinks'), { recursive: true });
    const env = { HOME: home, SYNALINKS_HOME: '' };
    const result = runCli(['stats'], { env });
    assert.equal(result.status, 2);
    assert.ok(result.stderr.includes(`no trace file found under ${path.join(home, '.synalinks')} (the default root: $SYNALINKS_HOME, else ~/.synalinks)`), result.stderr);
    assert.doesNotMatch(result.stderr, /\(default root\)/);
  });
});

describe('the export summary', () => {
  let out = '';
  let stderr = '';
  let report: { examples: Record<string, number>; tokens: Record<string, number>; dropped: Record<string, number> };

  before(() => {
    out = path.join(tempDir('traces-honest-'), 'ds');
    const result = runCli(['export', SAMPLES, '--format', 'nemo', '--out', out, '--validation-fraction', '0.5']);
    assert.equal(result.status, 0, result.stderr);
    stderr = result.stderr;
    report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
  });

  it('gives examples and tokens per split, as report.json counts them', () => {
    for (const split of ['training', 'validation']) {
      const n = report.examples[split];
      const tokens = report.tokens[split].toLocaleString('en-US');
      assert.match(stderr, new RegExp(`^  ${split} +${n} examples? +${tokens} tokens$`, 'm'), stderr);
    }
  });

  it('says where report.json is', () => {
    assert.match(stderr, new RegExp(`^report: ${path.join(out, 'report.json').replaceAll('/', '\\/')}$`, 'm'));
  });

  it('glosses each reason it dropped for, with its count', () => {
    const dropped = Object.entries(report.dropped).filter(([, n]) => n > 0);
    assert.ok(dropped.length >= 3);
    for (const [reason, n] of dropped) {
      const gloss = DROP_REASON_GLOSS[reason];
      assert.ok(gloss, `${reason} has a gloss`);
      assert.ok(stderr.split('\n').some((line) => line.startsWith(`  ${reason} `)), `${reason} starts a line: ${stderr}`);
      assert.ok(flat(stderr).includes(` ${reason} ${n} ${flat(gloss)}`), `${reason}: ${stderr}`);
    }
    assert.match(stderr, /prefix +\d+ +an earlier agent step, contained in a later one/);
  });

  it('every reason an export can drop for has a gloss, and docs/curation.md shows the same words', () => {
    const doc = readFileSync(path.join(REPO, 'docs', 'curation.md'), 'utf8');
    for (const reason of EXPORT_REASONS) assert.ok(DROP_REASON_GLOSS[reason], reason);
    for (const [reason, gloss] of Object.entries(DROP_REASON_GLOSS)) {
      assert.ok(doc.includes(`| \`${reason}\` | ${gloss.replaceAll('|', '\\|')} |`), `docs/curation.md: ${reason}`);
    }
  });

  it('says personal data is not checked unless --scrub secrets,pii, even when nothing was redacted', () => {
    const tree = chatTree(['Write to alice.martin@example.com about the invoice', 'What is 2 + 2?', 'Name three rivers']);
    const secretsOnly = runCli(['export', tree, '--format', 'nemo', '--out', path.join(tempDir('traces-honest-'), 'ds')]);
    assert.equal(secretsOnly.status, 0, secretsOnly.stderr);
    assert.match(secretsOnly.stderr, /^redacted nothing: no secret found;/m);
    assert.match(flat(secretsOnly.stderr), / redacted nothing: no secret found; personal data \(email addresses, phone numbers, …\) is not checked unless --scrub secrets,pii /);
    const withPii = runCli(['export', tree, '--format', 'nemo', '--out', path.join(tempDir('traces-honest-'), 'ds'), '--scrub', 'secrets,pii']);
    assert.equal(withPii.status, 0, withPii.stderr);
    assert.match(withPii.stderr, /^redacted 1 value by kind: email 1$/m);
  });
});

describe('scan previews', () => {
  it('a value masked whole still says how long it is; nothing of it is printed', () => {
    const tree = chatTree(['Ping 1.2.3.4 and report', 'What is 2 + 2?']);
    const result = runCli(['scan', tree, '--kinds', 'pii']);
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /^ipv4 \(pii\): 1$/m);
    assert.match(result.stdout, /messages\[0\]\.content: … \(7 characters\)$/m);
    assert.doesNotMatch(result.stdout, /1\.2\.3\.4/);
    const json = JSON.parse(runCli(['scan', tree, '--kinds', 'pii', '--json']).stdout) as { details: { preview: string; length: number }[] };
    assert.deepEqual(json.details.map((d) => [d.preview, d.length]), [['…', 7]]);
  });
});

