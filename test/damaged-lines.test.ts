/**
 * What a damaged line is, decided once by the scanner as orjson decides it, and the same
 * for every command (issue 11: items 4 to 7 and 10). Python's orjson is the reference.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalize } from '../src/canonical/canonical.js';
import { checkJsonText, MAX_DEPTH } from '../src/canonical/scan.js';
import { FIXTURES, runCli, SAMPLES, tempDir, type CliResult, flat } from './helpers.js';
import { hasOrjson, NO_ORJSON, strictVerdicts, unloadableLines } from './strict-reference.js';

const skip = hasOrjson() ? false : NO_ORJSON;

function verdict(text: Buffer): string | null {
  try {
    checkJsonText(text);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

const b = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

/** JSON texts on each side of every rule the strict reading has. */
function vectors(): Buffer[] {
  const list: Buffer[] = [];
  // Every byte below 0x20 raw inside a string, and TAB and CR between tokens.
  for (let c = 0; c < 0x20; c++) list.push(b('{"a":"x', [c], 'y"}'));
  list.push(b('{"a":\t"x"\r}'), b('\t[1,\r2] '), b('"\x7f"'));
  // Every byte after a backslash.
  for (let c = 0x20; c < 0x100; c++) list.push(b('["a\\', [c], 'bcdef"]'));
  // \u escapes: hex digits, surrogates alone, in pairs, in the wrong order.
  for (const e of ['\\u00e9', '\\u00E9', '\\u12', '\\u12g4', '\\ud800', '\\udbff', '\\udc00', '\\udfff', '\\ud800\\udc00', '\\uDBFF\\uDFFF', '\\ud800\\u0041', '\\ud800\\ud800', '\\udc00\\ud800', '\\ud800x', '\\ud800\\', '\\ud83d\\ude00'])
    list.push(b(`{"k":"${e}"}`), b(`{"${e}":1}`));
  // UTF-8: overlongs, encoded surrogates, past U+10FFFF, cut short, stray bytes, and valid text.
  for (const bytes of [[0xc0, 0x80], [0xc1, 0xbf], [0xe0, 0x80, 0xaf], [0xe0, 0x9f, 0xbf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf0, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xbf], [0xfe], [0xff], [0xf0, 0x9f, 0x98], [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80], [0xef, 0xbf, 0xbf], [0xed, 0x9f, 0xbf], [0xee, 0x80, 0x80]])
    list.push(b('{"k":"a', bytes, 'b"}'));
  list.push(b('{"k":1}', [0xff]), b([0xc3, 0xa9]));
  // Numbers: past a double's range (infinite for orjson), big but finite, malformed.
  for (const n of ['1e308', '1e309', '-1e309', '1E+400', '1.7976931348623157e308', '1.7976931348623159e308', '1' + '0'.repeat(308), '2' + '0'.repeat(308), '1' + '0'.repeat(400) + 'e-100', '0.' + '0'.repeat(500) + '1', '1e-400', '0e999999', '18446744073709551616', '-9223372036854775809', '123456789012345678901234567890.5', '01', '-01', '1.', '.5', '-', '+1', '1e', '1e+', '-0', '-0.0E-0', 'NaN', 'Infinity'])
    list.push(b(`{"n":${n}}`));
  // Nesting on each side of the limit: arrays, objects, mixed, inside a record-like object.
  for (const d of [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 5000]) {
    list.push(b('['.repeat(d) + ']'.repeat(d)));
    list.push(b('{"k":'.repeat(d - 1) + '{"k":true}' + '}'.repeat(d - 1)));
    list.push(b('{"messages":' + '['.repeat(d - 1) + ']'.repeat(d - 1) + '}'));
  }
  // Structure.
  for (const s of ['{"a":1,}', '[1,]', '{"a":1} x', '{"a":1}{}', '', ' ', '{"a"}', '{"a":1', '"abc', '{"a":1,"a":2}', 'true', 'nul']) list.push(b(s));
  return list;
}

