/**
 * Signals that match nothing (issue 52): a --scores, --exclude or --keep-list file none of whose
 * ids is a record's call_id, or a --decontaminate file that can match no record, changed
 * nothing in silence. Each is said on stderr with the form the records' ids take (an OTLP
 * call_id is `<trace id>:<span id>`), and the run exits non-zero.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { chatTree, FIXTURES, runCli, tempDir } from './helpers.js';

const OTLP = path.join(FIXTURES, 'otel', 'openllmetry.jsonl');

function file(name: string, text: string): string {
  const at = path.join(tempDir('traces-signals-'), name);
  writeFileSync(at, text);
  return at;
}

describe('a signal none of whose ids meets a record', () => {
  const tree = chatTree(['What is the boiling point of water?', 'How far is the moon?']);

  it('--exclude: says so with the records\' id form, exits 1, writes nothing', () => {
    const list = file('exclude.txt', 'call-1\ncall-2\n');
    const out = path.join(tempDir('traces-signals-out-'), 'out');
    const result = runCli(['export', tree, '--format', 'openai', '--exclude', list, '--out', out]);
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /--exclude: none of its 2 call_ids is the call_id of any of the 2 records read/);
    assert.match(result.stderr, /look like uuids such as "00000000-0000-4000-8000-000000000000", the list's like "call-1"/);
    // One id that meets a record is enough: the run goes on, and names the ids it did not meet.
    const some = file('some.txt', 'call-1\n00000000-0000-4000-8000-000000000001\n');
    const ok = runCli(['export', tree, '--format', 'openai', '--exclude', some, '--dry-run']);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stderr, /--exclude: 1 of 2 listed call_ids not found/);
  });

  it("--scores on OTLP spans scored by span id alone: names <trace id>:<span id>, exits 1", () => {
    const spanIds: string[] = [];
    for (const line of readFileSync(OTLP, 'utf8').split('\n').filter((l) => l !== '')) {
      const document = JSON.parse(line) as { resourceSpans: { scopeSpans: { spans: { spanId: string }[] }[] }[] };
      for (const rs of document.resourceSpans) for (const ss of rs.scopeSpans) for (const span of ss.spans) spanIds.push(span.spanId);
    }
    const scores = file('scores.jsonl', spanIds.map((id, i) => JSON.stringify({ call_id: id, score: i % 2 })).join('\n') + '\n');
    const result = runCli(['export', OTLP, '--format', 'openai-preference', '--scores', scores, '--dry-run']);
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /--scores .*scores\.jsonl: none of its \d+ call_ids is the call_id of any of the \d+ records read \(no score would pair an answer\)/);
    assert.match(result.stderr, /<trace id>:<span id> \(an OTLP span's, in hex\) such as "[0-9a-f]{32}:[0-9a-f]{16}"/);
  });

  it('--keep-list: says so on stderr, and the run that writes nothing exits 1', () => {
    const list = file('keep.txt', 'nobody\n');
    const out = path.join(tempDir('traces-signals-out-'), 'out');
    const result = runCli(['export', tree, '--format', 'openai', '--keep-list', list, '--out', out]);
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /--keep-list: none of its 1 call_id is the call_id of any of the 2 records read/);
  });

  it('--decontaminate: a file whose items none can match (no field read, or every item too short) stops the run', () => {
    const wrongField = file('eval.jsonl', '{"task": "What is the boiling point of water at sea level in degrees?"}\n');
    const result = runCli(['export', tree, '--format', 'openai', '--decontaminate', wrongField, '--dry-run']);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /--decontaminate .*eval\.jsonl: no evaluation item read .*--decontaminate-field/);
    const short = file('short.txt', 'Boiling point?\nMoon distance?\n');
    const tooShort = runCli(['export', tree, '--format', 'openai', '--decontaminate', short, '--dry-run']);
    assert.equal(tooShort.status, 2, tooShort.stderr);
    assert.match(tooShort.stderr, /each of its 2 items is under 8 words/);
  });
});
