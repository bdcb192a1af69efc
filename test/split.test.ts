import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalize, canonicalValueText } from '../src/canonical/canonical.js';
import { assignSplit, groupFraction, groupKey } from '../src/pipeline/split.js';
import type { Message } from '../src/record.js';
import { runCli, synalinksLine, tempDir } from './helpers.js';
import { fakeToken, OPENAI_KEY } from './fake-secrets.js';

const chat = (user: unknown): Message[] => [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: user },
  { role: 'assistant', content: 'ok' },
];

describe('groupKey', () => {
  it('is the first user message, whatever the program', () => {
    assert.equal(groupKey('prog', chat('Hi')), 'user\u0000hi');
    // Two programs sent the same first message: one group, or it could straddle the split.
    assert.equal(groupKey('prog', chat('Hi')), groupKey('other', chat('Hi')));
    assert.notEqual(groupKey('prog', chat('Hi')), groupKey('prog', chat('Hello')));
    // Steps of one agent run share the first user message, so they share a group.
    const step1 = chat('Plan a trip');
    const step2 = [...step1, { role: 'tool', content: 'x', tool_call_id: 'a' }, { role: 'user', content: 'more' }];
    assert.equal(groupKey('p', step1), groupKey('p', step2));
  });

  it('compares text as a reader would: case, spacing and compatibility forms set aside', () => {
    const key = groupKey('p', chat('What is 2+2?'));
    for (const variant of ['what is 2+2?', '  What is 2+2? ', 'What\tis\n\n2+2?', 'ＷＨＡＴ is 2＋2?', 'What\u00a0is 2+2?', '\ufeffWhat is 2+2?', 'What is\u200b 2+2?', 'Wh\u00adat is 2+2?\u2060']) {
      assert.equal(groupKey('p', chat(variant)), key, JSON.stringify(variant));
    }
    assert.equal(groupKey('p', chat([{ type: 'text', text: 'WHAT IS ' }, { type: 'text', text: '2+2?' }])), key);
    assert.notEqual(groupKey('p', chat('What is 2+3?')), key);
  });

  it('uses canonical JSON for non-string content, whatever the key order', () => {
    assert.equal(groupKey('p', chat({ b: 1, a: [1, { d: 2, c: 3 }] })), 'user\u0000{"a":[1,{"c":3,"d":2}],"b":1}');
    assert.equal(groupKey('p', chat({ b: 1, a: 2 })), groupKey('p', chat({ a: 2, b: 1 })));
    // Dict content is written as its JSON text: its strings are compared as a reader would, as plain text is.
    assert.equal(groupKey('p', chat({ query: 'What is 2+2?' })), groupKey('p', chat({ query: 'what  is 2＋2?' })));
    assert.notEqual(groupKey('p', chat({ query: 'What is 2+2?' })), groupKey('p', chat({ query: 'What is 2+3?' })));
  });

  it('is the text as exported: text parts joined, as every target writes them, are the string they spell', () => {
    const parts = chat([
      { type: 'text', text: 'What is ' },
      { type: 'text', text: '2+2?' },
    ]);
    assert.equal(groupKey('p', parts), groupKey('p', chat('What is 2+2?')));
    // An image part keeps the parts form in every export: its group is the parts' JSON.
    const image = chat([{ type: 'text', text: 'What is 2+2?' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }]);
    assert.notEqual(groupKey('p', image), groupKey('p', chat('What is 2+2?')));
    assert.equal(groupKey('p', chat(null)), groupKey('p', chat('')));
  });

  it('passes over user messages without text: the question is the first one that has some', () => {
    const question = chat('What is 2+2?');
    for (const empty of ['', null, ' \n', [{ type: 'text', text: '' }]]) {
      const withEmptyFirst = [question[0]!, { role: 'user', content: empty }, ...question.slice(1)];
      assert.equal(groupKey('p', withEmptyFirst), groupKey('p', question), JSON.stringify(empty));
    }
    // Only empty user messages: no question to group by, so the program.
    assert.equal(groupKey('p', chat('')), groupKey('p', [{ role: 'system', content: 'Be brief.' }, { role: 'assistant', content: 'ok' }]));
  });

  it('sorts keys by code point, not UTF-16 unit', () => {
    assert.equal(canonicalValueText({ '😀': 1, '！': 2 }), '{"！":2,"😀":1}');
  });

  it('groups records without a user message by program', () => {
    assert.equal(groupKey('p', [{ role: 'system', content: 's' }, { role: 'assistant', content: 'a' }]), 'program\u0000p');
    // Never the group of a user message that happens to read like a program name.
    assert.notEqual(groupKey('p', [{ role: 'assistant', content: 'a' }]), groupKey('q', chat('p')));
  });
});