describe('the strict reading agrees with orjson', { skip }, () => {
  it('accepts and refuses exactly what orjson does: control bytes, escapes, surrogates, UTF-8, numbers, depth', () => {
    const texts = vectors();
    const expected = strictVerdicts(texts);
    const disagreements = texts
      .map((text, i) => ({ text: text.toString('latin1').slice(0, 60), ours: verdict(text), orjson: expected[i] }))
      .filter((v) => (v.ours === null) !== (v.orjson === null));
    assert.deepEqual(disagreements, []);
  });

  it('canonical JSON keeps the last value of a repeated key, as orjson.dumps(orjson.loads(...)) does', () => {
    const texts = ['{"a":1,"a":2}', '{"b":1,"a":3,"b":2}', '{"a":{"x":1,"x":[1,{"y":2,"y":3}]},"a":5,"c":1}', '{"\\u0061":1,"a":2}', '{"a":1,"\\u0061":2}', '{"z":1,"y":2,"z":3,"y":4}', '[{"role":"user","content":"a","role":"assistant"}]'];
    const program = 'import sys,json,orjson\nprint(json.dumps([orjson.dumps(orjson.loads(t), option=orjson.OPT_SORT_KEYS).decode() for t in json.load(sys.stdin)]))';
    const result = spawnSync('python3', ['-c', program], { input: JSON.stringify(texts), encoding: 'utf8' });
    const expected = JSON.parse(result.stdout) as string[];
    assert.deepEqual(
      texts.map((t) => canonicalize(t).toString('utf8')),
      expected,
    );
  });
});

const STACK_TRACE = /^\s+at .+:\d+:\d+\)?$/m;

function assertNoCrash(name: string, result: CliResult): void {
  assert.ok([0, 1, 2].includes(result.status), `${name} exited ${result.status}: ${result.stderr.slice(0, 1500)}`);
  assert.doesNotMatch(result.stderr, STACK_TRACE, `${name} printed a stack trace: ${result.stderr.slice(0, 1500)}`);
  assert.doesNotMatch(result.stderr, /RangeError|SyntaxError|Maximum call stack/);
}

function sampleRecord(): Record<string, unknown> {
  const file = path.join(SAMPLES, 'my_program', 'generator', 'generator_20260707-101530.jsonl');
  return JSON.parse(readFileSync(file, 'utf8').split('\n')[0]!) as Record<string, unknown>;
}

/** A record line whose first message's content starts with `raw` bytes spliced into the JSON text. */
function withRawContent(record: Record<string, unknown>, raw: Buffer, id: number): Buffer {
  const line = Buffer.from(JSON.stringify({ ...record, call_id: `bad-${id}`, inputs_hash: String(id).padStart(64, '0') }), 'utf8');
  const at = line.indexOf('"content":"') + '"content":"'.length;
  return Buffer.concat([line.subarray(0, at), raw, line.subarray(at)]);
}

function writeTree(lines: Buffer[]): string {
  const root = path.join(tempDir('traces-damaged-'), 'tree');
  const dir = path.join(root, 'my_program', 'generator');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'generator_20260101-000000.jsonl'), Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
  return root;
}

function manifestDamaged(out: string): number[] {
  return readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((t) => t !== '')
    .map((t) => JSON.parse(t) as { line: number; reason: string })
    .filter((e) => e.reason === 'damaged')
    .map((e) => e.line)
    .sort((x, y) => x - y);
}

