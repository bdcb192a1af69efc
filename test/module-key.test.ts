/**
 * Records of different modules are never duplicates by default: the recorded hashes cover the
 * messages and the LM config, not the module, its tools or its output schema. The shape that
 * showed it is a FunctionCallingAgent's last tool step and its final structured answer, which
 * share both hashes. Records here keep genuine hashes: each is the golden record's prompt
 * (so its inputs_hash) with another module and completion, which the hash does not cover.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FIXTURES, GOLDEN, runCli, runCliJson, tempDir, flat } from './helpers.js';

type Line = Record<string, unknown> & { messages: { role: string; content: unknown }[] };

const goldenFolder = path.join(GOLDEN, 'my_program', 'first_generator');
const golden = JSON.parse(readFileSync(path.join(goldenFolder, readdirSync(goldenFolder)[0]!), 'utf8').split('\n')[0]!) as Line;
const prompt = golden.messages.slice(0, -1);

const TOOL_STEP = 'tool_calls_generator_agent';
const FINAL = 'final_generator_agent';
const FINAL_ANSWER = '{"answer":"Toulouse","confidence":0.5}';

function callId(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

function record(n: number, program: string, module: string, completion: { content: unknown } & Record<string, unknown>, timestamp: number): Line {
  return { ...golden, call_id: callId(n), program, module, timestamp, messages: [...prompt, { role: 'assistant', ...completion }], outputs: completion };
}

const toolStep = (n: number, timestamp: number, program = 'agent_program') =>
  record(n, program, TOOL_STEP, { content: '', tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: 'search', arguments: { query: 'aerospace' } } }] }, timestamp);
const finalAnswer = (n: number, timestamp: number, program = 'agent_program') => record(n, program, FINAL, { content: FINAL_ANSWER }, timestamp);

/** Writes records under <root>/<program>/<module>/<module>_<ts>.jsonl, as the Recorder lays them out. */
function tree(records: Line[]): string {
  const root = path.join(tempDir(), 'tree');
  const files = new Map<string, string[]>();
  for (const r of records) {
    const file = path.join(root, r.program as string, r.module as string, `${r.module}_20260707-101530.jsonl`);
    files.set(file, [...(files.get(file) ?? []), JSON.stringify(r)]);
  }
  for (const [file, lines] of files) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${lines.join('\n')}\n`);
  }
  return root;
}

function jsonLines(file: string): Record<string, any>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

const t0 = golden.timestamp as number;

describe('the default key keeps records of different modules apart', () => {
  // The tool step comes first in time; the final answer's folder sorts first, so it is read first.
  const agent = [toolStep(1, t0), finalAnswer(2, t0 + 1)];

  it('the two calls share both recorded hashes, which verify confirms are genuine', () => {
    const root = tree(agent);
    const verify = runCliJson<{ checked: number; edited: number }>(['verify', root]);
    assert.deepEqual([verify.checked, verify.edited], [2, 0]);
  });

  it('dedupe keeps both, and still drops a repeat within one module', () => {
    const root = tree([...agent, finalAnswer(3, t0 + 5)]);
    const dry = runCliJson<{ kept: number; dropped: Record<string, number>; merged_across_modules?: number }>(['dedupe', root, '--dry-run']);
    assert.equal(dry.kept, 2);
    assert.equal(dry.dropped.duplicate, 1);
    assert.equal(dry.merged_across_modules, undefined, 'the default key merges nothing across modules, so says nothing of it');
  });

  for (const format of ['openai', 'nemo', 'nemo-customizer', 'ask-recording']) {
    it(`${format}: the agent's final answer is exported with the default options`, () => {
      const root = tree(agent);
      const out = path.join(tempDir(), 'out');
      const result = runCli(['export', root, '--format', format, '--out', out]);
      assert.equal(result.status, 0, result.stderr);
      const written = readdirSync(out, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && !e.parentPath.includes('_traces') && /\.(jsonl|json|yml)$/.test(e.name))
        .map((e) => readFileSync(path.join(e.parentPath, e.name), 'utf8'))
        .join('\n');
      assert.ok(written.includes('Toulouse') && written.includes('confidence'), `${format}: the final answer is in the output`);
      const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8');
      assert.doesNotMatch(manifest, /"duplicate"/);
    });
  }

  it('--key inputs,config merges them, says how many it merged across modules, and names the pair in the manifest', () => {
    const root = tree(agent);
    const out = path.join(tempDir(), 'out');
    const result = runCli(['dedupe', root, '--key', 'inputs,config', '--out', out]);
    assert.equal(result.status, 0, result.stderr);
    assert.match(flat(result.stderr), /merged 1 duplicate across modules/);
    const [drop] = jsonLines(path.join(out, '_traces', 'manifest.jsonl'));
    assert.equal(drop!.call_id, callId(2), 'keep first by timestamp: the later final answer gives way');
    assert.equal(drop!.kept, callId(1));
    assert.match(drop!.detail, new RegExp(`agent_program/${FINAL} gave way to agent_program/${TOOL_STEP}`));
    const dry = runCliJson<{ merged_across_modules: number }>(['dedupe', root, '--key', 'inputs,config', '--dry-run']);
    assert.equal(dry.merged_across_modules, 1);
    const exported = runCliJson<{ merged_across_modules: number; key: string }>(['export', root, '--key', 'inputs,config', '--format', 'openai', '--out', path.join(tempDir(), 'x')]);
    assert.deepEqual([exported.key, exported.merged_across_modules], ['inputs,config', 1]);
  });

  it('a repeat within one module is not counted as merged across modules', () => {
    const root = tree([finalAnswer(1, t0), finalAnswer(2, t0 + 1)]);
    const dry = runCliJson<{ dropped: Record<string, number>; merged_across_modules: number }>(['dedupe', root, '--key', 'inputs,config', '--dry-run']);
    assert.deepEqual([dry.dropped.duplicate, dry.merged_across_modules], [1, 0]);
  });

  it('other shapes with one prompt and one LM: generators of one program, one module in two programs', () => {
    // Two generators sharing the LM and the prompt in one program, and the final module of
    // one agent class reused in a second program: four calls, none a duplicate of another.
    const root = tree([
      record(1, 'qa_program', 'generator', { content: '{"answer":"Toulouse"}' }, t0),
      record(2, 'qa_program', 'generator_1', { content: '{"city":"Toulouse","country":"France"}' }, t0),
      finalAnswer(3, t0),
      finalAnswer(4, t0, 'second_program'),
    ]);
    const stats = runCliJson<{ unique_ok_keys: number; duplicate_ok_records: number }>(['stats', root]);
    assert.deepEqual([stats.unique_ok_keys, stats.duplicate_ok_records], [4, 0]);
    assert.equal(runCliJson<{ kept: number }>(['dedupe', root, '--dry-run']).kept, 4);
  });
});

