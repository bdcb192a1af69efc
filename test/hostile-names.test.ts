/**
 * Names are data: a recorded key, role, model or version, or a rule's name, may be
 * `__proto__`, `toString` or `constructor`, or hold terminal control sequences. None may
 * change what traces counts, prices or writes, and none may reach a terminal as a control
 * sequence (the reports, the SQL table, the browser).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalize } from '../src/canonical/canonical.js';
import { fitSegs } from '../src/ui/rows.js';
import { IndexStore } from '../src/ui/index-store.js';
import { chatRows } from '../src/ui/chat-lines.js';
import { segsToAnsi } from '../src/ui/ansi.js';
import { runCli, runCliJson, tempDir, flat } from './helpers.js';

const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A Synalinks record with genuine hashes (canonical JSON as orjson writes it). */
function recordLine(i: number, messages: unknown[], model: string, version = '0.9.014'): string {
  const inputs = JSON.stringify(messages.slice(0, -1));
  const config = JSON.stringify({ model });
  return JSON.stringify({
    synalinks_version: version,
    call_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    parent_call_id: null,
    program: 'prog',
    module: 'mod',
    timestamp: 1783412130 + i,
    duration: 1.5,
    usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 },
    messages,
    inputs_hash: sha256Hex(canonicalize(inputs)),
    outputs: { answer: 'x' },
    config: JSON.parse(config) as unknown,
    config_hash: sha256Hex(canonicalize(config)),
  });
}