function written(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.jsonl') && !e.parentPath.includes('_traces'))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('a line orjson refuses is damaged for every command, and none crashes', { skip }, () => {
  const record = sampleRecord();
  const deep = (d: number) => Buffer.from(JSON.stringify({ ...record, call_id: `deep-${d}`, inputs_hash: String(d).padStart(64, '7'), outputs: { deep: 0 } }).replace('"deep":0', `"deep":${'['.repeat(d)}${']'.repeat(d)}`));
  // Line 1 is good; lines 2 to 12 are each one defect.
  const lines = [
    Buffer.from(JSON.stringify(record)),
    withRawContent(record, b('tab\there'), 2), // item 5: raw TAB
    withRawContent(record, b('nul', [0], 'here'), 3), // item 5: raw NUL
    withRawContent(record, b('cut ', [0xe2, 0x82], ' short'), 4), // item 6
    withRawContent(record, b('overlong ', [0xc0, 0xaf]), 5), // item 6
    withRawContent(record, b('surrogate ', [0xed, 0xa0, 0x80]), 6), // item 6
    withRawContent(record, b('lone \\ud800 high'), 7), // item 7
    withRawContent(record, b('lone \\udc00 low'), 8), // item 7
    withRawContent(record, b('unknown \\x41 escape'), 9),
    deep(5000), // item 4
    deep(60000), // item 4
    Buffer.from(JSON.stringify({ ...record, call_id: 'big' }).replace('"cost":', '"cost":1e999,"was":')),
  ];
  const damaged = lines.map((_, i) => i + 1).slice(1);
  const root = writeTree(lines);

  it('stats counts them damaged, each with a reason', () => {
    const result = runCli(['stats', root, '--json']);
    assertNoCrash('stats', result);
    const stats = JSON.parse(result.stdout) as { records: number; damaged_lines: number; damaged: { line: number; reason: string }[] };
    assert.equal(stats.records, 1);
    assert.deepEqual(stats.damaged.map((d) => d.line), damaged);
    assert.ok(stats.damaged.every((d) => d.reason.length > 0));
    assert.match(stats.damaged.find((d) => d.line === 2)!.reason, /control character/);
    assert.match(stats.damaged.find((d) => d.line === 4)!.reason, /UTF-8/);
    assert.match(stats.damaged.find((d) => d.line === 7)!.reason, /surrogate/);
    assert.match(stats.damaged.find((d) => d.line === 10)!.reason, /nested deeper than 1024/);
  });

  for (const command of ['verify', 'scan', 'runs']) {
    it(`${command} reads the one good record and does not crash`, () => {
      const result = runCli([command, root, '--json']);
      assertNoCrash(command, result);
      const json = JSON.parse(result.stdout) as Record<string, unknown>;
      if (command === 'verify') assert.deepEqual([json.checked, json.damaged_lines], [1, damaged.length]);
      // A secret on a damaged line goes unseen: scan says how many it could not read, as verify does.
      if (command === 'scan') assert.deepEqual([json.records, json.damaged_lines], [1, damaged.length]);
    });
  }

  for (const command of ['dedupe', 'filter', 'export']) {
    it(`${command} lists the same damaged lines in its manifest, and writes only lines orjson loads`, () => {
      const out = path.join(tempDir('traces-damaged-out-'), 'out');
      const args = command === 'export' ? ['--format', 'openai'] : command === 'filter' ? ['--grep', 'a'] : [];
      const result = runCli([command, root, ...args, '--out', out]);
      assertNoCrash(command, result);
      assert.deepEqual(manifestDamaged(out), damaged);
      assert.deepEqual(unloadableLines(written(out)), []);
    });
  }
});

describe('JSON text inside a record is read as strictly as the record', { skip }, () => {
  const record = sampleRecord();
  const messages = record.messages as Record<string, unknown>[];
  const withCall = (id: number, args: string) => ({
    ...record,
    call_id: `call-${id}`,
    inputs_hash: String(id).padStart(64, '3'),
    messages: [
      ...messages.slice(0, -1),
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'lookup', arguments: args } }] },
      { role: 'tool', tool_call_id: 't1', content: args },
      messages[messages.length - 1],
    ],
  });
  const lines = [
    withCall(1, '{"q":"\\ud800"}'), // a lone surrogate only once the arguments are parsed
    withCall(2, '{"q":"\\udc00 and more"}'),
    withCall(3, '{"q":' + '['.repeat(20000) + ']'.repeat(20000) + '}'), // too deep only once parsed
    withCall(4, '{"q":' + '{"k":'.repeat(5000) + '1' + '}'.repeat(5000) + '}'),
    withCall(5, '{"q":"fine"}'),
    // Loads as arguments (1022 levels), but nested inside an example it would pass orjson's 1024.
    withCall(6, '{"q":' + '['.repeat(1021) + ']'.repeat(1021) + '}'),
  ]
    .map((r) => Buffer.from(JSON.stringify(r)))
    // Arguments recorded as an object, the line nested to exactly orjson's limit: an example that adds a level would pass it.
    .concat(deepObjectArguments());
  function deepObjectArguments(): Buffer<ArrayBuffer> {
    const line = JSON.stringify(withCall(7, 'ARGS')).replace('"arguments":"ARGS"', `"arguments":{"q":${'['.repeat(1017)}${']'.repeat(1017)}}`);
    return Buffer.from(line);
  }
  const root = writeTree(lines);

  for (const format of ['nemo', 'openai', 'nemo-customizer']) {
    it(`export --format ${format} writes only lines orjson loads, and says why it drops the rest`, () => {
      const out = path.join(tempDir('traces-embedded-'), 'out');
      const result = runCli(['export', root, '--format', format, '--key', 'conversation', '--out', out, '--json']);
      assertNoCrash('export', result);
      if (format === 'nemo-customizer') {
        // It cannot represent tool calls: every record is dropped, and no empty dataset is written.
        assert.equal(result.status, 1, result.stderr);
        const counts = /all (\d+) records read were dropped \(([^)]*)\)/.exec(result.stderr)!;
        assert.equal(Number(counts[1]), lines.length);
        assert.equal(counts[2].split(', ').reduce((n, part) => n + Number(part.split(' ')[1]), 0), lines.length);
        assert.doesNotMatch(counts[2], /damaged/);
        assert.ok(!existsSync(out));
        return;
      }
      const files = written(out);
      assert.deepEqual(unloadableLines(files), []);
      const examples = files.map((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l !== '').length).reduce((x, y) => x + y, 0);
      const drops = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { reason: string; detail?: string });
      assert.equal(examples + drops.length, lines.length, 'every record is written or dropped with a reason');
      assert.ok(drops.every((d) => d.reason !== '' && d.reason !== 'damaged'));
    });
  }

  it('scan opens the JSON text without crashing', () => {
    const result = runCli(['scan', root, '--json']);
    assertNoCrash('scan', result);
    assert.equal((JSON.parse(result.stdout) as { records: number }).records, lines.length);
  });
});

