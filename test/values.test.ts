/**
 * Recorded values reach every export as recorded: each number's text byte for byte, in
 * every target and every place a record carries JSON (tool arguments as an object and as a
 * string, tool results as an object and as a string, structured outputs, tool definitions),
 * from Synalinks, Ask and klieo sources. Python reads the exported lines as the reference:
 * orjson must load them, and `json` with text-keeping number hooks gives each number's text.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalize, sha256Hex } from '../src/canonical/canonical.js';
import { isJsonNumber, JsonNumber, lastWrittenDepth, parseJson, parseJsonText, writeJson, writeRecordJson } from '../src/canonical/json-value.js';
import { JsonSyntaxError, MAX_DEPTH } from '../src/canonical/scan.js';
import { runCli, tempDir } from './helpers.js';

/** Number forms JSON.parse + JSON.stringify rewrite (or round), and a few it keeps, as controls. */
const NUMBERS = [
  '18446744073709551615',
  '-18446744073709551615',
  '153133.0',
  '1e16',
  '22.0',
  '-0',
  '-0.0',
  '1E+2',
  '0.1e-7',
  '3.14159265358979323846264338327950288',
  '1.5E-10',
  '100000000000000000000000.5',
  '9007199254740993',
  '42',
  '2.5',
];

/** `{"n0":<text>,"n1":<text>,…}` with the numbers written as recorded. */
const OBJECT_TEXT = `{${NUMBERS.map((n, i) => `"n${i}":${n}`).join(',')}}`;
/** The same as a model writes it into an argument string: spaces after separators, kept verbatim. */
const STRING_TEXT = `{${NUMBERS.map((n, i) => `"n${i}": ${n}`).join(', ')}}`;

const python = spawnSync('python3', ['-c', 'import orjson'], { encoding: 'utf8' });
const HAVE_ORJSON = python.status === 0;
const SKIP = HAVE_ORJSON ? false : 'python3 with orjson is not installed: the strict reference reader is missing';

/** Builds a message list as JSON text: `@OBJ@` stands for OBJECT_TEXT, so numbers are never JavaScript values. */
function messagesText(messages: unknown[]): string {
  return JSON.stringify(messages).replaceAll('"@OBJ@"', OBJECT_TEXT);
}

function synalinksLine(callId: string, messages: unknown[]): string {
  const text = messagesText(messages);
  const parsed = parseJsonText(text) as unknown[];
  const inputs = canonicalize(writeJson(parsed.slice(0, -1)));
  const outputs = writeJson(parsed.at(-1));
  const config = { config: { model: 'openai/gpt-4o-mini' } };
  const configText = JSON.stringify(config);
  return (
    `{"synalinks_version":"0.9.014","call_id":"${callId}","parent_call_id":null,"program":"numbers","module":"numbers",` +
    `"timestamp":1783412130,"duration":1.5,"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"cached_tokens":0,"cache_creation_tokens":0,"reasoning_tokens":0},` +
    `"cost":0.001,"messages":${text},"inputs_hash":"${sha256Hex(inputs)}","outputs":${outputs},` +
    `"config":${configText},"config_hash":"${sha256Hex(canonicalize(configText))}"}`
  );
}

const callObject = (id: string) => ({ id, type: 'function', function: { name: 'measure', arguments: '@OBJ@' } });
const callString = (id: string) => ({ id, type: 'function', function: { name: 'record', arguments: STRING_TEXT } });