describe('stats counts duplicates as dedupe drops them', () => {
  type ModuleTally = { duplicates: number };
  const modules = (root: string, extra: string[] = []) => runCliJson<{ key: string; modules: Record<string, ModuleTally> }>(['stats', root, ...extra]);

  it('with the default key the agent pair holds no duplicate; with --key inputs,config the one dedupe drops is booked to its module', () => {
    const root = tree([toolStep(1, t0), finalAnswer(2, t0 + 1)]);
    const byDefault = modules(root);
    assert.equal(byDefault.key, 'inputs,config,module');
    assert.deepEqual(Object.values(byDefault.modules).map((m) => m.duplicates), [0, 0]);
    // The final answer is read first (its folder sorts first) but is the later call: dedupe drops it.
    const merged = modules(root, ['--key', 'inputs,config']);
    assert.equal(merged.modules[`agent_program/${FINAL}`]!.duplicates, 1);
    assert.equal(merged.modules[`agent_program/${TOOL_STEP}`]!.duplicates, 0);
    const dedupe = runCliJson<{ drops: { call_id: string }[] }>(['dedupe', root, '--key', 'inputs,config', '--dry-run', '-v']);
    assert.deepEqual(dedupe.drops.map((d) => d.call_id), [callId(2)]);
  });

  it('across worker shares, the older record read later still wins', () => {
    // Many files so the tree is split into shares; each module's repeat is older than its first line.
    const records: Line[] = [];
    for (let i = 0; i < 40; i++) records.push(record(100 + i, 'p', `m${String(i).padStart(2, '0')}`, { content: `answer ${i}` }, t0 + 100 - i));
    records.push(toolStep(1, t0 + 10), finalAnswer(2, t0));
    const root = tree(records);
    const env = { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: '4096' };
    const merged = runCliJson<{ modules: Record<string, ModuleTally> }>(['stats', root, '--key', 'inputs,config'], { env });
    const one = runCliJson<{ modules: Record<string, ModuleTally> }>(['stats', root, '--key', 'inputs,config'], { env: { TRACES_WORKERS: '1' } });
    assert.deepEqual(merged.modules, one.modules);
    // Every record shares the golden prompt: 42 ok records, one key, 41 duplicates. The oldest,
    // the final answer at t0, is read last and is the one kept.
    const duplicates = Object.entries(merged.modules).filter(([, m]) => m.duplicates > 0).map(([name]) => name);
    assert.equal(duplicates.length, 41);
    assert.ok(!duplicates.includes(`agent_program/${FINAL}`), 'the oldest record is the one kept');
  });
});