describe('validate reads a dataset line as strictly as a trace line', () => {
  it('reports invalid_json for nesting of 6000, raw control characters, invalid UTF-8 and lone surrogates, without crashing', () => {
    const dir = tempDir('traces-validate-');
    const good = { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] };
    const file = path.join(dir, 'data.jsonl');
    const lines = [
      Buffer.from(JSON.stringify(good)),
      Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y' }], deep: 0 }).replace('"deep":0', `"deep":${'['.repeat(6000)}${']'.repeat(6000)}`)),
      b('{"messages":[{"role":"user","content":"a\tb"},{"role":"assistant","content":"c"}]}'),
      b('{"messages":[{"role":"user","content":"a', [0xc0, 0xaf], '"},{"role":"assistant","content":"c"}]}'),
      b('{"messages":[{"role":"user","content":"\\ud800"},{"role":"assistant","content":"c"}]}'),
    ];
    writeFileSync(file, Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
    const result = runCli(['validate', file, '--format', 'openai', '--json']);
    assertNoCrash('validate', result);
    assert.equal(result.status, 1);
    const report = JSON.parse(result.stdout) as { errors: { code: string; lines: number[] }[] } | { errors: { code: string; lines: number[] }[] }[];
    const errors = (Array.isArray(report) ? report[0]! : report).errors;
    assert.deepEqual(errors.find((e) => e.code === 'invalid_json')?.lines, [2, 3, 4, 5]);
  });
});

describe('verify hashes a repeated key as orjson does', { skip }, () => {
  it('finds no mismatch on a record whose messages repeat a key, hashed by Python from the same line', () => {
    // The recorded text as it stands: a JSON round trip would change number text, and so the config hash.
    const recorded = readFileSync(path.join(SAMPLES, 'my_program', 'generator', 'generator_20260707-101530.jsonl'), 'utf8').split('\n')[0]!;
    // The first message says its role twice; a Python dict keeps the last.
    const text = recorded.replace('"messages":[{"role":"system",', '"messages":[{"role":"system","role":"developer",');
    assert.ok(text.includes('"role":"system","role":"developer"'));
    const program = [
      'import sys, hashlib, orjson',
      'line = sys.stdin.buffer.read()',
      'r = orjson.loads(line)',
      'm = r["messages"][:-1] if r["outputs"] is not None else r["messages"]',
      'h = hashlib.sha256(orjson.dumps(m, option=orjson.OPT_SORT_KEYS)).hexdigest()',
      'sys.stdout.buffer.write(line.replace(r["inputs_hash"].encode(), h.encode()))',
    ].join('\n');
    const python = spawnSync('python3', ['-c', program], { input: text });
    assert.equal(python.status, 0, String(python.stderr));
    const line = python.stdout as Buffer;
    assert.notEqual(line.toString('utf8'), text, 'the repeated key changes the hash');
    const root = writeTree([line]);
    const result = runCli(['verify', root, '--json']);
    assertNoCrash('verify', result);
    const verify = JSON.parse(result.stdout) as { checked: number; mismatches: unknown[] };
    assert.deepEqual([verify.checked, verify.mismatches], [1, []]);
  });
});