describe('assignSplit', () => {
  it('gives the same input the same side', () => {
    for (let i = 0; i < 50; i++) {
      const key = groupKey('prog', chat(`question ${i}`));
      assert.equal(assignSplit(key, 42, 0.3), assignSplit(key, 42, 0.3));
    }
  });

  it('fraction 0 is always training, 1 always validation', () => {
    for (let i = 0; i < 200; i++) {
      assert.equal(assignSplit(`g${i}`, 1, 0), 'training');
      assert.equal(assignSplit(`g${i}`, 1, 1), 'validation');
    }
    assert.throws(() => assignSplit('g', 1, 1.5), RangeError);
    assert.throws(() => assignSplit('g', 1, Number.NaN), RangeError);
  });

  it('roughly matches the fraction over 1,000 groups', () => {
    const n = 1000;
    const validation = Array.from({ length: n }, (_, i) => assignSplit(`group ${i}`, 7, 0.1)).filter((s) => s === 'validation').length;
    // Binomial(1000, 0.1): sd ≈ 9.5; ±4 sd keeps the test deterministic-safe.
    assert.ok(validation > 62 && validation < 138, `${validation} of ${n}`);
  });

  it('a different seed reshuffles; a larger fraction only adds groups', () => {
    const groups = Array.from({ length: 300 }, (_, i) => `g${i}`);
    const a = groups.map((g) => assignSplit(g, 'a', 0.2));
    const b = groups.map((g) => assignSplit(g, 'b', 0.2));
    assert.notDeepEqual(a, b);
    for (const g of groups) {
      if (assignSplit(g, 'a', 0.1) === 'validation') assert.equal(assignSplit(g, 'a', 0.2), 'validation');
    }
  });

  it('fractions lie in [0, 1)', () => {
    for (let i = 0; i < 1000; i++) {
      const f = groupFraction(`g${i}`, 3);
      assert.ok(f >= 0 && f < 1);
    }
  });
});

