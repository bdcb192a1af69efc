/**
 * Issue 14, dataset quality: every example unique, traceable to its record, leak-free across
 * programs, near-duplicates found, and never an empty validation file by chance.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { generate, type Expected } from '../bench/generate.js';
import { parseJsonText, writeJson } from '../src/canonical/json-value.js';
import { conversationWords, estimatedSimilarity, signatureOf, BANDS } from '../src/pipeline/minhash.js';
import { getTarget } from '../src/targets/index.js';
import { EXAMPLES_FILE, Provenance } from '../src/export/provenance.js';
import { OutputDir } from '../src/output/output-dir.js';
import { runCli, runCliJson, SAMPLES, synalinksLine, tempDir } from './helpers.js';

type Message = Record<string, unknown>;
type Report = { examples: { training: number; validation: number }; dropped: Record<string, number>; warnings: string[]; files: { file: string }[] };
type Drop = { call_id?: string; reason: string; kept?: string; similarity?: number; file: string; line: number };
type Row = { file: string; line: number; call_id: string; merged: string[] };

const MODELS = ['openai/gpt-4o-mini', 'openai/gpt-4.1'];

let serial = 0;
/** One Synalinks record line: `messages` ends with the completion. */
function record(program: string, messages: Message[], model = MODELS[0]): string {
  return synalinksLine({ index: serial++, program, module: program, messages, model });
}

function writeTree(files: Record<string, string[]>): string {
  const root = path.join(tempDir(), 'tree');
  for (const [program, lines] of Object.entries(files)) {
    mkdirSync(path.join(root, program), { recursive: true });
    writeFileSync(path.join(root, program, `${program}_20260708-090512.jsonl`), lines.join('\n') + '\n');
  }
  return root;
}

function exportTree(root: string, args: string[]): { out: string; report: Report } {
  const out = path.join(tempDir(), 'out');
  const result = runCli(['export', root, '--out', out, '--json', ...args]);
  assert.equal(result.status, 0, result.stderr);
  return { out, report: JSON.parse(result.stdout) as Report };
}

const jsonLines = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);

const firstUser = (example: { messages: Message[] }) => JSON.stringify(example.messages.find((m) => m.role === 'user')?.content);

/** Every record of a tree by call_id. */
function recordsOf(root: string): Map<string, { messages: Message[] }> {
  const records = new Map<string, { messages: Message[] }>();
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.jsonl')) continue;
    for (const line of readFileSync(path.join(entry.parentPath, entry.name), 'utf8').split('\n')) {
      try {
        // The recorded values, numbers with their recorded text, as the export reads them.
        const value = parseJsonText(line) as { call_id?: string; messages?: Message[] };
        if (typeof value.call_id === 'string' && Array.isArray(value.messages)) records.set(value.call_id, { messages: value.messages });
      } catch {
        // A damaged line.
      }
    }
  }
  return records;
}