describe('Ask and klieo recordings nested past the limit are damaged, not a crash', () => {
  it('stats, runs and export report the file as damaged', () => {
    const root = tempDir('traces-deep-recordings-');
    const ask = readFileSync(path.join(FIXTURES, 'ask', 'message-tools', 'recording.json'), 'utf8');
    const klieo = readFileSync(path.join(FIXTURES, 'klieo', 'writer-completed.json'), 'utf8');
    const askDeep = ask.replace(/"content": "[^"]*"/, `"content": ${'['.repeat(5000)}${']'.repeat(5000)}`);
    const klieoDeep = klieo.replace(/"prompt": "[^"]*"/, `"prompt": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`);
    assert.notEqual(askDeep, ask);
    assert.notEqual(klieoDeep, klieo);
    mkdirSync(path.join(root, 'ask', 'deep-one'), { recursive: true });
    mkdirSync(path.join(root, 'klieo'));
    writeFileSync(path.join(root, 'ask', 'deep-one', 'recording.json'), askDeep);
    writeFileSync(path.join(root, 'klieo', 'run.json'), klieoDeep);
    const stats = runCli(['stats', root, '--json']);
    assertNoCrash('stats', stats);
    const json = JSON.parse(stats.stdout) as { damaged: { reason: string }[] };
    assert.equal(json.damaged.filter((d) => /nested deeper than 1024/.test(d.reason)).length, 2);
    assertNoCrash('runs', runCli(['runs', root, '--json']));
    assertNoCrash('export', runCli(['export', root, '--format', 'nemo', '--out', path.join(root, 'out')]));
  });
});

/** A tree of Ask recordings (`ask/recording-<i>/recording.json`) and klieo files (`klieo/run-<i>.json`), one per document. */
function recordingsTree(docs: readonly { source: string; bytes: Buffer }[]): string {
  const root = tempDir('traces-strict-recordings-');
  docs.forEach((d, i) => {
    const dir = d.source === 'ask' ? path.join(root, 'ask', `recording-${i}`) : path.join(root, 'klieo');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, d.source === 'ask' ? 'recording.json' : `run-${i}.json`), d.bytes);
  });
  return root;
}

describe('Ask and klieo recordings are read as strictly as trace lines', { skip }, () => {
  it('a raw control character, invalid UTF-8, a lone surrogate or a BOM damages the file, as orjson refuses it', () => {
    const ask = readFileSync(path.join(FIXTURES, 'ask', 'message-tools', 'recording.json'));
    const klieo = readFileSync(path.join(FIXTURES, 'klieo', 'writer-completed.json'));
    // Each spoils one string of the recording (or its start); the key stays.
    const spoil = (doc: Buffer, field: string, how: 'control' | 'utf8' | 'surrogate' | 'bom'): Buffer => {
      if (how === 'bom') return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), doc]);
      const text = doc.toString('latin1');
      const at = text.indexOf(`"${field}": "`) + field.length + 5;
      assert.ok(at > field.length + 5, `${field} in the fixture`);
      const insert = how === 'control' ? Buffer.from([0x01]) : how === 'utf8' ? Buffer.from([0xc3, 0x28]) : Buffer.from('\\ud800x');
      return Buffer.concat([doc.subarray(0, at), insert, doc.subarray(at)]);
    };
    const hows = ['control', 'utf8', 'surrogate', 'bom'] as const;
    const docs = hows.flatMap((how) => [
      { how, source: 'ask', bytes: spoil(ask, 'content', how) },
      { how, source: 'klieo', bytes: spoil(klieo, 'prompt', how) },
    ]);
    // The reference: orjson refuses every spoiled document, and loads the fixtures themselves.
    const verdicts = strictVerdicts([ask, klieo, ...docs.map((d) => d.bytes)]);
    assert.deepEqual(verdicts.slice(0, 2), [null, null]);
    assert.ok(verdicts.slice(2).every((v) => v !== null), JSON.stringify(verdicts));
    const root = recordingsTree(docs);
    const stats = runCli(['stats', root, '--json']);
    assertNoCrash('stats', stats);
    const reasons = (JSON.parse(stats.stdout) as { damaged: { file: string; reason: string }[] }).damaged.map((d) => d.reason);
    assert.equal(reasons.length, docs.length, reasons.join('\n'));
    for (const pattern of [/raw control character/, /invalid UTF-8/, /lone surrogate/, /byte order mark/]) {
      assert.equal(reasons.filter((r) => pattern.test(r)).length, 2, `${pattern}: ${reasons.join(' | ')}`);
    }
    assertNoCrash('export', runCli(['export', root, '--format', 'nemo', '--out', path.join(root, 'out')]));
  });

  it('a number is read as orjson reads it: one infinite as a double damages the file, a big or tiny one does not', () => {
    const recordings = [
      { source: 'ask', bytes: readFileSync(path.join(FIXTURES, 'ask', 'message-tools', 'recording.json')), field: 'input_tokens' },
      { source: 'klieo', bytes: readFileSync(path.join(FIXTURES, 'klieo', 'writer-completed.json')), field: 'prompt_tokens' },
    ];
    const numbers = ['1e400', '-1E+400', '9'.repeat(400), '1e-400', '18446744073709551616', '-0', '2.5e+300'];
    const docs = recordings.flatMap(({ source, bytes, field }) =>
      numbers.map((number) => {
        const text = bytes.toString('utf8');
        const found = new RegExp(`"${field}": (\\d+)`).exec(text);
        assert.ok(found !== null, `${field} in the ${source} fixture`);
        return { source, number, bytes: Buffer.from(text.replace(found[0], `"${field}": ${number}`)) };
      }),
    );
    const verdicts = strictVerdicts(docs.map((d) => d.bytes));
    const root = recordingsTree(docs);
    const stats = runCli(['stats', root, '--json']);
    assertNoCrash('stats', stats);
    const damaged = new Set((JSON.parse(stats.stdout) as { damaged: { file: string }[] }).damaged.map((d) => d.file));
    const refused = docs.map((d, i) => `${d.source} ${d.number}: ${verdicts[i] !== null}`);
    const read = docs.map((d, i) => `${d.source} ${d.number}: ${[...damaged].some((file) => file.includes(d.source === 'ask' ? `recording-${i}/` : `run-${i}.json`))}`);
    assert.deepEqual(read, refused);
    // The reference refuses the three infinite ones of each recorder, and loads the others.
    assert.equal(verdicts.filter((v) => v !== null).length, 6);
  });
});