function treeOf(lines: string[]): string {
  const tree = path.join(tempDir('traces-names-'), 'tree');
  mkdirSync(path.join(tree, 'prog', 'mod'), { recursive: true });
  writeFileSync(path.join(tree, 'prog', 'mod', 'mod_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
  return tree;
}

const OBJECT_NAMES = ['__proto__', 'toString', 'constructor'];
const CONTROLS = ['\u001b]0;PWNED\u0007', '\u001b[2J', '\u009b31m'];
/** ESC, BEL or a C1 control, raw, in text meant for a terminal. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const user = (content: string) => ({ role: 'user', content });
const assistant = (content: string) => ({ role: 'assistant', content });

describe('names that are Object’s own are data like any other', () => {
  it('an inferred tool keeps an argument named __proto__ among its properties, as it lists it as required', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: `{"__proto__":{"a":1},"constructor":2,"toString":"x"}` } };
    const tree = treeOf([recordLine(1, [user('q'), { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'c1', content: 'r' }, assistant('done')], 'openai/gpt-4o-mini')]);
    const out = path.join(path.dirname(tree), 'out');
    const result = runCli(['export', tree, '--format', 'openai', '--out', out, '--validation-fraction', '0']);
    assert.equal(result.status, 0, result.stderr);
    const example = JSON.parse(readFileSync(path.join(out, 'training.jsonl'), 'utf8').trim()) as { tools: { function: { parameters: { properties: object; required: string[] } } }[] };
    const parameters = example.tools[0].function.parameters;
    assert.deepEqual(Object.keys(parameters.properties), ['__proto__', 'constructor', 'toString']);
    assert.deepEqual(parameters.required, ['__proto__', 'constructor', 'toString']);
  });

  it('redaction counts of rules named toString, __proto__ and constructor are counts', () => {
    const tree = treeOf(OBJECT_NAMES.map((name, i) => recordLine(i, [user(`secret-${i}-here`), assistant(`a${i}`)], 'openai/gpt-4o-mini')));
    const rules = path.join(path.dirname(tree), 'rules.json');
    writeFileSync(rules, JSON.stringify(OBJECT_NAMES.map((name, i) => ({ name, pattern: `secret-${i}-here` }))));
    const out = path.join(path.dirname(tree), 'out');
    const report = runCliJson<{ scrub: { redactions: Record<string, number> } }>(['export', tree, '--format', 'openai', '--out', out, '--scrub-rules', rules, '--json']);
    assert.deepEqual(report.scrub.redactions, JSON.parse('{"__proto__":1,"constructor":1,"toString":1}'));
    const result = runCli(['export', tree, '--format', 'openai', '--out', out, '--scrub-rules', rules, '--force']);
    assert.match(result.stderr, /redacted 3 values by kind: __proto__ 1, constructor 1, toString 1[;\n]/);
  });

  it('a model whose provider is constructor or toString has no price, not Object’s', () => {
    const models = ['constructor/name', 'toString/length', '__proto__/x', 'hasOwnProperty'];
    const tree = treeOf(models.map((model, i) => recordLine(i, [user(`q${i}`), assistant(`a${i}`)], model)));
    const { totals } = runCliJson<{ totals: { ok_records_unpriced: number; ok_records_with_estimated_cost: number; estimated_cost_usd: number } }>(['stats', tree, '--json']);
    assert.equal(totals.ok_records_unpriced, models.length, JSON.stringify(totals));
    assert.equal(totals.ok_records_with_estimated_cost, 0);
    assert.equal(totals.estimated_cost_usd, 0);
  });
});

describe('a program named like traces’ own files', () => {
  it('_traces and report.json get folders of their own names, beside the run’s, in a tree copy and in datasets by module', () => {
    const base = tempDir('traces-names-');
    const tree = path.join(base, 'tree');
    [
      ['_traces', 'complete'],
      ['_traces', 'manifest.jsonl'],
      ['report.json', 'mod'],
      ['prog', 'mod'],
    ].forEach(([program, module], i) => {
      mkdirSync(path.join(tree, program, module), { recursive: true });
      const line = recordLine(i, [user(`q${i}`), assistant(`a${i}`)], 'openai/gpt-4o-mini').replace('"program":"prog","module":"mod"', `"program":"${program}","module":"${module}"`);
      writeFileSync(path.join(tree, program, module, `${module}_20260101-000000.jsonl`), `${line}\n`);
    });
    const copy = runCli(['dedupe', tree, '--out', path.join(base, 'copy')]);
    assert.equal(copy.status, 0, copy.stderr);
    const own = /^_traces-[0-9a-f]{8}$/;
    const copied = readdirSync(path.join(base, 'copy')).sort();
    assert.equal(copied.length, 4, copied.join(' '));
    assert.match(copied[1], own);
    assert.match(copied[3], /^report\.json-[0-9a-f]{8}$/);
    assert.deepEqual(readdirSync(path.join(base, 'copy', '_traces')).sort(), ['complete', 'keys.bin', 'manifest.jsonl', 'run.json']);
    assert.equal(readFileSync(path.join(base, 'copy', copied[1], 'complete', 'complete_20260101-000000.jsonl'), 'utf8'), readFileSync(path.join(tree, '_traces', 'complete', 'complete_20260101-000000.jsonl'), 'utf8'));
    const datasets = runCli(['export', tree, '--format', 'openai', '--group-by', 'module', '--out', path.join(base, 'datasets')]);
    assert.equal(datasets.status, 0, datasets.stderr);
    const folder = readdirSync(path.join(base, 'datasets')).find((name) => own.test(name))!;
    assert.deepEqual(readdirSync(path.join(base, 'datasets', folder)).sort(), ['complete', 'manifest.jsonl']);
    assert.deepEqual(readdirSync(path.join(base, 'datasets', '_traces')).sort(), ['complete', 'examples.jsonl', 'keys.bin', 'manifest.jsonl', 'run.json']);
    const report = readdirSync(path.join(base, 'datasets')).find((name) => /^report\.json-[0-9a-f]{8}$/.test(name))!;
    assert.deepEqual(readdirSync(path.join(base, 'datasets', report, 'mod')), ['training.jsonl']);
    assert.ok(lstatSync(path.join(base, 'datasets', 'report.json')).isFile());
  });
});

describe('module names that hold a line break', () => {
  it('are trace files like any other: read, counted, indexed', () => {
    const base = tempDir('traces-names-');
    const tree = path.join(base, 'tree');
    ['line\nbreak', 'carriage\rreturn', 'plain'].forEach((module, i) => {
      mkdirSync(path.join(tree, 'prog', module), { recursive: true });
      const line = recordLine(i, [user(`q${i}`), assistant(`a${i}`)], 'openai/gpt-4o-mini').replace('"module":"mod"', `"module":${JSON.stringify(module)}`);
      writeFileSync(path.join(tree, 'prog', module, `${module}_20260101-000000.jsonl`), `${line}\n`);
    });
    const stats = runCli(['stats', tree, '--json']);
    assert.equal(stats.status, 0, stats.stderr);
    assert.equal((JSON.parse(stats.stdout) as { records: number; files: number }).files, 3);
    assert.equal((JSON.parse(stats.stdout) as { records: number }).records, 3);
  });
});

describe('long program and module names', () => {
  it('ask-recording joins them into a folder name a file system takes, distinct for names that share a long start', () => {
    const long = 'P'.repeat(300);
    const pairs = [
      [long, 'M'.repeat(300)],
      [long, `${'M'.repeat(299)}N`],
      ['é'.repeat(200), 'mod'],
      ['prog', 'mod'],
    ];
    const lines = pairs.map(([program, module], i) =>
      recordLine(i, [user(`q${i}`), assistant(`a${i}`)], 'openai/gpt-4o-mini').replace('"program":"prog","module":"mod"', `"program":"${program}","module":"${module}"`),
    );
    const out = path.join(tempDir('traces-names-'), 'out');
    const run = runCli(['export', treeOf(lines), '--format', 'ask-recording', '--out', out]);
    assert.equal(run.status, 0, run.stderr);
    const tests = readdirSync(out).filter((name) => name !== '_traces' && name !== 'report.json');
    assert.equal(tests.length, pairs.length, tests.join('\n'));
    for (const name of tests) assert.ok(Buffer.byteLength(name) <= 255, `${name.length} bytes`);
    assert.ok(tests.includes('prog__mod'));
  });
});

describe('recorded text never reaches a terminal as a control sequence', () => {
  const tree = treeOf(
    CONTROLS.map((control, i) => recordLine(i, [{ role: `user${control}`, content: `q${i}` }, assistant(`a${i}`)], `openai/model${control}`, `0.9.014${control}`)),
  );

  for (const args of [['stats'], ['stats', '--by', 'model'], ['runs'], ['sql', 'SELECT model, synalinks_version FROM records']]) {
    it(`traces ${args.join(' ')} prints models and versions with their control characters escaped`, () => {
      const result = runCli([...args.slice(0, 1), ...args.slice(1).filter((a) => a.startsWith('SELECT')), tree, ...args.slice(1).filter((a) => !a.startsWith('SELECT'))]);
      assert.equal(result.status, 0, result.stderr);
      assert.doesNotMatch(result.stdout, RAW_CONTROL);
      if (args[0] !== 'runs') assert.match(result.stdout, /model\\x1b\]0;PWNED\\x07|model\\x9b31m/);
    });
  }

  it('a folder named with an escape sequence is named escaped in reports, damaged-line lists and errors', () => {
    const module = 'mod\u001b[31m';
    const tree = path.join(tempDir('traces-names-'), 'tree');
    mkdirSync(path.join(tree, 'prog', module), { recursive: true });
    // A damaged line, so the file is named in every command's list of damaged lines.
    writeFileSync(path.join(tree, 'prog', module, `${module}_20260101-000000.jsonl`), `${recordLine(1, [user('q'), assistant('a')], 'openai/gpt-4o-mini')}\n{"truncated\n`);
    const runs = [
      runCli(['stats', tree]),
      runCli(['stats', tree, '--by', 'module']),
      runCli(['dedupe', tree, '--dry-run']),
      runCli(['index', tree, '--out', path.join(path.dirname(tree), 'index.parquet')]),
      runCli(['stats', path.join(tree, 'no\u001b]0;such\u0007')]),
    ];
    for (const result of runs) {
      assert.doesNotMatch(result.stdout + result.stderr, RAW_CONTROL, result.stdout + result.stderr);
    }
    assert.match(flat(runs[2].stdout), /mod\\x1b\[31m_20260101-000000\.jsonl:2: damaged/);
    assert.match(runs[4].stderr, /no\\x1b\]0;such\\x07: no such file or folder/);
  });

  it('call ids, folder and program names with escape sequences or bidirectional controls reach no terminal raw: verify, stats, runs, sql and its --csv and --json (issue 39)', () => {
    const HOSTILE = ['\u001b]0;PWNED\u0007', '\u001b]52;c;cm0gLXJmIH4=\u0007', '\u001b[2J', '\u202egnp.exe', 'a\u2067b\u2069c', '\u009b2J'];
    const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
    const folder = `mod${HOSTILE[2]}\u202e`;
    const tree = path.join(tempDir('traces-names-'), 'tree');
    const program = `prog${HOSTILE[4]}`;
    mkdirSync(path.join(tree, program, folder), { recursive: true });
    const lines = HOSTILE.map((hostile, i) => {
      const record = JSON.parse(recordLine(i, [user(`q${i}`), assistant(`a${i}`)], 'openai/gpt-4o-mini')) as Record<string, unknown>;
      // Edited after it was recorded (verify lists it), under a call id and program that hold the sequence.
      return JSON.stringify({ ...record, call_id: `call${hostile}${i}`, program, module: folder, inputs_hash: '0'.repeat(64) });
    });
    writeFileSync(path.join(tree, program, folder, `${folder}_20260101-000000.jsonl`), `${lines.join('\n')}\n`);
    const runs = [
      runCli(['verify', tree]),
      runCli(['verify', tree, '--json']),
      runCli(['stats', tree]),
      runCli(['stats', tree, '--by', 'module']),
      runCli(['stats', tree, '--json']),
      runCli(['runs', tree]),
      runCli(['runs', tree, '--json']),
      runCli(['sql', 'SELECT call_id, program, module, file FROM records', tree]),
      runCli(['sql', 'SELECT call_id, program, module, file FROM records', tree, '--csv']),
      runCli(['sql', 'SELECT call_id, program, module, file FROM records', tree, '--json']),
    ];
    for (const result of runs) {
      assert.ok(result.status === 0 || result.status === 1, result.stderr);
      assert.doesNotMatch(result.stdout + result.stderr, RAW, result.stdout.slice(0, 400));
    }
    assert.equal(runs[0].status, 1);
    assert.match(runs[0].stdout, /call\\x1b\]52;c;cm0gLXJmIH4=\\x071: inputs_hash does not match/);
    assert.match(runs[8].stdout, /call\\u202egnp\.exe3,/);
    // JSON output keeps the values: escaped, they read back as recorded.
    const rows = JSON.parse(runs[9].stdout) as { call_id: string; program: string }[];
    assert.deepEqual(rows.map((r) => r.call_id).sort(), HOSTILE.map((h, i) => `call${h}${i}`).sort());
    assert.equal(rows[0]!.program, program);
  });

  it('the browser shows a role, and any row, with control pictures; a role named constructor gets the default colour', async () => {
    const store = await IndexStore.open([treeOf([...CONTROLS, 'constructor'].map((role, i) => recordLine(i, [{ role, content: `q${i}` }, assistant(`a${i}`)], 'openai/gpt-4o-mini')))], {});
    await store.whenDone();
    try {
      for (const i of store.list(0, 'all', false)) {
        const header = chatRows(store.record(i)!, { width: 80, isOpen: () => false })[0].segs;
        const shown = fitSegs(header, 80);
        assert.doesNotMatch(shown.map((s) => s.text).join(''), RAW_CONTROL);
        assert.equal(typeof shown[0].color, 'string');
        assert.doesNotMatch(segsToAnsi(header, 80).replace(/\u001b\[[0-9;]*m/g, ''), RAW_CONTROL);
      }
    } finally {
      store.close();
    }
    assert.deepEqual(
      fitSegs([{ text: 'a\u001b[2Jb\nc\u009bd' }], 12).map((s) => s.text),
      ['a␛[2Jb␊c\ufffdd', '  '],
    );
  });
});