describe('--against an output of the old default key', () => {
  it('is refused with what to do, and --key inputs,config compares like with like', () => {
    const root = tree([toolStep(1, t0), finalAnswer(2, t0 + 1)]);
    const earlier = path.join(tempDir(), 'earlier');
    assert.equal(runCli(['dedupe', root, '--key', 'inputs,config', '--out', earlier]).status, 0);
    const result = runCli(['dedupe', root, '--against', earlier, '--dry-run']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /made with --key inputs,config, the default before records of different modules were kept apart/);
    assert.match(result.stderr, /--force/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
    // Both calls have the one key the earlier output kept: both were handled, as that output saw it.
    const like = runCliJson<{ dropped: Record<string, number> }>(['dedupe', root, '--key', 'inputs,config', '--against', earlier, '--dry-run']);
    assert.equal(like.dropped.seen, 2);
  });

  it('keys of inputs,config,module made before they were mixed with the module (keys version 2) are refused', () => {
    const root = tree([finalAnswer(1, t0)]);
    const earlier = path.join(tempDir(), 'earlier');
    assert.equal(runCli(['dedupe', root, '--out', earlier]).status, 0);
    const runFile = path.join(earlier, '_traces', 'run.json');
    const run = JSON.parse(readFileSync(runFile, 'utf8')) as Record<string, unknown>;
    assert.deepEqual([run.key, run.keys_version], ['inputs,config,module', 3]);
    writeFileSync(runFile, JSON.stringify({ ...run, keys_version: 2 }));
    const result = runCli(['dedupe', root, '--against', earlier, '--dry-run']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /made by an earlier traces/);
  });
});

describe('verify tells a reserialized line from an edited one', () => {
  const folder = path.join(FIXTURES, 'reserialized');
  const verify = (name: string) => {
    const result = runCli(['verify', path.join(folder, name), '--json']);
    return { status: result.status, report: JSON.parse(result.stdout) as { checked: number; edited: number; reserialized: number; mismatches: { verdict: string; field: string; line: number }[] } };
  };

  it('the line as orjson wrote it matches', () => {
    const { status, report } = verify('orjson');
    assert.deepEqual([status, report.checked, report.edited, report.reserialized], [0, 1, 0, 0]);
  });

  it("Python json's rewrite (1e+16, 1e-07, \\u escapes, spaces) is reserialized, not edited", () => {
    const { status, report } = verify('python-json');
    assert.deepEqual([status, report.edited, report.reserialized], [0, 0, 1]);
    assert.deepEqual(report.mismatches.map((m) => [m.field, m.verdict]), [['inputs_hash', 'reserialized']]);
  });

  it('both orjson spellings: a 3.11.7 line (1e+16) verifies as written, and its rewrite with 1e16 is reserialized', () => {
    const { status, report } = verify('orjson-3.11.7-rewritten');
    assert.deepEqual([status, report.checked, report.edited, report.reserialized], [0, 2, 0, 1]);
    assert.equal(report.mismatches[0]!.line, 2);
  });

  it('a changed value is still edited, and fails the check', () => {
    const { status, report } = verify('edited');
    assert.deepEqual([status, report.edited], [1, 1]);
    assert.equal(report.mismatches[0]!.verdict, 'edited');
    assert.match(runCli(['verify', path.join(folder, 'edited')]).stdout, /inputs_hash does not match the recorded value \(edited\)/);
  });
});

describe('verify: numbers another writer spelled otherwise, values unchanged (issue 39)', () => {
  // Hashed by the machine's orjson, as the recorder hashes; then one number's text rewritten.
  const script = String.raw`
import hashlib, json, orjson, sys
def line(call_id, result):
    msgs = [{"role": "user", "content": "Compute."}, {"role": "tool", "content": result, "tool_call_id": "c1"}, {"role": "assistant", "content": "done"}]
    config = {"module": "synalinks", "class_name": "LanguageModel", "config": {"model": "openai/gpt-4o-mini", "name": "language_model"}, "registered_name": None}
    sha = lambda v: hashlib.sha256(orjson.dumps(v, option=orjson.OPT_SORT_KEYS)).hexdigest()
    rec = {"synalinks_version": "0.9.014", "call_id": call_id, "parent_call_id": None, "program": "p", "module": "m", "timestamp": 1783412130.5, "duration": 0.25,
           "usage": {"prompt_tokens": 4, "completion_tokens": 1, "total_tokens": 5}, "cost": 0.0, "messages": msgs, "inputs_hash": sha(msgs[:-1]),
           "outputs": msgs[-1], "config": config, "config_hash": sha(config)}
    return orjson.dumps(rec).decode()
print(json.dumps([line("00000000-0000-4000-8000-00000000000%d" % i, r) for i, r in enumerate([{"x": -0.0}, {"x": 0}, {"x": 100.0}, {"x": 1e-7}, {"x": -0.0}, {"x": -0.0}])]))
`;

  it('-0 (for orjson\'s -0.0 or 0) is reserialized as 1E+2 and 1.0E-7 are; a changed value stays edited', () => {
    const run = spawnSync('python3', ['-c', script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const lines = JSON.parse(run.stdout) as string[];
    const rewritten = [
      lines[0]!.replace('"x":-0.0', '"x":-0'), // Go's encoding/json writes a float's negative zero so
      lines[1]!.replace('"x":0', '"x":-0'),
      lines[2]!.replace('"x":100.0', '"x":1E+2'),
      lines[3]!.replace('"x":1e-7', '"x":1.0E-7'),
      lines[4]!,
      lines[5]!.replace('"x":-0.0', '"x":-1'),
    ];
    assert.equal(new Set(rewritten).size, 6);
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    writeFileSync(path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl'), `${rewritten.join('\n')}\n`);
    const result = runCli(['verify', tree, '--json']);
    const report = JSON.parse(result.stdout) as { checked: number; edited: number; reserialized: number; mismatches: { line: number; verdict: string }[] };
    assert.deepEqual(report.mismatches.map((m) => [m.line, m.verdict]), [[1, 'reserialized'], [2, 'reserialized'], [3, 'reserialized'], [4, 'reserialized'], [6, 'edited']]);
    assert.equal(result.status, 1, 'the edited line fails the check');
  });
});

describe('floats as orjson writes them', () => {
  it("match orjson 3.8's own output (ryu's shortest form), and 3.11.7's signed positive exponent", async () => {
    const { orjsonFloat } = await import('../src/canonical/orjson-numbers.js');
    // Printed by the machine's orjson 3.8.3: [orjson.dumps(x) for x in values].
    const values = [1e16, 1e-7, 1e-5, 1e-4, 1e-6, 1e15, 123456.0, 1.5e300, 0.1, 1e21, 1e22, 5e-324, -0.0, 0.0, 1.7976931348623157e308, 12345678901234567.0, 0.000123456, -2.5e-8, 153133.0, 9007199254740993.0, 1e100, 123.456, -1.0];
    const written = ['1e16', '1e-7', '0.00001', '0.0001', '1e-6', '1000000000000000.0', '123456.0', '1.5e300', '0.1', '1e21', '1e22', '5e-324', '-0.0', '0.0', '1.7976931348623157e308', '1.2345678901234568e16', '0.000123456', '-2.5e-8', '153133.0', '9007199254740992.0', '1e100', '123.456', '-1.0'];
    assert.deepEqual(values.map((v) => orjsonFloat(v, 'before-3.11.7')), written);
    assert.deepEqual(
      values.map((v) => orjsonFloat(v, 'from-3.11.7')),
      written.map((w) => w.replace(/e(\d)/, 'e+$1')),
    );
  });
});
