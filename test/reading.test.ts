import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { readLineBatches, type Line } from '../src/sources/lines.js';
import { discover, whyNotTraceFile } from '../src/sources/discover.js';
import { readFiles, readSynalinksLinesAt } from '../src/sources/read.js';
import { SynalinksRecord } from '../src/sources/synalinks-record.js';
import { possibleDuration } from '../src/time.js';
import { GOLDEN, runCli, runCliJson, SAMPLES, seededRandom, synalinksLine, tempDir, flat } from './helpers.js';

async function rangeLines(file: string, start: number, end: number, chunkSize?: number): Promise<Line[]> {
  const lines: Line[] = [];
  for await (const batch of readLineBatches(file, { range: { start, end }, chunkSize })) lines.push(...batch);
  return lines;
}

async function allLines(file: string, chunkSize?: number): Promise<Line[]> {
  const lines: Line[] = [];
  for await (const batch of readLineBatches(file, { chunkSize })) lines.push(...batch);
  return lines;
}

describe('line splitting on bytes', () => {
  it('numbers the lines of ranges read in any order, twice, and after the file changed, as a whole read does', async () => {
    const file = path.join(tempDir(), 'ranges.jsonl');
    const random = seededRandom(7);
    const write = (lines: number) => {
      const parts: string[] = [];
      for (let i = 0; i < lines; i++) parts.push(random() < 0.05 ? '' : `{"i":${i},"pad":"${'x'.repeat(Math.floor(random() * 300))}"}${random() < 0.2 ? '\r' : ''}`);
      writeFileSync(file, parts.join('\n') + '\n');
    };
    for (const lines of [3000, 2000]) {
      write(lines);
      const whole = (await allLines(file)).map((l) => `${l.number}@${l.offset}`);
      const size = readFileSync(file).length;
      // Random cuts, and cuts a few bytes after others (a line may start in a range of a few bytes, or none).
      const spread = Array.from({ length: 12 }, () => Math.floor(random() * size));
      const near = spread.slice(0, 6).map((c) => Math.min(size, c + 1 + Math.floor(random() * 400)));
      const cuts = [0, ...[...new Set([...spread, ...near])].sort((a, b) => a - b), size];
      // Shuffled, and each range twice: later ranges may count on from an earlier one's start, or not.
      const order = [...cuts.keys()].slice(0, -1).flatMap((i) => [i, i]).sort(() => random() - 0.5);
      const got = new Map<number, string[]>();
      for (const i of order) got.set(i, (await rangeLines(file, cuts[i], cuts[i + 1], 256)).map((l) => `${l.number}@${l.offset}`));
      assert.deepEqual([...got.keys()].sort((a, b) => a - b).flatMap((i) => got.get(i)!), whole, `${lines} lines`);
    }
  });

  it('strips CRLF, keeps a BOM (orjson refuses the line), skips blank lines, keeps numbers and offsets', async () => {
    const file = path.join(tempDir(), 'a.jsonl');
    writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\r\n\r\n  \n{"b":"é"}\n')]));
    const lines = await allLines(file);
    assert.deepEqual(
      lines.map((l) => [l.bytes.toString(), l.number, l.offset, l.terminated]),
      [
        ['\ufeff{"a":1}', 1, 0, true],
        ['{"b":"é"}', 4, 17, true],
      ],
    );
  });

  it('a trace file saved with a BOM: its first line is damaged for every command, and says why', () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'p', 'm'), { recursive: true });
    const sample = readFileSync(path.join(SAMPLES, 'my_program', 'my_program_20260707-101530.jsonl'));
    const file = path.join(root, 'p', 'm', 'm_20260101-000000.jsonl');
    writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), sample, sample]));
    const stats = runCliJson<{ records: number; damaged_lines: number }>(['stats', root]);
    assert.equal(stats.records, 1);
    assert.equal(stats.damaged_lines, 1);
    const said = runCli(['stats', root]);
    assert.match(flat(said.stdout + said.stderr), /m_20260101-000000\.jsonl:1: .*byte order mark \(BOM\).*UTF-8 without BOM/);
    assert.match(runCli(['verify', root]).stdout, /1 record checked, 0 mismatches, 1 damaged line/);
    const out = path.join(tempDir(), 'out');
    runCliJson(['dedupe', root, '--out', out]);
    const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8');
    assert.match(manifest, /"line":1,"reason":"damaged","detail":"starts with a byte order mark/);
  });

  it('joins lines that span chunks and flags an unterminated last line', async () => {
    const file = path.join(tempDir(), 'b.jsonl');
    const long = `{"x":"${'y'.repeat(5000)}"}`;
    writeFileSync(file, `${long}\n{"short":1}\n{"cut":`);
    const lines = await allLines(file, 64);
    assert.equal(lines.length, 3);
    assert.equal(lines[0].bytes.toString(), long);
    assert.equal(lines[1].offset, long.length + 1);
    assert.equal(lines[2].bytes.toString(), '{"cut":');
    assert.equal(lines[2].terminated, false);
  });
});