describe('a trace file saved as UTF-16', () => {
  it('is damaged line by line, each reason saying the file looks UTF-16, in stats and validate', () => {
    const golden = readFileSync(path.join(FIXTURES, 'synalinks-golden', 'my_program', 'first_generator', readdirSync(path.join(FIXTURES, 'synalinks-golden', 'my_program', 'first_generator'))[0]!), 'utf8');
    const lines = golden.split('\n').filter((line) => line !== '');
    const text = `${[...lines, ...lines].join('\n')}\n`;
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    // PowerShell's `>`: a byte order mark, then UTF-16LE.
    const file = path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl');
    writeFileSync(file, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const stats = runCli(['stats', tree, '--json']);
    const report = JSON.parse(stats.stdout) as { records: number; damaged_lines: number; damaged: { reason: string }[] };
    assert.equal(report.records, 0);
    assert.equal(report.damaged_lines, 2 * lines.length + 1, 'every line, and the NUL byte after the last newline');
    for (const damaged of report.damaged) assert.match(damaged.reason, /: the file looks UTF-16, not UTF-8 \(as Windows PowerShell's > writes it\): save it as UTF-8$/);
    const validate = runCli(['validate', file, '--format', 'nemo', '--json']);
    assert.match(flat(validate.stdout), /the file looks UTF-16, not UTF-8/);
  });
});

describe('a line of zero bytes between records (what a crash or a full disk leaves)', () => {
  it('is damaged with a reason that names the zero bytes, not UTF-16, in stats and validate', () => {
    const dir = path.join(FIXTURES, 'synalinks-golden', 'my_program', 'first_generator');
    const golden = readFileSync(path.join(dir, readdirSync(dir)[0]!));
    const [first] = golden.toString('utf8').split('\n');
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    const file = path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl');
    const record = Buffer.from(`${first}\n`);
    writeFileSync(file, Buffer.concat([record, Buffer.alloc(4096), Buffer.from('\n'), Buffer.alloc(3), Buffer.from('{"a":1}\n'), record]));
    const stats = runCli(['stats', tree, '--json']);
    const report = JSON.parse(stats.stdout) as { records: number; damaged: { line: number; reason: string }[] };
    assert.equal(report.records, 2);
    assert.deepEqual(
      report.damaged.map((d) => [d.line, /the line is 4096 zero bytes, as a crash/.test(d.reason) || /the line starts with 3 zero bytes/.test(d.reason), /UTF-16/.test(d.reason)]),
      [
        [2, true, false],
        [3, true, false],
      ],
    );
    const validate = runCli(['validate', file, '--format', 'openai']);
    assert.match(flat(validate.stdout), /the line is 4096 zero bytes, as a crash or a full disk leaves/);
    assert.doesNotMatch(validate.stdout, /UTF-16/);
  });
});