describe('repeated examples', () => {
  const chat = (user: string, answer: string, reasoning?: string): Message[] => [
    { role: 'system', content: 'You plan trips.' },
    { role: 'user', content: user },
    { role: 'assistant', content: 'Let me look.', ...(reasoning ? { reasoning_content: reasoning } : {}) },
    { role: 'user', content: 'And then?' },
    { role: 'assistant', content: answer },
  ];
  let root = '';
  before(() => {
    const lines: string[] = [];
    // Differ only in an earlier turn's reasoning: distinct keys, one example once reasoning is dropped.
    lines.push(record('planner', chat('Plan Lyon', 'Take the train.', 'Trains are fast.')));
    lines.push(record('planner', chat('Plan Lyon', 'Take the train.', 'Flights are slow.')));
    // The same exchange recorded on two models: distinct configs, one example.
    const same = chat('Plan Nice', 'Fly.');
    lines.push(record('planner', same, MODELS[0]));
    lines.push(record('planner', same, MODELS[1]));
    for (let i = 0; i < 30; i++) lines.push(record('planner', chat(`Plan city ${i}`, `Answer ${i}.`)));
    root = writeTree({ planner: lines });
  });

  for (const fraction of ['0', '0.5']) {
    it(`openai, --validation-fraction ${fraction}: repeats across dropped reasoning and across models are written once`, () => {
      const { out, report } = exportTree(root, ['--format', 'openai', '--validation-fraction', fraction]);
      assert.equal(report.dropped.duplicate_example, 2);
      const lines = ['training.jsonl', 'validation.jsonl'].filter((f) => existsSync(path.join(out, f))).flatMap((f) => readFileSync(path.join(out, f), 'utf8').split('\n').filter(Boolean));
      assert.equal(new Set(lines).size, lines.length, 'no line twice, within or across splits');
      assert.equal(lines.length, 32);
      const drops = jsonLines<Drop>(path.join(out, '_traces', 'manifest.jsonl')).filter((d) => d.reason === 'duplicate_example');
      const rows = jsonLines<Row>(path.join(out, '_traces', 'examples.jsonl'));
      const written = new Map(rows.map((r) => [r.call_id, r]));
      for (const d of drops) {
        assert.ok(written.has(d.kept!), 'kept names an example written');
        assert.ok(written.get(d.kept!)!.merged.includes(d.call_id!), 'and the kept row lists the repeat as merged');
      }
    });
  }

  it('nemo keeps reasoning: only the cross-model repeat is one', () => {
    const { report } = exportTree(root, ['--format', 'nemo', '--validation-fraction', '0']);
    assert.equal(report.dropped.duplicate_example, 1);
    assert.equal(report.examples.training, 33);
  });
});

describe('split across programs', () => {
  it('120 first user messages shared by two programs: none straddles the split at fraction 0.5', () => {
    const programs: Record<string, string[]> = { alpha: [], beta: [] };
    for (let i = 0; i < 120; i++) {
      for (const program of ['alpha', 'beta']) {
        const messages = [{ role: 'system', content: `You are ${program}.` }, { role: 'user', content: `Shared question ${i}` }, { role: 'assistant', content: `${program} answers ${i}` }];
        programs[program].push(record(program, messages));
      }
    }
    const root = writeTree(programs);
    for (const seed of ['0', '7']) {
      const { out, report } = exportTree(root, ['--format', 'openai', '--validation-fraction', '0.5', '--seed', seed]);
      assert.equal(report.examples.training + report.examples.validation, 240);
      const training = new Set(jsonLines<{ messages: Message[] }>(path.join(out, 'training.jsonl')).map(firstUser));
      const validation = jsonLines<{ messages: Message[] }>(path.join(out, 'validation.jsonl')).map(firstUser);
      assert.ok(training.size > 20 && validation.length > 40);
      const straddling = validation.filter((u) => training.has(u));
      assert.deepEqual(straddling, [], `seed ${seed}`);
    }
  });
});

describe('provenance', () => {
  it('each row of _traces/examples.jsonl names the line its record projects to, shards and module folders included', () => {
    const format = 'openai';
    const { out } = exportTree(SAMPLES, ['--format', format, '--scrub', 'none', '--group-by', 'module', '--max-file-mb', '0.0003', '--validation-fraction', '0.3']);
    const rows = jsonLines<Row>(path.join(out, '_traces', 'examples.jsonl'));
    const records = recordsOf(SAMPLES);
    const target = getTarget(format);
    const seen = new Set<string>();
    let lines = 0;
    for (const entry of readdirSync(out, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && /^(training|validation)(-\d{3})?\.jsonl$/.test(entry.name)) lines += readFileSync(path.join(entry.parentPath, entry.name), 'utf8').split('\n').filter(Boolean).length;
    }
    assert.equal(rows.length, lines, 'one row per written line');
    assert.ok(rows.some((r) => /-\d{3}\.jsonl$/.test(r.file)), 'shards are named');
    assert.ok(rows.every((r) => r.file.includes('/')), 'module folders are named');
    for (const row of rows) {
      const key = `${row.file}:${row.line}`;
      assert.ok(!seen.has(key));
      seen.add(key);
      const line = readFileSync(path.join(out, row.file), 'utf8').split('\n')[row.line - 1];
      const written = parseJsonText(line) as { messages: Message[] };
      const source = records.get(row.call_id);
      assert.ok(source !== undefined, `${row.call_id} is a record of the tree`);
      const projection = target.project(source.messages as never, { reasoning: 'drop' });
      assert.ok(projection.ok);
      assert.equal(writeJson(written.messages), writeJson(projection.example.messages), key);
    }
  });
});