describe('reading a file in byte ranges', () => {
  it('gives every line to exactly one range, wherever the cuts fall', async () => {
    const file = path.join(tempDir(), 'c.jsonl');
    const text = Array.from({ length: 40 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(i * 7)}"}`).join('\n') + '\n\n{"last":true}';
    writeFileSync(file, text);
    const whole = await allLines(file);
    const size = Buffer.byteLength(text);
    for (const cuts of [[0, size], [0, 100, size], [0, 1, 2, 3, size], [0, 57, 58, 59, 300, 301, 1200, size]]) {
      for (const chunkSize of [16, 4096]) {
        const parts: Line[] = [];
        for (let i = 0; i + 1 < cuts.length; i++) parts.push(...(await rangeLines(file, cuts[i], cuts[i + 1], chunkSize)));
        assert.deepEqual(
          parts.map((l) => [l.number, l.offset, l.bytes.toString(), l.terminated]),
          whole.map((l) => [l.number, l.offset, l.bytes.toString(), l.terminated]),
          `cuts ${cuts.join(',')} chunk ${chunkSize}`,
        );
      }
    }
  });
});

describe('reading with one reused buffer', () => {
  it('gives the same lines when each batch is used before the next is read', async () => {
    const file = path.join(tempDir(), 'd.jsonl');
    const text = Array.from({ length: 300 }, (_, i) => `{"n":${i},"pad":"${'y'.repeat((i * 37) % 500)}"}`).join('\n') + '\n{"cut":';
    writeFileSync(file, text);
    const expected = (await allLines(file)).map((l) => [l.number, l.offset, l.bytes.toString(), l.terminated]);
    for (const chunkSize of [7, 64, 1000, 1 << 20]) {
      const seen: unknown[] = [];
      for await (const batch of readLineBatches(file, { chunkSize, transient: true })) {
        for (const l of batch) seen.push([l.number, l.offset, l.bytes.toString(), l.terminated]);
      }
      assert.deepEqual(seen, expected, `chunk ${chunkSize}`);
    }
  });
});

describe('reading chosen lines by their offsets', () => {
  it('gives the same bytes and places as splitting the whole file, for every range and chunk size', async () => {
    const file = path.join(tempDir(), 'at.jsonl');
    const record = (i: number, pad: number) => `{"synalinks_version":"1","call_id":"c${i}","messages":[{"role":"user","content":"${'é'.repeat(pad)}"}]}`;
    const text = Buffer.from([record(0, 3), record(1, 5000), '', '  ', record(3, 0), record(4, 70)].join('\r\n') + '\n' + record(5, 9));
    writeFileSync(file, text);
    const whole = (await allLines(file)).map((l) => ({ bytes: l.bytes.toString('latin1'), line: l.number, offset: l.offset }));
    assert.equal(whole.length, 5);
    const traceFile = { path: file, display: 'at.jsonl', root: path.dirname(file), source: 'synalinks' as const };
    for (const chosen of [[0, 1, 2, 3, 4], [1], [0, 2, 4], [3, 4]]) {
      const lines = Int32Array.from(chosen.map((i) => whole[i].line));
      const offsets = Float64Array.from(chosen.map((i) => whole[i].offset));
      for (const cuts of [[0, Infinity], [0, 10, 5100, Infinity], [0, 1, 2, 3, 4, 20000]]) {
        for (const chunkSize of [16, 64, 1 << 20]) {
          const got: { bytes: string; line: number; offset: number }[] = [];
          for (let i = 0; i + 1 < cuts.length; i++) {
            for (const batch of readSynalinksLinesAt(traceFile, lines, offsets, { start: cuts[i], end: cuts[i + 1] }, chunkSize)) {
              for (const r of batch) got.push({ bytes: r.raw.toString('latin1'), line: r.ref.line, offset: r.ref.offset });
            }
          }
          assert.deepEqual(got, chosen.map((i) => whole[i]), `lines ${chosen} cuts ${cuts} chunk ${chunkSize}`);
        }
      }
    }
  });
});

describe('finding trace files', () => {
  it('accepts exactly the two Synalinks layouts', () => {
    assert.equal(whyNotTraceFile('prog/gen_1/gen_1_20260707-101530.jsonl'), null);
    assert.equal(whyNotTraceFile('prog/prog_20260707-101530.jsonl'), null);
    assert.equal(whyNotTraceFile('prog/tool_calls_generator_a/tool_calls_generator_a_20260707-101530.jsonl'), null);
    assert.match(whyNotTraceFile('prog/gen/other_20260707-101530.jsonl')!, /does not match its folder/);
    assert.match(whyNotTraceFile('prog/prog.jsonl')!, /name is not/);
    assert.match(whyNotTraceFile('notes.jsonl')!, /depth/);
    assert.match(whyNotTraceFile('datasets/ds/ds_20260707-101530.jsonl')!, /dataset/);
    assert.match(whyNotTraceFile('synalinks.json')!, /not a .jsonl/);
  });

  it('skips config, datasets, knowledge bases and stray files in the samples', async () => {
    const found = await discover([SAMPLES]);
    const expected = JSON.parse(readFileSync(path.join(SAMPLES, '..', '..', 'test', 'fixtures', 'samples-expected.json'), 'utf8'));
    assert.deepEqual(
      found.files.map((f) => path.relative(SAMPLES, f.path)),
      expected.trace_files,
    );
    const skipped = found.skipped.map((s) => path.relative(SAMPLES, path.resolve(s.path))).sort();
    assert.deepEqual(skipped, [...expected.skipped_paths].sort());
  });

  it('does not hang on a symlink loop and follows links to real folders, reading each file once', async () => {
    const root = tempDir();
    const moduleDir = path.join(root, 'prog', 'gen');
    mkdirSync(moduleDir, { recursive: true });
    writeFileSync(path.join(moduleDir, 'gen_20260101-000000.jsonl'), '');
    symlinkSync(root, path.join(root, 'prog', 'loop'));
    // Another way to the same folder, found first ('alias' sorts before 'prog'): the real path wins.
    symlinkSync(path.join(root, 'prog'), path.join(root, 'alias'));
    // A folder reached only through a link is read there.
    const outside = tempDir();
    mkdirSync(path.join(outside, 'other'), { recursive: true });
    writeFileSync(path.join(outside, 'other', 'other_20260101-000000.jsonl'), '');
    mkdirSync(path.join(root, 'linked'));
    symlinkSync(path.join(outside, 'other'), path.join(root, 'linked', 'other'));
    const found = await discover([root]);
    assert.deepEqual(found.files.map((f) => path.relative(root, f.path)).sort(), ['linked/other/other_20260101-000000.jsonl', 'prog/gen/gen_20260101-000000.jsonl']);
  });

  it('counts a record once however many ways lead to its file (a root named twice, nested roots, a link)', () => {
    const root = path.join(tempDir(), 'tree');
    cpSync(SAMPLES, root, { recursive: true });
    // A program folder of the samples that holds trace files.
    const program = 'my_program';
    assert.ok(readdirSync(path.join(root, program)).length > 0);
    symlinkSync(path.join(root, program), path.join(root, 'alias'));
    const once = runCliJson<{ records: number; files: number }>(['stats', SAMPLES]);
    for (const roots of [[root], [root, root], [root, path.join(root, program)], [path.join(root, 'alias'), root]]) {
      const got = runCliJson<{ records: number; files: number }>(['stats', ...roots]);
      assert.equal(got.records, once.records, roots.join(' '));
      assert.equal(got.files, once.files, roots.join(' '));
    }
  });

  it('reports a file or folder whose name is not UTF-8 (Node cannot open it by name) instead of passing it over', (t) => {
    // Two copies of the samples: in one, a trace file and a module folder get names that are not
    // UTF-8 (0xff and 0xfe never occur in it); in the other, they are removed.
    const renamed = path.join(tempDir(), 'tree');
    const removed = path.join(tempDir(), 'tree');
    cpSync(SAMPLES, renamed, { recursive: true });
    cpSync(SAMPLES, removed, { recursive: true });
    const module = path.join('my_program', 'generator');
    const traceFile = readdirSync(path.join(renamed, module)).find((name) => name.endsWith('.jsonl'))!;
    const otherModule = path.join('my_program', 'generator_cot');
    try {
      renameSync(path.join(renamed, module, traceFile), Buffer.concat([Buffer.from(path.join(renamed, module, 'generator_')), Buffer.from([0xff]), Buffer.from('_20260707-143002.jsonl')]));
      renameSync(path.join(renamed, otherModule), Buffer.concat([Buffer.from(path.join(renamed, otherModule)), Buffer.from([0xfe])]));
    } catch (error) {
      t.skip(`this file system refuses names that are not UTF-8: ${(error as Error).message}`);
      return;
    }
    rmSync(path.join(removed, module, traceFile));
    rmSync(path.join(removed, otherModule), { recursive: true });
    const run = runCli(['stats', renamed, '--json']);
    assert.equal(run.status, 1, run.stderr);
    const got = JSON.parse(run.stdout) as { records: number; files: number; unreadable_inputs: { path: string; reason: string }[] };
    assert.equal(got.unreadable_inputs.length, 2, run.stderr);
    for (const entry of got.unreadable_inputs) assert.match(entry.reason, /name is not valid UTF-8.*rename it/);
    assert.equal(flat(run.stderr).match(/name is not valid UTF-8/g)?.length, 2, run.stderr);
    const without = runCliJson<{ records: number; files: number }>(['stats', removed]);
    assert.equal(got.records, without.records);
    assert.equal(got.files, without.files);
  });

  it('reads a tree whole from any folder above it, each file in the tree its records name', async () => {
    const parent = tempDir();
    const tree = path.join(parent, 'a', 'b', 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    const place = (found: Awaited<ReturnType<typeof discover>>) => found.files.map((f) => [f.path, f.root]);
    const fromTree = await discover([tree]);
    for (const above of [parent, path.join(parent, 'a'), path.join(parent, 'a', 'b')]) {
      const found = await discover([above]);
      assert.deepEqual(place(found), place(fromTree), above);
      assert.deepEqual(found.skipped.map((s) => path.basename(s.path)).sort(), fromTree.skipped.map((s) => path.basename(s.path)).sort(), above);
    }
    type Counts = { records: number; files: number; per_module: unknown };
    const pick = ({ records, files, per_module }: Counts) => ({ records, files, per_module });
    assert.deepEqual(pick(runCliJson<Counts>(['stats', parent])), pick(runCliJson<Counts>(['stats', tree])));
  });

  it('refuses a folder whose trace files name no program, below the root named, saying which folder to name', () => {
    const parent = tempDir();
    const tree = path.join(parent, 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    // The recorder's own lines with their program cut out: the folders alone cannot say whether generator_cot is a program or a module.
    const file = path.join(tree, 'my_program', 'generator_cot', 'generator_cot_20260707-101530.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/"program":"[^"]*",/g, ''));
    const run = runCli(['stats', parent]);
    assert.equal(run.status, 2, run.stderr);
    assert.equal(run.stderr.split('\n').filter((line) => line !== '').length, 1, run.stderr);
    assert.match(run.stderr, /generator_cot: its trace files name no program.*name the Synalinks root it is in: \S*tree, or \S*my_program if generator_cot is a program folder\n$/);
    // Named as the root, the tree's layout says it.
    assert.equal(runCli(['stats', tree]).status, 0);
  });

  it('names a root that does not exist', async () => {
    await assert.rejects(discover(['/no/such/root']), /\/no\/such\/root: no such file or folder/);
  });

  it('uses $SYNALINKS_HOME when no root is given', async () => {
    const saved = process.env.SYNALINKS_HOME;
    process.env.SYNALINKS_HOME = GOLDEN;
    try {
      const found = await discover([]);
      assert.equal(found.files.length, 2);
    } finally {
      if (saved === undefined) delete process.env.SYNALINKS_HOME;
      else process.env.SYNALINKS_HOME = saved;
    }
  });
});

describe('records', () => {
  it('classifies the golden records and recomputes their hashes', async () => {
    const found = await discover([GOLDEN]);
    const records: SynalinksRecord[] = [];
    for await (const batch of readFiles(found.files)) records.push(...(batch.records as SynalinksRecord[]));
    assert.deepEqual(records.map((r) => r.status).sort(), ['exception', 'ok']);
    const ok = records.find((r) => r.status === 'ok')!;
    assert.equal(ok.callId, '5b0e1f0c-3d57-4b8e-9a52-0c6f2f7a9d11');
    assert.equal(ok.model, 'ollama_chat/mistral');
    assert.equal(ok.usage?.reasoning_tokens, 7);
    assert.equal(ok.cost, 0);
    assert.equal(ok.messages().at(-1)?.role, 'assistant');
    const { ByteSink } = await import('../src/canonical/byte-sink.js');
    for (const record of records) {
      const { inputsHash, configHash } = record.recomputeHashes(new ByteSink(16));
      assert.equal(inputsHash, record.inputsHash);
      assert.equal(configHash, record.configHash);
    }
  });

  it('never counts stale usage or cost of records without output', () => {
    const line = Buffer.from(
      '{"synalinks_version":"0.9.014","call_id":"c","usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6,"cached_tokens":0,"cache_creation_tokens":0,"reasoning_tokens":0},"cost":0.5,"messages":[],"inputs_hash":"x","outputs":null,"config":{},"config_hash":"y"}',
    );
    const record = new SynalinksRecord(line, { file: 'f', line: 1, offset: 0 });
    assert.equal(record.status, 'no_output');
    assert.equal(record.usage, null);
    assert.equal(record.cost, null);
  });

  it('reports lines that are not Synalinks records, with file and line', async () => {
    const root = tempDir();
    const dir = path.join(root, 'p', 'm');
    mkdirSync(dir, { recursive: true });
    const good = readFileSync(path.join(GOLDEN, 'my_program', 'generator', 'generator_20260707-101530.jsonl'), 'utf8').trim();
    writeFileSync(
      path.join(dir, 'm_20260101-000000.jsonl'),
      [good, '[1,2]', '{"messages":[]}', '{"synalinks_version":"0.9.014"}', 'not json', `${good}x`, good.slice(0, 100)].join('\n'),
    );
    const found = await discover([root]);
    const damaged = [];
    let records = 0;
    for await (const batch of readFiles(found.files)) {
      records += batch.records.length;
      damaged.push(...batch.damaged);
    }
    assert.equal(records, 1);
    assert.deepEqual(
      damaged.map((d) => d.line),
      [2, 3, 4, 5, 6, 7],
    );
    assert.match(damaged[0].reason, /not a JSON object/);
    assert.match(damaged[1].reason, /no synalinks_version/);
    assert.match(damaged[2].reason, /no messages/);
    assert.match(damaged[5].reason, /truncated last line/);
    assert.ok(damaged.every((d) => d.file.endsWith('m_20260101-000000.jsonl')));
  });
});

describe('record fields read from the bytes', () => {
  const recordWith = (fields: string): SynalinksRecord =>
    new SynalinksRecord(Buffer.from(`{"synalinks_version":"0.9.014","messages":[],"outputs":{"a":1},${fields}}`), { file: 'f', line: 1, offset: 0 });

  it('numbers equal what Number makes of their text, fast path or not', () => {
    const texts = ['0', '-0', '7', '-12', '0.5', '-0.0', '1767780930.123456', '1767780930.1234567', '9007199254740991', '9007199254740993',
      '123456789012345678901234567890', '0.1000000000000000055511151231257827', '1.5e3', '-2E-7', '3.0000000000000000000001', '0.30000000000000004'];
    // Random decimals of the shapes recorders write: timestamps, durations, costs.
    let seed = 7;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let i = 0; i < 2000; i++) {
      const whole = Math.floor(random() * 10 ** Math.floor(random() * 12));
      const fraction = String(Math.floor(random() * 1e9)).padStart(9, '0').slice(0, 1 + Math.floor(random() * 9));
      texts.push(`${random() < 0.2 ? '-' : ''}${whole}.${fraction}`);
    }
    for (const text of texts) {
      const record = recordWith(`"duration":${text},"cost":${text},"timestamp":${text}`);
      // A negative duration is impossible, so unknown (the range check every source's durations pass); cost reads every number.
      assert.ok(Object.is(record.duration, possibleDuration(Number(text))), `duration ${text}: ${record.duration}`);
      assert.ok(Object.is(record.cost, Number(text)), `cost ${text}`);
    }
  });

  it('usage keeps the counts that are numbers, the last of a repeated key, and is null when no object', () => {
    const usage = recordWith('"usage":{"prompt_tokens":12,"completion_tokens":null,"total_tokens":"30","reasoning_tokens":5,"reasoning_tokens":6,"extra":{"x":1}}').usage!;
    assert.equal(usage.prompt_tokens, 12);
    assert.equal(usage.completion_tokens, undefined);
    assert.equal(usage.total_tokens, undefined);
    assert.equal(usage.reasoning_tokens, 6);
    assert.equal(recordWith('"usage":7').usage, null);
    assert.equal(recordWith('"usage":null').usage, null);
  });

  it('dedupe keys from the hash bytes equal those from the decoded hashes, escapes and odd hashes included', async () => {
    const { keyOf } = await import('../src/pipeline/keys.js');
    const hex = 'a3f1c2d4e5b60718293a4b5c6d7e8f9001122334455667788990aabbccddeeff';
    const cases = [
      [`"${hex}"`, `"${hex.toUpperCase()}"`],
      [`"\\u0061${hex.slice(1)}"`, `"${hex}"`],
      ['"short"', `"${hex}"`],
      [`"${hex.slice(0, 63)}g"`, `"${hex}"`],
    ];
    for (const [inputs, config] of cases) {
      const record = recordWith(`"inputs_hash":${inputs},"config_hash":${config}`);
      // The same record seen through the decoded strings only: what other sources give.
      const plain = { inputsHash: record.inputsHash, configHash: record.configHash, program: '', module: '' } as never;
      for (const kind of ['inputs,config', 'inputs'] as const) {
        assert.deepEqual([...keyOf(record, kind)], [...keyOf(plain, kind)], `${kind} ${inputs} ${config}`);
      }
    }
  });
});

describe('the completion, located by the walk that reads the record', () => {
  const record = (messages: string, rest = ''): SynalinksRecord =>
    new SynalinksRecord(Buffer.from(`{"synalinks_version":"0.9.014","messages":${messages},"outputs":{"role":"assistant","content":"x"}${rest}}`), { file: 'f', line: 1, offset: 0 });
  const parsedLast = (r: SynalinksRecord) => r.messages().at(-1) ?? null;

  it('is the last message, as parsing the whole list finds it, whatever the list holds', () => {
    const lists = [
      '[]',
      '[ ]',
      '[{"role":"assistant","content":"only"}]',
      '[ {"role":"user","content":"a"} , {"role":"assistant","content":"b"} ]',
      '[{"role":"user","content":"[nested] ] , {"}, {"role":"assistant","content":"]","tool_calls":[{"id":"1","function":{"arguments":{"a":[1,[2,[]]]}}}]}]',
      '[{"role":"user","content":[{"type":"text","text":"x"}]},\n\t{"role":"assistant","content":[[],[[]]]}\t]',
      '[{"role":"assistant","content":"\\"]\\\\"}]',
      '[1, "two", [3], {"role":"assistant","content":"last"}]',
    ];
    for (const list of lists) {
      // Through the walk's span, then as the whole list parsed: the same message.
      assert.deepEqual(record(list).completion(), parsedLast(record(list)), list);
    }
  });

  it('of a list given twice is the last list\'s (orjson keeps the last), and another array elsewhere does not stand in for it', () => {
    const twice = record('[{"role":"assistant","content":"first"}]', ',"messages":[{"role":"assistant","content":"second"}],"tags":[{"role":"x"}]');
    assert.equal(twice.completion()?.content, 'second');
    const before = new SynalinksRecord(
      Buffer.from('{"synalinks_version":"0.9.014","tags":[{"role":"assistant","content":"not it"}],"messages":[],"outputs":{"a":1}}'),
      { file: 'f', line: 1, offset: 0 },
    );
    assert.equal(before.completion(), null);
  });
});

describe('compressed trace files (issue 39)', () => {
  it('are named on stderr without -v, with how to read them, by every reading command', () => {
    const tree = path.join(tempDir(), 'tree');
    const dir = path.join(tree, 'prog', 'gen');
    mkdirSync(dir, { recursive: true });
    const line = (index: number) => synalinksLine({ index, program: 'prog', module: 'gen', messages: [{ role: 'user', content: `q${index}` }, { role: 'assistant', content: `a${index}` }] });
    writeFileSync(path.join(dir, 'gen_20260101-000000.jsonl'), `${line(0)}\n`);
    writeFileSync(path.join(dir, 'gen_20260102-000000.jsonl.gz'), gzipSync(`${[1, 2, 3, 4].map(line).join('\n')}\n`));
    // zstd's frame magic, then bytes: the name alone says what it is.
    writeFileSync(path.join(dir, 'gen_20260103-000000.jsonl.zst'), Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0]));
    for (const args of [['stats', tree], ['verify', tree], ['scan', tree], ['dedupe', tree, '--dry-run']]) {
      const result = runCli(args);
      assert.match(flat(result.stderr), /gen_20260102-000000\.jsonl\.gz: compressed \(\.gz\), not read: its records are not counted; decompress it \(gunzip -k FILE\)/, args.join(' '));
      assert.match(flat(result.stderr), /gen_20260103-000000\.jsonl\.zst: compressed \(\.zst\)/, args.join(' '));
    }
    // Named as a file too.
    assert.match(flat(runCli(['stats', path.join(dir, 'gen_20260102-000000.jsonl.gz')]).stderr), /compressed \(\.gz\), not read/);
  });
});
