/**
 * A record orjson loads may hold a text longer than a JavaScript string can be (about 536 MB:
 * a tool's output, an image as base64). Such a record is no damaged line: what needs only
 * its bytes (stats, dedupe, verify, index) handles it as any other, and what needs it as a
 * string (export, --grep, scan) says so for that record and goes on. V8's own limit is
 * checked once, in-process; the commands are run with TRACES_TEST_MAX_TEXT, a lower limit,
 * rather than with half a gigabyte per test.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { decodeString, TextTooLongError } from '../src/canonical/scan.js';
import { SynalinksRecord } from '../src/sources/synalinks-record.js';
import { chatRows, rowText } from '../src/ui/chat-lines.js';
import { searchTextOf } from '../src/ui/record-text.js';
import { runCli, runCliJson, SAMPLES, tempDir, flat } from './helpers.js';

const LIMIT = '2000';
const LONG_RAW = 'Quelle est la capitale ? \\u00e9\\/ '.repeat(120);

/** JSON with keys sorted by code point at every depth: orjson's canonical form for values without numbers. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const TEMPLATE = readFileSync(path.join(SAMPLES, 'my_program', 'generator', 'generator_20260707-101530.jsonl'), 'utf8').split('\n')[0]!;

/**
 * The sample record with its call_id and its user message's content replaced (`contentJson`,
 * raw JSON text) and its inputs_hash made to match. The rest of the line keeps its recorded
 * text: parsing and writing it again would change `0.0` to `0`, and with it the config hash.
 */
function recordWithUserText(callId: string, contentJson: string): string {
  const record = JSON.parse(TEMPLATE) as { messages: { content: unknown }[]; outputs: unknown; call_id: string; inputs_hash: string };
  const recordedContent = JSON.stringify(record.messages[1].content);
  assert.ok(TEMPLATE.includes(recordedContent));
  record.messages[1].content = JSON.parse(contentJson);
  const inputs = record.outputs === null ? record.messages : record.messages.slice(0, -1);
  const inputsHash = createHash('sha256').update(sortedJson(inputs)).digest('hex');
  return TEMPLATE.replace(recordedContent, () => contentJson).replace(record.call_id, callId).replace(record.inputs_hash, inputsHash);
}

describe('a text longer than a JavaScript string can be', () => {
  let tree: string;
  const env = { TRACES_TEST_MAX_TEXT: LIMIT };
  const LONG_ID = '11111111-1111-4111-8111-111111111111';

  before(() => {
    tree = tempDir();
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    const records = [
      recordWithUserText(LONG_ID, `"${LONG_RAW}"`),
      recordWithUserText('22222222-2222-4222-8222-222222222222', '"What is the capital of Italy? \\u00e9"'),
      recordWithUserText('33333333-3333-4333-8333-333333333333', '"What is the capital of Spain?"'),
    ];
    writeFileSync(path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl'), records.join('\n') + '\n');
  });

  it("is refused with TextTooLongError at V8's own limit, with or without escapes", () => {
    const token = Buffer.alloc(0x1fffffe8 + 16, 0x61);
    token[0] = 0x22;
    token[token.length - 1] = 0x22;
    assert.throws(() => decodeString(token, 0, token.length), TextTooLongError);
    token[100] = 0x5c;
    token[101] = 0x6e;
    assert.throws(() => decodeString(token, 0, token.length), TextTooLongError);
  });

  it('verify recomputes its hash from the bytes, as orjson would: no text is built', () => {
    const result = runCliJson<{ checked: number; mismatches: unknown[] }>(['verify', tree], { env });
    assert.equal(result.checked, 3);
    assert.deepEqual(result.mismatches, []);
  });

  it('stats and dedupe count and keep it as any record', () => {
    assert.equal(runCliJson<{ ok: number; damaged_lines: number }>(['stats', tree], { env }).ok, 3);
    const out = path.join(tempDir(), 'out');
    const result = runCli(['dedupe', tree, '--out', out], { env });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(readFileSync(path.join(out, 'p', 'm', 'm_20260101-000000.jsonl'), 'utf8').split('\n').filter((l) => l !== '').length, 3);
  });

  it('export drops it with reason text_too_long, and exports the rest', () => {
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', tree, '--out', out, '--format', 'openai', '--validation-fraction', '0'], { env });
    assert.equal(result.status, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
    const drops = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { call_id: string; reason: string; detail: string });
    assert.deepEqual(drops.map((d) => [d.call_id, d.reason]), [[LONG_ID, 'text_too_long']]);
    assert.match(drops[0].detail, /longer than traces can hold as a string/);
    const examples = readdirSync(out).filter((f) => f.endsWith('.jsonl')).flatMap((f) => readFileSync(path.join(out, f), 'utf8').split('\n').filter((l) => l !== ''));
    assert.equal(examples.length, 2);
  });

  it('filter --grep drops it with reason text_too_long: it cannot be searched', () => {
    const out = path.join(tempDir(), 'out');
    const result = runCliJson<{ dropped: Record<string, number>; kept: number }>(['filter', tree, '--grep', 'capital', '--out', out], { env });
    assert.equal(result.kept, 2);
    assert.equal(result.dropped.text_too_long, 1);
  });

  it('scan lists it as not scanned and exits 1: no all-clear for what it could not read', () => {
    const result = runCli(['scan', tree, '--json'], { env });
    assert.equal(result.status, 1);
    const report = JSON.parse(result.stdout) as { records: number; not_scanned: { call_id: string; line: number }[] };
    assert.equal(report.records, 3);
    assert.deepEqual(report.not_scanned.map((r) => [r.call_id, r.line]), [[LONG_ID, 1]]);
    assert.match(flat(result.stderr), /m_20260101-000000\.jsonl:1: 11111111-.*: not scanned: /);
    assert.equal(runCli(['scan', tree], {}).status, 0, 'without the lower limit, the same record is scanned');
  });

  it('validate reports the line as text_too_long, an error, and checks the other lines', () => {
    const file = path.join(tempDir(), 'training.jsonl');
    const example = (text: string) => JSON.stringify({ messages: [{ role: 'user', content: text }, { role: 'assistant', content: 'Rome.' }] });
    writeFileSync(file, [example('x'.repeat(3000)), example('What is the capital of Italy?')].join('\n') + '\n');
    const result = runCli(['validate', file, '--format', 'nemo', '--json'], { env });
    assert.equal(result.status, 1, result.stderr);
    const report = JSON.parse(result.stdout) as { examples: number; errors: { code: string; lines: number[] }[] };
    assert.equal(report.examples, 2);
    assert.deepEqual(report.errors.map((e) => [e.code, e.lines]), [['text_too_long', [1]]]);
  });

  it('the browser shows the start of a long text and says how much it left out, and searches its start', () => {
    const huge = `"capital ${'x'.repeat(20 << 20)} Lisbon"`;
    const line = Buffer.from(recordWithUserText(LONG_ID, huge));
    const record = new SynalinksRecord(line, { file: 'm.jsonl', line: 1, offset: 0 });
    const rows = chatRows(record, { width: 100, isOpen: () => true }).map(rowText);
    assert.ok(rows.some((r) => r.trim() === 'capital'), 'the start is shown');
    assert.ok(rows.some((r) => /… \(20\.\d MB more not shown\)/.test(r)), rows.filter((r) => r.includes('not shown')).join('\n'));
    const searched = searchTextOf(line, record.span('messages')!, null);
    assert.ok(searched.includes('capital xxx'));
    assert.ok(searched.length < 17 << 20, 'searched by its start');
  });
});