describe('near-duplicates', () => {
  it('MinHash: whitespace and case re-runs match; half the words shared do not; a system prompt alone counts for nothing', () => {
    const base = 'Ticket 4821 opened on 2026-02-11. The invoice total is wrong after the upgrade, and the customer wants a refund before Friday. They attached three screenshots of the billing page.';
    const sig = (user: string, answer = 'We refunded the difference and fixed the plan.', system = 'S') =>
      signatureOf(conversationWords([{ role: 'system', content: system }, { role: 'user', content: user }, { role: 'assistant', content: answer }]))!;
    const similarity = (a: Uint32Array, b: Uint32Array) => estimatedSimilarity(a, BANDS, b, BANDS);
    assert.equal(similarity(sig(base), sig(base.toUpperCase().replace(/ /g, '  \n'))), 1);
    const words = base.split(' ');
    const half = [...words.slice(0, words.length / 2), ...'A printer on floor two jams every morning so nobody can print the reports the auditors asked for'.split(' ')].join(' ');
    assert.ok(similarity(sig(base), sig(half, 'Replace the roller; it is under warranty.')) < 0.5);
    const longSystem = 'You are a careful support agent. '.repeat(200);
    assert.ok(similarity(sig('Where is my parcel?', 'It left the depot.', longSystem), sig('Reset my password', 'Use the link.', longSystem)) < 0.3);
    assert.equal(signatureOf(conversationWords([{ role: 'system', content: longSystem }])), null);
  });

  it('scripts written without spaces (Japanese, Thai) compare character by character: one edit keeps a pair near, another text does not', () => {
    const sig = (user: string, answer: string) => signatureOf(conversationWords([{ role: 'user', content: user }, { role: 'assistant', content: answer }]))!;
    const similarity = (a: Uint32Array, b: Uint32Array) => estimatedSimilarity(a, BANDS, b, BANDS);
    const thai = 'ลูกค้าต้องการคืนเงินเพราะใบแจ้งหนี้ผิดหลังจากอัปเกรดแพ็กเกจเมื่อวันศุกร์ที่ผ่านมาและได้แนบภาพหน้าจอมาสามภาพ';
    const thaiAnswer = 'เราได้คืนเงินส่วนต่างและแก้ไขแพ็กเกจของลูกค้าเรียบร้อยแล้ว';
    const japanese = 'お客様はアップグレード後の請求書の金額が間違っているため、金曜日までに返金を希望しています。請求ページのスクリーンショットを三枚添付しています。';
    const japaneseAnswer = '差額を返金し、プランを修正しました。';
    for (const [text, answer, other] of [
      [thai, thaiAnswer, 'เครื่องพิมพ์ที่ชั้นสองติดกระดาษทุกเช้าจึงไม่มีใครพิมพ์รายงานที่ผู้ตรวจสอบขอได้'],
      [japanese, japaneseAnswer, '二階のプリンターが毎朝紙詰まりするので、監査人が求めた報告書を誰も印刷できません。'],
    ]) {
      const edited = `${text.slice(0, 40)}${text.slice(41)}`;
      assert.ok(similarity(sig(text, answer), sig(edited, answer)) >= 0.8, 'one character removed');
      assert.ok(similarity(sig(text, answer), sig(other, answer)) < 0.5, 'another request');
    }
  });

  let tree = '';
  let expected: Expected;
  before(() => {
    tree = path.join(tempDir(), 'planted');
    expected = generate({ out: tree, mb: 3, seed: 6, plantNearDuplicates: true });
  });

  it("finds the generator's planted near-duplicates (recall >= 0.9) and no negative control (precision >= 0.99)", () => {
    const out = path.join(tempDir(), 'dedupe');
    // The flag's value is optional: a root right after it is still a root.
    const summary = runCliJson<{ dropped: Record<string, number> }>(['dedupe', '--near-duplicates', tree, '--out', out]);
    const drops = jsonLines<Drop>(path.join(out, '_traces', 'manifest.jsonl')).filter((d) => d.reason === 'near_duplicate');
    assert.equal(summary.dropped.near_duplicate, drops.length);
    const { positives, negatives } = expected.near_duplicates!;
    assert.ok(positives.length >= 20 && negatives.length >= 10, `${positives.length} positives, ${negatives.length} negatives`);
    const keptFor = new Map(drops.map((d) => [d.call_id!, d.kept!]));
    const paired = (a: string, b: string) => keptFor.get(b) === a || keptFor.get(a) === b;
    const found = positives.filter((p) => paired(p.base, p.variant)).length;
    assert.ok(found / positives.length >= 0.9, `recall ${found}/${positives.length}`);
    const planted = new Set([...positives, ...negatives].flatMap((p) => [p.base, p.variant]));
    const positivePairs = new Set(positives.map((p) => [p.base, p.variant].sort().join()));
    const flagged = drops.filter((d) => planted.has(d.call_id!));
    const truePositives = flagged.filter((d) => positivePairs.has([d.call_id!, d.kept!].sort().join())).length;
    assert.ok(truePositives / flagged.length >= 0.99, `precision ${truePositives}/${flagged.length}`);
    assert.equal(negatives.filter((p) => paired(p.base, p.variant)).length, 0, 'no negative control flagged');
    for (const d of flagged) assert.ok(d.similarity! >= 0.8 && d.similarity! <= 1);
  });

  it('export --near-duplicates counts them in report.json and lists them as merged', () => {
    const { out, report } = exportTree(tree, ['--format', 'nemo', '--near-duplicates', '0.8']);
    const saved = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as Report;
    assert.ok(saved.dropped.near_duplicate > 0);
    assert.equal(saved.dropped.near_duplicate, report.dropped.near_duplicate);
    const near = jsonLines<Drop>(path.join(out, '_traces', 'manifest.jsonl')).filter((d) => d.reason === 'near_duplicate');
    const merged = new Set(jsonLines<Row>(path.join(out, '_traces', 'examples.jsonl')).flatMap((r) => r.merged));
    // Those whose kept record was itself exported (not dropped later, e.g. as not representable) are listed.
    assert.ok(near.filter((d) => merged.has(d.call_id!)).length >= near.length * 0.9);
    const bad = runCli(['export', tree, '--format', 'nemo', '--out', path.join(tempDir(), 'bad'), '--near-duplicates', '1.5']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--near-duplicates "1.5"/);
  });
});