/** A tree with each place holding every number form. */
function numbersTree(): { tree: string; tools: string } {
  const root = tempDir('traces-values-');
  const tree = path.join(root, 'tree');
  mkdirSync(path.join(tree, 'numbers', 'numbers'), { recursive: true });
  const lines = [
    // An agent's last step: both argument forms, both tool result forms, a structured output.
    synalinksLine('00000000-0000-4000-8000-000000000001', [
      { role: 'system', content: 'Measure things.' },
      { role: 'user', content: 'Measure everything.' },
      { role: 'assistant', content: '', tool_calls: [callObject('c1'), callString('c2')] },
      { role: 'tool', tool_call_id: 'c1', content: '@OBJ@' },
      { role: 'tool', tool_call_id: 'c2', content: STRING_TEXT },
      { role: 'assistant', content: '@OBJ@' },
    ]),
    // A first step ending at the tool calls (the only tool form NeMo Customizer can hold).
    synalinksLine('00000000-0000-4000-8000-000000000002', [
      { role: 'user', content: 'Measure this once.' },
      { role: 'assistant', content: '', tool_calls: [callObject('c3'), callString('c4')] },
    ]),
    // A structured output alone.
    synalinksLine('00000000-0000-4000-8000-000000000003', [
      { role: 'user', content: 'Report the numbers.' },
      { role: 'assistant', content: '@OBJ@' },
    ]),
  ];
  writeFileSync(path.join(tree, 'numbers', 'numbers', 'numbers_20260709-120000.jsonl'), `${lines.join('\n')}\n`);
  const tools = path.join(root, 'tools.json');
  const schema = `{"type":"object","properties":{${NUMBERS.map((n, i) => `"n${i}":{"type":"number","maximum":${n}}`).join(',')}}}`;
  writeFileSync(
    tools,
    `[{"type":"function","function":{"name":"measure","description":"Measures.","parameters":${schema}}},` +
      `{"type":"function","function":{"name":"record","description":"Records.","parameters":${schema}}}]`,
  );
  return { tree, tools };
}

/**
 * Python reads each exported line: orjson must accept it; `json` with hooks that keep number
 * text reports, per place, the text of each `n<i>` number found (JSON held in strings included).
 */
const READER = String.raw`
import json, sys, orjson
from decimal import Decimal
NUMBERS = json.loads(sys.argv[1])
def keep(text): return ('num', text)
def load(text): return json.loads(text, parse_float=keep, parse_int=keep, parse_constant=keep)
def texts(value):
    assert isinstance(value, dict), value
    out = {}
    for k, v in value.items():
        assert isinstance(v, tuple), (k, v)
        out[k] = v[1]
    return out
def as_value(v):
    return load(v) if isinstance(v, str) else v
def check_decimal(found):
    # The exported value equals the recorded one as a decimal too (not only as text).
    for k, text in found.items():
        assert Decimal(text) == Decimal(NUMBERS[int(k[1:])]), (k, text)
report = []
for line in sys.stdin.read().splitlines():
    orjson.loads(line)
    row = load(line)
    places = {}
    for m in row['messages']:
        for c in m.get('tool_calls') or []:
            args = c['function']['arguments']
            kind = 'args_string' if isinstance(args, str) and ', ' in args else 'args_object_as_string' if isinstance(args, str) else 'args_object'
            places.setdefault(kind + ':' + c['function']['name'], texts(as_value(args)))
        if m['role'] == 'tool':
            places.setdefault('tool_result_' + ('string' if ', ' in m['content'] else 'object'), texts(load(m['content'])))
        if m['role'] == 'assistant' and (m.get('content') or '').startswith('{'):
            places['structured_output'] = texts(load(m['content']))
    for t in row.get('tools') or []:
        props = t['function']['parameters']['properties']
        maxima = {k: v['maximum'][1] for k, v in props.items() if 'maximum' in v}
        if maxima: places['tool_definition:' + t['function']['name']] = maxima
    for found in places.values(): check_decimal(found)
    report.append(places)
print(json.dumps(report))
`;