describe('the split of an export, read back from its files', () => {
  it('no first user message is on both sides, however its content was recorded (a string or text parts) and whatever secret it held', () => {
    const tree = path.join(tempDir('traces-split-'), 'tree');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    const lines: string[] = [];
    for (let i = 0; i < 40; i++) {
      const question = `question number ${i}?`;
      // Recorded as a string, as text parts, and with two different keys that --scrub redacts alike.
      const withKey = (seed: number) => `${question} My key is ${OPENAI_KEY.slice(0, 8)}${fakeToken(48, seed)}`;
      [question, [{ type: 'text', text: question }], withKey(i * 2 + 100), withKey(i * 2 + 101)].forEach((content, form) => {
        const messages = [{ role: 'system', content: `system ${form}` }, { role: 'user', content }, { role: 'assistant', content: `answer ${i} ${form}` }];
        const config = JSON.stringify({ model: 'openai/gpt-4o-mini' });
        lines.push(
          JSON.stringify({
            synalinks_version: '0.9.014',
            call_id: `00000000-0000-4000-8000-${String(i * 4 + form).padStart(12, '0')}`,
            parent_call_id: null,
            program: 'p',
            module: 'm',
            timestamp: 1783412130 + i,
            duration: 1,
            messages,
            inputs_hash: createHash('sha256').update(canonicalize(JSON.stringify(messages.slice(0, -1)))).digest('hex'),
            outputs: { answer: 'x' },
            config: JSON.parse(config) as unknown,
            config_hash: createHash('sha256').update(canonicalize(config)).digest('hex'),
          }),
        );
      });
    }
    writeFileSync(path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
    for (const format of ['openai', 'nemo']) {
      const out = path.join(path.dirname(tree), format);
      const result = runCli(['export', tree, '--format', format, '--out', out, '--validation-fraction', '0.5']);
      assert.equal(result.status, 0, result.stderr);
      const firstUser = (file: string) =>
        new Set(
          readFileSync(path.join(out, file), 'utf8')
            .trim()
            .split('\n')
            .map((line) => (JSON.parse(line) as { messages: Message[] }).messages.find((m) => m.role === 'user')!.content as string),
        );
      const training = firstUser('training.jsonl');
      const validation = firstUser('validation.jsonl');
      assert.equal(training.size + validation.size, 80, `${format}: every question is exported as the same text, with or without its redacted key`);
      assert.deepEqual([...training].filter((q) => validation.has(q)), [], `${format}: no question on both sides`);
    }
  });
});

describe('the group set aside while one side is empty', () => {
  it('ends on one side when the other side fills while it waits and more of its lines come after', () => {
    // Training's nearest group waits in case validation stays empty. Validation's first group waits too
    // (training is empty), until a farther training group is written: then validation has examples, so
    // the waiting training group can no longer be needed there, and its later lines go straight to training.
    const questions = Array.from({ length: 300 }, (_, i) => `Question number ${i}?`);
    const fractionOf = (question: string) => groupFraction(groupKey('p', [{ role: 'user', content: question }]), 0);
    const validation = questions.find((q) => fractionOf(q) < 0.1)!;
    const training = questions.filter((q) => fractionOf(q) >= 0.1).sort((a, b) => fractionOf(a) - fractionOf(b));
    const [nearest, farther] = [training[0]!, training[5]!];
    const tree = path.join(tempDir('traces-split-'), 'tree');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    const order = [nearest, validation, farther, nearest];
    // Each its own system message, so the two records of one question are no duplicates.
    const lines = order.map((q, i) =>
      synalinksLine({ index: i + 1, program: 'p', module: 'm', messages: [{ role: 'system', content: `Answer briefly (${i}).` }, { role: 'user', content: q }, { role: 'assistant', content: `answer ${i}` }] }),
    );
    writeFileSync(path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
    for (const format of ['openai', 'nemo', 'nemo-customizer']) {
      const out = path.join(path.dirname(tree), format);
      const result = runCli(['export', tree, '--format', format, '--out', out]);
      assert.equal(result.status, 0, result.stderr);
      const questionsIn = (file: string) =>
        readFileSync(path.join(out, file), 'utf8')
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as { messages: Message[] }).messages.find((m) => m.role === 'user')!.content as string);
      assert.deepEqual(questionsIn('validation.jsonl'), [validation], `${format}: validation holds only the group that hashed there`);
      assert.deepEqual(questionsIn('training.jsonl').sort(), [nearest, nearest, farther].sort(), `${format}: both lines of the waiting group train`);
    }
  });

  it('in whatever order the lines of a few groups come, each group ends where it hashed, all its lines together', () => {
    // Per side a group nearest to the other side and a farther one, the nearest with two lines:
    // every order of those lines is one dataset (--group-by module), each split on its own.
    const questions = Array.from({ length: 300 }, (_, i) => `Question number ${i}?`);
    const fractionOf = (question: string) => groupFraction(groupKey('p', [{ role: 'user', content: question }]), 0);
    const byFraction = [...questions].sort((a, b) => fractionOf(a) - fractionOf(b));
    const validation = byFraction.filter((q) => fractionOf(q) < 0.1);
    const training = byFraction.filter((q) => fractionOf(q) >= 0.1);
    const groups = { A: training[0]!, B: training.at(-1)!, C: validation.at(-1)!, D: validation[0]! };
    const orders = new Set<string>();
    const permute = (rest: string, done: string): void => {
      if (rest === '') orders.add(done);
      for (let i = 0; i < rest.length; i++) permute(rest.slice(0, i) + rest.slice(i + 1), done + rest[i]);
    };
    // One group or two on the other side: a second one's line releases what waits, so both are needed.
    for (const lines of ['AABC', 'ACCD', 'AABCCD']) permute(lines, '');
    // All on one side: the group nearest to the other goes there, whole (A validates, C trains).
    const oneSided = new Set<string>();
    const before = new Set(orders);
    for (const lines of ['AAB', 'ABB', 'CCD', 'CDD']) permute(lines, '');
    for (const order of orders) if (!before.has(order)) oneSided.add(order);
    const tree = path.join(tempDir('traces-split-'), 'tree');
    let index = 0;
    for (const order of orders) {
      mkdirSync(path.join(tree, 'p', order), { recursive: true });
      const lines = [...order].map((g) => {
        index++;
        const messages = [{ role: 'system', content: `Answer briefly (${index}).` }, { role: 'user', content: groups[g as keyof typeof groups] }, { role: 'assistant', content: `answer ${index}` }];
        return synalinksLine({ index, program: 'p', module: order, messages });
      });
      writeFileSync(path.join(tree, 'p', order, `${order}_20260101-000000.jsonl`), `${lines.join('\n')}\n`);
    }
    const out = path.join(path.dirname(tree), 'out');
    const result = runCli(['export', tree, '--format', 'openai', '--out', out, '--group-by', 'module']);
    assert.equal(result.status, 0, result.stderr);
    const questionsIn = (file: string) =>
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { messages: Message[] }).messages.find((m) => m.role === 'user')!.content as string)
        .sort();
    for (const order of orders) {
      const expected = (side: string) => [...order].filter((g) => side.includes(g)).map((g) => groups[g as keyof typeof groups]).sort();
      const [trains, validates] = !oneSided.has(order) ? ['AB', 'CD'] : order.includes('A') ? ['B', 'A'] : ['C', 'D'];
      assert.deepEqual(questionsIn(path.join(out, 'p', order, 'training.jsonl')), expected(trains), `${order}: training`);
      assert.deepEqual(questionsIn(path.join(out, 'p', order, 'validation.jsonl')), expected(validates), `${order}: validation`);
    }
  });
});