describe('empty validation files', () => {
  const four = (firstMessages: string[]) =>
    writeTree({
      small: firstMessages.map((m, i) => record('small', [{ role: 'system', content: `Variant ${i}` }, { role: 'user', content: m }, { role: 'assistant', content: `Answer ${i}` }])),
    });

  it('with 2 groups or more and a fraction above 0, at least one group goes to validation, whatever the seed', () => {
    const root = four(['one', 'two', 'three', 'four']);
    for (let seed = 0; seed < 12; seed++) {
      const { out, report } = exportTree(root, ['--format', 'nemo-customizer', '--validation-fraction', '0.1', '--seed', String(seed)]);
      assert.ok(report.examples.validation >= 1 && report.examples.training >= 1, `seed ${seed}`);
      const training = new Set(jsonLines<{ messages: Message[] }>(path.join(out, 'training.jsonl')).map(firstUser));
      for (const example of jsonLines<{ messages: Message[] }>(path.join(out, 'validation.jsonl'))) assert.ok(!training.has(firstUser(example)));
      // The same side again: reproducible.
      if (seed === 0) assert.deepEqual(exportTree(root, ['--format', 'nemo-customizer', '--validation-fraction', '0.1', '--seed', '0']).report.examples, report.examples);
    }
  });

  for (const format of ['nemo-customizer', 'openai', 'nemo']) {
    it(`${format}: one group only, no validation file, and the report says so`, () => {
      const { out, report } = exportTree(four(['same', 'same', 'same', 'same']), ['--format', format, '--validation-fraction', '0.5']);
      assert.equal(report.examples.validation, 0);
      assert.ok(!existsSync(path.join(out, 'validation.jsonl')));
      assert.ok(report.warnings.some((w) => /no validation file written/.test(w)), report.warnings.join('\n'));
      const validated = runCli(['validate', path.join(out, 'training.jsonl'), '--format', format]);
      // Four examples: a file OpenAI refuses (its minimum is 10), and nothing else wrong.
      if (format === 'openai') {
        assert.equal(validated.status, 1);
        assert.deepEqual(validated.stdout.split('\n').filter((l) => /^\s+error /.test(l)).map((l) => l.trim().split(':')[0]), ['error too_few_examples']);
      } else assert.equal(validated.status, 0, validated.stdout);
    });
  }

  it('nemo-customizer with --validation-fraction 0 writes no validation file; other targets still write the empty file asked for', () => {
    const root = four(['one', 'two', 'three', 'four']);
    assert.ok(!existsSync(path.join(exportTree(root, ['--format', 'nemo-customizer', '--validation-fraction', '0']).out, 'validation.jsonl')));
    assert.equal(readFileSync(path.join(exportTree(root, ['--format', 'nemo', '--validation-fraction', '0']).out, 'validation.jsonl'), 'utf8'), '');
  });
});

