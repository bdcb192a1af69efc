/**
 * What the trainer rejects, caught before it is uploaded: tool-call sequences the chat API
 * refuses (a call left unanswered, a message between a call and its result, an id used twice)
 * and images beyond OpenAI's vision fine-tuning limits (over 10 MB, not JPEG/PNG/WEBP, more
 * than 64 in one example). `export` drops such a record with a named reason and a detail, and
 * `validate` reports a file holding one with an error of the same name.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { runCli, SAMPLES, tempDir } from './helpers.js';

const TEMPLATE = JSON.parse(readFileSync(path.join(SAMPLES, 'my_program', 'generator', 'generator_20260707-101530.jsonl'), 'utf8').split('\n')[0]!) as Record<string, unknown> & { messages: unknown[] };

type Message = Record<string, unknown>;
const call = (id: string, name = 'calculate') => ({ id, type: 'function', function: { name, arguments: '{"expression":"2+2"}' } });
const calls = (...list: ReturnType<typeof call>[]): Message => ({ role: 'assistant', content: '', tool_calls: list });
const result = (id: string, content = '4'): Message => ({ role: 'tool', content, tool_call_id: id });
const user = (text: string): Message => ({ role: 'user', content: text });
const answer: Message = { role: 'assistant', content: 'It is 4.' };

/** A PNG data URL of `bytes` bytes (the signature, then zeros): its size is what is checked, not its pixels. */
function png(bytes: number): { type: 'image_url'; image_url: { url: string } } {
  const body = Buffer.alloc(bytes);
  Buffer.from('89504e470d0a1a0a', 'hex').copy(body);
  return { type: 'image_url', image_url: { url: `data:image/png;base64,${body.toString('base64')}` } };
}
const gif = { type: 'image_url', image_url: { url: `data:image/gif;base64,${Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(64)]).toString('base64')}` } };
const withImages = (text: string, images: unknown[]): Message => ({ role: 'user', content: [{ type: 'text', text }, ...images] });

/** Each case: the recorded messages, and the reason export drops it for (null: kept). */
const CASES: [string, Message[], string | null][] = [
  ['answered', [user('q1'), calls(call('c1'), call('c2', 'search')), result('c1'), result('c2'), answer], null],
  ['half-answered', [user('q2'), calls(call('c1'), call('c2', 'search')), result('c1'), answer], 'tool_sequence'],
  ['user-between', [user('q3'), calls(call('c1')), user('hurry'), result('c1'), answer], 'tool_sequence'],
  ['same-id-twice', [user('q4'), calls(call('c1')), result('c1'), calls(call('c1', 'search')), result('c1', 'Toulouse'), answer], 'tool_sequence'],
  ['image-over-10MB', [withImages('q5', [png(10_000_001)]), answer], 'image_too_large'],
  ['gif', [withImages('q6', [gif]), answer], 'image_format'],
  ['70-images', [withImages('q7', Array.from({ length: 70 }, () => png(100))), answer], 'too_many_images'],
  ['64-images', [withImages('q8', Array.from({ length: 64 }, () => png(100))), answer], null],
  ['image-of-10MB', [withImages('q9', [png(10_000_000)]), answer], null],
];

function record(i: number, messages: Message[]): string {
  const hex = (n: number) => n.toString(16).padStart(12, '0');
  return JSON.stringify({ ...TEMPLATE, call_id: `00000000-0000-4000-8000-${hex(i)}`, messages, inputs_hash: i.toString(16).padStart(64, '0') });
}

interface Drop {
  call_id?: string;
  reason: string;
  detail?: string;
}

describe('what the trainer rejects', () => {
  let tree: string;
  let work: string;
  before(() => {
    tree = tempDir('traces-trainer-');
    work = tempDir('traces-trainer-out-');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    writeFileSync(path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl'), CASES.map(([, messages], i) => `${record(i + 1, messages)}\n`).join(''));
  });

  for (const format of ['openai', 'nemo']) {
    it(`export --format ${format} drops each with its reason and a detail, and keeps the rest`, () => {
      const out = path.join(work, format);
      const run = runCli(['export', tree, '--format', format, '--out', out]);
      assert.equal(run.status, 0, run.stderr);
      const drops = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Drop);
      const byCase = new Map(drops.map((d) => [Number.parseInt(d.call_id!.slice(-12), 16) - 1, d]));
      CASES.forEach(([name, messages, reason], i) => {
        // NeMo writes no images at all: an example with one is not representable there.
        const images = messages.some((m) => Array.isArray(m.content));
        const expected = format === 'nemo' && images ? 'not_representable' : reason;
        assert.equal(byCase.get(i)?.reason ?? null, expected, name);
        if (expected !== null) assert.ok((byCase.get(i)!.detail ?? '').length > 0, name);
      });
      assert.match(byCase.get(1)!.detail!, /tool call "c2" of message 1 is not answered/);
      assert.match(byCase.get(2)!.detail!, /message 2 \(user\) comes between tool call "c1" of message 1 and its result \(message 3\)/);
      assert.match(byCase.get(3)!.detail!, /"c1" is used again/);
      const written = ['training.jsonl', 'validation.jsonl'].flatMap((name) => (existsSync(path.join(out, name)) ? readFileSync(path.join(out, name), 'utf8').split('\n').filter((l) => l !== '') : []));
      assert.equal(written.length, CASES.length - drops.length);
    });
  }

  it('validate reports each as an error of the same name, on its line', () => {
    // The lines as an OpenAI file would hold them (what export would have written, were it not for the rule).
    const lines = CASES.map(([, messages]) => JSON.stringify({ messages }));
    const file = path.join(work, 'training.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const run = runCli(['validate', file, '--format', 'openai', '--json']);
    assert.equal(run.status, 1, run.stderr);
    const report = JSON.parse(run.stdout) as { errors: { code: string; lines: number[] }[] };
    const found = Object.fromEntries(report.errors.map((e) => [e.code, e.lines]));
    assert.deepEqual(found.tool_sequence, [2, 3, 4]);
    assert.deepEqual(found.image_too_large, [5]);
    assert.deepEqual(found.image_format, [6]);
    assert.deepEqual(found.too_many_images, [7]);
    // And OpenAI's minimum of 10 training examples: the file holds a handful.
    assert.deepEqual(Object.keys(found).sort(), ['image_format', 'image_too_large', 'too_few_examples', 'too_many_images', 'tool_sequence']);
  });
});