function readWithPython(lines: string): Array<Record<string, Record<string, string>>> {
  const result = spawnSync('python3', ['-c', READER, JSON.stringify(NUMBERS)], { input: lines, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as Array<Record<string, Record<string, string>>>;
}

const EXPECTED = Object.fromEntries(NUMBERS.map((n, i) => [`n${i}`, n]));

describe('exported numbers keep their recorded text', () => {
  const { tree, tools } = numbersTree();
  const cases: Array<{ format: string; places: string[] }> = [
    {
      format: 'openai',
      places: ['args_object_as_string:measure', 'args_string:record', 'tool_result_object', 'tool_result_string', 'structured_output', 'tool_definition:measure', 'tool_definition:record'],
    },
    {
      format: 'nemo',
      places: ['args_object_as_string:measure', 'args_string:record', 'tool_result_object', 'tool_result_string', 'structured_output', 'tool_definition:measure', 'tool_definition:record'],
    },
    {
      format: 'nemo-customizer',
      places: ['args_object:measure', 'args_object:record', 'structured_output', 'tool_definition:measure', 'tool_definition:record'],
    },
  ];
  for (const { format, places } of cases) {
    it(`${format}: every number form, in every place, byte for byte`, { skip: SKIP }, () => {
      const out = path.join(tempDir(), format);
      const result = runCli(['export', tree, '--format', format, '--out', out, '--tools', tools, '--trajectories', 'all', '--validation-fraction', '0', '--scrub', 'none', '--json']);
      assert.equal(result.status, 0, result.stderr);
      const lines = readFileSync(path.join(out, 'training.jsonl'), 'utf8');
      const seen = new Set<string>();
      for (const row of readWithPython(lines)) {
        for (const [place, found] of Object.entries(row)) {
          seen.add(place);
          assert.deepEqual(found, EXPECTED, `${format} ${place}`);
        }
      }
      assert.deepEqual([...seen].sort(), [...places].sort());
      // The model's own argument string is written as it was recorded, spaces included.
      if (format !== 'nemo-customizer') assert.ok(lines.includes(JSON.stringify(STRING_TEXT).slice(1, -1)));
      // Token counts and validation saw the same line: the export validated its own output.
      const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as { validation?: { ok?: boolean } };
      assert.notEqual(report.validation?.ok, false);
    });
  }

  it('traces validate reads the exported numbers with the same parser and counts the same tokens', { skip: SKIP }, () => {
    const out = path.join(tempDir(), 'nemo');
    const exported = runCli(['export', tree, '--format', 'nemo', '--out', out, '--tools', tools, '--trajectories', 'all', '--validation-fraction', '0', '--scrub', 'none']);
    assert.equal(exported.status, 0, exported.stderr);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as { files: { file: string; tokens: unknown; errors: unknown[] }[] };
    const training = report.files.find((f) => f.file === 'training.jsonl')!;
    assert.deepEqual(training.errors, []);
    const checked = runCli(['validate', path.join(out, 'training.jsonl'), '--format', 'nemo', '--json']);
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    const validated = JSON.parse(checked.stdout) as { tokens: unknown; warnings: unknown[] };
    assert.deepEqual(validated.tokens, training.tokens);
    // nemo writes string arguments: no warning about object arguments.
    assert.deepEqual(validated.warnings, []);
  });
});

describe('numbers from Ask and klieo recordings keep their text', () => {
  it('klieo tool outputs and structured completions', { skip: SKIP }, () => {
    const dir = tempDir('traces-klieo-values-');
    const run =
      `{"run_id":"01NUMBERS","agent":"numbers","started_at":"2026-05-01T10:00:00Z","finished_at":"2026-05-01T10:00:04Z","status":"completed","steps":[` +
      `{"idx":0,"kind":"llm_call","name":"gpt-4o","prompt_tokens":10,"completion_tokens":5,"cost_usd":0.001,"input":{"prompt":"Measure."},"output":"Measuring.","error":null,"latency":100,"span_id":null},` +
      `{"idx":1,"kind":"tool_call","name":"measure","input":${OBJECT_TEXT},"output":${OBJECT_TEXT},"error":null,"latency":100,"span_id":null},` +
      `{"idx":2,"kind":"llm_call","name":"gpt-4o","prompt_tokens":10,"completion_tokens":5,"cost_usd":0.001,"input":{"prompt":"Report."},"output":${OBJECT_TEXT},"error":null,"latency":100,"span_id":null}` +
      `],"tokens":{"prompt_tokens":20,"completion_tokens":10},"cost_estimate":null}`;
    writeFileSync(path.join(dir, 'run.json'), run);
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', dir, '--format', 'openai', '--out', out, '--trajectories', 'all', '--validation-fraction', '0', '--scrub', 'none']);
    assert.equal(result.status, 0, result.stderr);
    const rows = readWithPython(readFileSync(path.join(out, 'training.jsonl'), 'utf8'));
    const places = new Set(rows.flatMap((row) => Object.keys(row)));
    for (const row of rows) for (const [place, found] of Object.entries(row)) assert.deepEqual(found, EXPECTED, place);
    assert.ok(places.has('args_object_as_string:measure'), [...places].join());
    assert.ok(places.has('tool_result_object'), [...places].join());
    assert.ok(places.has('structured_output'), [...places].join());
  });

  it('Ask tool outputs written back as recordings keep their text', () => {
    const dir = path.join(tempDir('traces-ask-values-'), 'numbers');
    mkdirSync(dir);
    const recording =
      `{"test":"numbers","recorded_at":"2026-05-01T10:00:00Z","interactions":[` +
      `{"type":"provider","messages":[{"role":"user","content":"Measure."}],"model":"gpt-4o","result":{"type":"message","content":"","tool_calls":[{"id":"c1","type":"function","name":"measure","arguments":${JSON.stringify(STRING_TEXT)}}],"metadata":{"model":"gpt-4o","finish_reason":"tool_calls","input_tokens":10,"output_tokens":5}}},` +
      `{"type":"tool","name":"Ask::Tools::Measure","args":${JSON.stringify(STRING_TEXT)},"result":{"ok":true,"output":${OBJECT_TEXT},"error":null,"metadata":{},"type":"result"}},` +
      `{"type":"provider","messages":[{"role":"user","content":"Measure."},{"role":"assistant","content":""},{"role":"tool","content":"x"}],"model":"gpt-4o","result":{"type":"message","content":"done","tool_calls":null,"metadata":{"model":"gpt-4o","finish_reason":"stop","input_tokens":10,"output_tokens":5}}}` +
      `]}`;
    writeFileSync(path.join(dir, 'recording.yml'), recording);
    const out = path.join(tempDir(), 'ask-out');
    const result = runCli(['export', path.dirname(dir), '--format', 'ask-recording', '--out', out]);
    assert.equal(result.status, 0, result.stderr);
    const folder = readdirSync(out).find((name) => name.startsWith('numbers'))!;
    const written = readFileSync(path.join(out, folder, 'recording.yml'), 'utf8');
    // Pretty-printed, the output object's members each on a line with the recorded text.
    NUMBERS.forEach((n, i) => assert.ok(written.includes(`"n${i}": ${n}`), `n${i}: ${n}`));
    assert.ok(written.includes(JSON.stringify(STRING_TEXT)));
  });
});

describe('the value parser and writer', () => {
  it('round-trips a document byte for byte and keeps numbers as JsonNumber', () => {
    const text = `{"a":[${NUMBERS.join(',')}],"b":{"c":null,"d":true,"e":false,"f":"x\\u00e9\\n"},"g":[]}`;
    const value = parseJsonText(text) as { a: unknown[] };
    assert.ok(value.a.every(isJsonNumber));
    assert.equal(writeJson(value), text.replace('\\u00e9', 'é'));
  });

  it('pretty-prints as JSON.stringify(value, null, 2) does', () => {
    const value = { a: [1, { b: 'x' }, []], c: {}, d: null, e: [[2]] };
    assert.equal(writeJson(parseJsonText(JSON.stringify(value)), 2), JSON.stringify(value, null, 2));
  });

  it('a __proto__ key is data, as in JSON.parse', () => {
    const value = parseJsonText('{"__proto__":{"x":1},"y":2}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.equal(writeJson(value), '{"__proto__":{"x":1},"y":2}');
  });

  it('keeps the last of duplicate keys, as orjson does', () => {
    assert.equal(writeJson(parseJsonText('{"a":1,"b":2,"a":3.0}')), '{"a":3.0,"b":2}');
  });

  it('rejects what a strict parser rejects', () => {
    for (const bad of ['{"a":"x\ty"}', '{"a":"\\ud800"}', '{"a":1} x', '{"a":01}', '{"a":1.}', '[1,]', '{"a"}', '"\u0001"']) {
      assert.throws(() => parseJsonText(bad), Error, bad);
    }
  });

  it('parses nesting up to the strict limit, refuses deeper as orjson does, and never grows the stack', () => {
    const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
    assert.ok(Array.isArray(parseJsonText(nested(MAX_DEPTH))));
    assert.throws(() => parseJsonText(nested(MAX_DEPTH + 1)), JsonSyntaxError);
    assert.throws(() => parseJsonText(nested(200_000)), JsonSyntaxError);
    // The builder itself is iterative: bytes the scanner already accepted may nest at any depth.
    const deep = Buffer.from(nested(200_000));
    assert.ok(Array.isArray(parseJson(deep, 0, deep.length)));
  });

  it('a JsonNumber crossing to a worker thread (structured clone) is still written as its text', () => {
    const cloned = structuredClone({ n: new JsonNumber('1e16'), m: [new JsonNumber('18446744073709551615')] });
    assert.equal(writeJson(cloned), '{"n":1e16,"m":[18446744073709551615]}');
    assert.equal(writeRecordJson(cloned), '{"n":1e16,"m":[18446744073709551615]}');
    // A clone of a number JavaScript prints as recorded: still its text, never a quoted string.
    assert.equal(writeRecordJson(structuredClone({ n: new JsonNumber('42') })), '{"n":42}');
  });
});

describe('parseJson: short keys and strings from the table of texts seen', () => {
  it('gives every key and string its own text, whatever it shares a slot or a length with', () => {
    // Thousands of short texts (more than the table holds), texts of one length differing in one
    // byte, the same text escaped and not, UTF-8, the longest kept and one byte longer.
    const texts = [
      ...Array.from({ length: 3000 }, (_, i) => `k${i.toString(36)}`),
      'ab', 'ba', 'aa', 'a', '', 'role', 'rolf', 'Role', 'é', 'ü', String.raw`\u00e9`, String.raw`\n`, String.raw`a\"b`, String.raw`\\`,
      'x'.repeat(16), 'x'.repeat(17), 'y'.repeat(32), 'y'.repeat(33), 'tool_calls', 'tool_callz',
    ];
    const docs = texts.map((t, i) => `{"${t}":"${texts[(i * 7) % texts.length]}","role":"${t}","list":["${t}","${texts[(i + 1) % texts.length]}"]}`);
    for (let round = 0; round < 2; round++) {
      for (const doc of docs) {
        const b = Buffer.from(doc);
        assert.deepEqual(parseJson(b, 0, b.length), JSON.parse(doc), doc);
      }
    }
  });
});

describe('writeRecordJson (the native serializer where it writes what writeJson writes)', () => {
  const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
  const texts = [
    // Every number form, alone and among numbers JavaScript prints as recorded.
    ...NUMBERS.map((n) => `{"a":${n}}`),
    ...NUMBERS.map((n) => `[1,2.5,${n},"x"]`),
    `{"a":[${NUMBERS.join(',')}],"b":{"c":null,"d":true,"e":false,"f":"x\\u00e9\\n\\u2028\\ud83d\\ude00"},"g":[],"h":{}}`,
    '{"__proto__":{"x":1},"y":2}',
    '{"1":"integer keys first","b":0,"0":-1.25e-7}',
    String.raw`{"quote":"\"\\\/\b\f\r\t\u0000\u001f\u007f\u00ff"}`,
    nested(MAX_DEPTH - 2),
    nested(MAX_DEPTH),
    `{"s":${JSON.stringify('{'.repeat(MAX_DEPTH + 5))}}`,
  ];

  it('writes every recorded value as writeJson does, and a depth check sees through it', () => {
    for (const text of texts) {
      const value = parseJsonText(text);
      const expected = writeJson(value);
      const exactDepth = lastWrittenDepth();
      assert.equal(writeRecordJson(value), expected, text.slice(0, 80));
      // A bound: never below the depth, and at MAX_DEPTH exactly when the depth is.
      assert.ok(lastWrittenDepth() >= exactDepth, text.slice(0, 80));
      assert.equal(lastWrittenDepth() >= MAX_DEPTH, exactDepth >= MAX_DEPTH, text.slice(0, 80));
    }
  });

  it('writes plain values (undefined members, holes, non-finite numbers) as writeJson does', () => {
    const values: unknown[] = [
      { a: undefined, b: () => 1, c: Number.NaN, d: -Infinity, e: [undefined, , 3], f: -0, g: 'é', lone: '\ud800 and \udfff' },
      [new JsonNumber('1.0'), { n: new JsonNumber('-0') }],
      'text',
      7,
    ];
    for (const value of values) assert.equal(writeRecordJson(value), writeJson(value));
  });

  it('a value nested past the stack fails as writeJson fails (RangeError)', () => {
    let deep: unknown[] = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    assert.throws(() => writeJson(deep), RangeError);
    assert.throws(() => writeRecordJson(deep), RangeError);
  });
});