describe('provenance rows (_traces/examples.jsonl)', () => {
  it('are exactly the JSON of each row, merges followed through chains, for uuid and other call_ids alike', () => {
    const dir = path.join(tempDir(), 'out');
    const output = OutputDir.open(dir, { force: false, roots: [] });
    const provenance = new Provenance();
    const shard = output.create('train "quoted" é.jsonl');
    const other = output.create(path.join('mod', 'validation.jsonl'));
    const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const ids = [uuid(1), 'run:7 "x"\\', uuid(2), '01J9Z8CAPT:2', uuid(3)];
    ids.forEach((id, i) => provenance.written(i % 2 === 0 ? shard : other, i + 1, id));
    // A chain (uuid(1) <- uuid(9) <- 'klieo:4'), a non-uuid winner with a uuid loser, and a loop back to a winner.
    provenance.merged(uuid(1), uuid(9));
    provenance.merged(uuid(9), 'klieo:4');
    provenance.merged('run:7 "x"\\', uuid(8));
    provenance.merged(uuid(3), uuid(7));
    provenance.merged(uuid(7), uuid(3));
    provenance.write(output);
    output.commit();
    const expected = [
      { file: 'train "quoted" é.jsonl', line: 1, call_id: uuid(1), merged: ['klieo:4', uuid(9)] },
      { file: 'mod/validation.jsonl', line: 2, call_id: 'run:7 "x"\\', merged: [uuid(8)] },
      { file: 'train "quoted" é.jsonl', line: 3, call_id: uuid(2), merged: [] },
      { file: 'mod/validation.jsonl', line: 4, call_id: '01J9Z8CAPT:2', merged: [] },
      { file: 'train "quoted" é.jsonl', line: 5, call_id: uuid(3), merged: [uuid(7)] },
    ];
    assert.equal(readFileSync(path.join(dir, EXAMPLES_FILE), 'utf8'), expected.map((row) => `${JSON.stringify(row)}\n`).join(''));
  });
});
