/**
 * Issue 11, planted-secret matrix: every kind of credential, after each kind of separator
 * (space, and the characters JSON writes as escapes: newline, tab, quote, backslash), in
 * every place a Synalinks record holds text (object keys included). Each must be redacted in all three export
 * formats, found by `scan`, and make `--drop-on secrets` drop its example.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import {
  ANTHROPIC_KEY,
  AWS_KEY_ID,
  AWS_SECRET,
  GITHUB_PAT,
  GITHUB_TOKEN,
  GOOGLE_KEY,
  JWT,
  OPENAI_KEY,
  PEM_BODY,
  PRIVATE_KEY,
  SLACK_TOKEN,
  STRIPE_KEY,
} from './fake-secrets.js';
import { runCli, synalinksLine, tempDir } from './helpers.js';

interface Kind {
  detector: string;
  /** What is planted. */
  text: string;
  /** What must never appear in an export. */
  values: string[];
}

const KINDS: Kind[] = [
  { detector: 'openai', text: OPENAI_KEY, values: [OPENAI_KEY] },
  { detector: 'anthropic', text: ANTHROPIC_KEY, values: [ANTHROPIC_KEY] },
  { detector: 'aws_access_key_id', text: AWS_KEY_ID, values: [AWS_KEY_ID] },
  { detector: 'aws_secret_access_key', text: `aws_secret_access_key=${AWS_SECRET}`, values: [AWS_SECRET] },
  { detector: 'github', text: GITHUB_TOKEN, values: [GITHUB_TOKEN] },
  { detector: 'github', text: GITHUB_PAT, values: [GITHUB_PAT] },
  { detector: 'slack', text: SLACK_TOKEN, values: [SLACK_TOKEN] },
  { detector: 'stripe', text: STRIPE_KEY, values: [STRIPE_KEY] },
  { detector: 'google_api_key', text: GOOGLE_KEY, values: [GOOGLE_KEY] },
  { detector: 'jwt', text: JWT, values: [JWT, JWT.split('.')[2]] },
  { detector: 'private_key', text: PRIVATE_KEY, values: PEM_BODY.split('\n') },
];

/** Decoded characters before the secret; all but the space are escapes in JSON text. */
const SEPARATORS: Record<string, string> = { space: ' ', newline: '\n', tab: '\t', quote: '"', backslash: '\\' };

const PLACES = [
  'system',
  'user',
  'user_parts',
  // Half of the secret in one text part, half in the next: every target writes them as one text.
  'user_parts_split',
  'structured_output',
  'structured_output_nested_json',
  'reasoning',
  'tool_arguments_string',
  'tool_arguments_object',
  'tool_arguments_key',
  'tool_result_string',
  'tool_result_object',
] as const;
type Place = (typeof PLACES)[number];

interface Cell {
  kind: Kind;
  separator: string;
  place: Place;
  callId: string;
}


/** Python writes floats with their fraction: a structured output's number text that must survive redaction. */
const RECORDED_NUMBER = '153133.0';

/** Where the secret sits decides the record's shape: an agent's first step ends at its tool call, its last step after a tool result. */
type Shape = 'first_step' | 'structured_call' | 'last_step';
function shapeOf(place: Place): Shape {
  if (place === 'tool_arguments_string' || place === 'tool_arguments_object' || place === 'tool_arguments_key') return 'first_step';
  if (place === 'tool_result_string' || place === 'tool_result_object') return 'last_step';
  return 'structured_call';
}

/** Two text parts that split `text` where `fromEnd` characters are left. */
function splitAcrossParts(text: string, fromEnd: number): object[] {
  const at = text.length - fromEnd;
  return [
    { type: 'text', text: text.slice(0, at) },
    { type: 'text', text: text.slice(at) },
  ];
}

/** A real-shaped Synalinks record holding the secret in exactly one place. */
function recordLine(cell: Cell, index: number): string {
  const planted = `region=eu${SEPARATORS[cell.separator]}${cell.kind.text}`;
  const at = (place: Place, filler: string): string => (cell.place === place ? `${filler} ${planted}` : filler);
  const shape = shapeOf(cell.place);
  const toolCallId = `call_${index}`;
  const query = at(cell.place === 'tool_arguments_string' ? 'tool_arguments_string' : 'tool_arguments_object', 'weather in Paris');
  // Recorded argument strings are the model's own text: compact, numbers as written.
  const argumentsValue =
    cell.place === 'tool_arguments_string'
      ? `${JSON.stringify({ query }).slice(0, -1)},"days":3.0}`
      : { query, days: 3, ...(cell.place === 'tool_arguments_key' ? { [at('tool_arguments_key', 'note')]: true } : {}) };
  const toolCallTurn = { role: 'assistant', content: '', tool_calls: [{ id: toolCallId, type: 'function', function: { name: 'get_weather', arguments: argumentsValue } }] };
  const toolResult =
    cell.place === 'tool_result_string'
      ? JSON.stringify({ result: at('tool_result_string', 'sunny'), log: 'Successfully executed' })
      : { result: at('tool_result_object', 'sunny'), log: 'Successfully executed' };
  const nested = JSON.stringify({ note: at('structured_output_nested_json', 'see config') });
  // The completion of a structured call: the object as compact JSON (as orjson writes it).
  const structured =
    `{"answer":${JSON.stringify(at('structured_output', 'It will be sunny.'))},` +
    `"payload":${JSON.stringify(nested)},"confidence":${RECORDED_NUMBER}}`;
  const structuredTurn = { role: 'assistant', content: structured, ...(cell.place === 'reasoning' ? { reasoning_content: at('reasoning', 'The forecast says sun.') } : {}) };
  const messages: object[] = [
    { role: 'system', content: at('system', 'You are a weather assistant.') },
    cell.place === 'user_parts'
      ? { role: 'user', content: [{ type: 'text', text: `Case ${index}: ` }, { type: 'text', text: at('user_parts', 'What is the weather?') }] }
      : cell.place === 'user_parts_split'
        ? { role: 'user', content: splitAcrossParts(`Case ${index}: What is the weather? ${planted}`, Math.ceil(cell.kind.text.length / 2)) }
        : { role: 'user', content: at('user', `Case ${index}: What is the weather?`) },
  ];
  if (shape === 'first_step') messages.push(toolCallTurn);
  else if (shape === 'structured_call') messages.push(structuredTurn);
  else messages.push(toolCallTurn, { role: 'tool', tool_call_id: toolCallId, content: toolResult }, structuredTurn);
  // A structured call's `outputs` is the parsed object, with its recorded number text; a plain call's is the message.
  const outputsText = shape === 'first_step' ? JSON.stringify(toolCallTurn) : structured;
  return synalinksLine({ index, callId: cell.callId, program: 'weather_agent', module: 'weather_agent', messages, outputsText });
}

const CELLS: Cell[] = [];
for (const kind of KINDS) {
  for (const separator of Object.keys(SEPARATORS)) {
    for (const place of PLACES) {
      const n = CELLS.length;
      CELLS.push({ kind, separator, place, callId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}` });
    }
  }
}

/** Every string in a JSON value, keys included, and the strings of JSON held in strings, decoded. */
function* decodedStrings(value: unknown, depth = 0): Generator<string> {
  if (typeof value === 'string') {
    yield value;
    const trimmed = value.trim();
    if (depth < 32 && (trimmed.startsWith('{') || trimmed.startsWith('['))) {
      let inner: unknown;
      try {
        inner = JSON.parse(trimmed);
      } catch {
        return;
      }
      yield* decodedStrings(inner, depth + 1);
    }
  } else if (Array.isArray(value)) {
    for (const item of value) yield* decodedStrings(item, depth);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      yield key;
      yield* decodedStrings(item, depth);
    }
  }
}

function writtenFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? writtenFiles(full) : [full];
  });
}

/** Planted values found in the files, by raw bytes and by every decoded string (a value may hide behind escapes). */
function leaks(dir: string): string[] {
  const found: string[] = [];
  const values = KINDS.flatMap((k) => k.values.map((value) => ({ detector: k.detector, value })));
  for (const file of writtenFiles(dir)) {
    const raw = readFileSync(file, 'utf8');
    const texts = [raw];
    const documents = file.endsWith('.jsonl') ? raw.split('\n').filter((l) => l.trim() !== '') : file.endsWith('.json') ? [raw] : [];
    for (const document of documents) texts.push(...decodedStrings(JSON.parse(document)));
    for (const { detector, value } of values) {
      if (texts.some((t) => t.includes(value))) found.push(`${detector} value in ${path.relative(dir, file)}`);
    }
  }
  return [...new Set(found)];
}

const cellName = (c: Cell): string => `${c.kind.detector} after ${c.separator} in ${c.place}`;

describe('planted-secret matrix', () => {
  let tree = '';
  before(() => {
    tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'weather_agent'), { recursive: true });
    writeFileSync(path.join(tree, 'weather_agent', 'weather_agent_20260709-120000.jsonl'), `${CELLS.map(recordLine).join('\n')}\n`);
  });

  it(`the tree is well formed: ${CELLS.length} records with genuine hashes, none damaged`, () => {
    const result = runCli(['verify', tree, '--json']);
    assert.equal(result.status, 0, result.stdout + result.stderr);
    const report = JSON.parse(result.stdout) as { checked: number; mismatches: unknown[]; damaged_lines: number };
    assert.deepEqual(report, { ...report, checked: CELLS.length, mismatches: [], damaged_lines: 0 });
  });

  it('scan finds every planted secret, in every placement, without printing one', () => {
    const result = runCli(['scan', tree, '--kinds', 'secrets', '--json']);
    assert.equal(result.status, 1, result.stderr);
    const report = JSON.parse(result.stdout) as { records: number; details: { detector: string; call_id: string; path: string }[] };
    assert.equal(report.records, CELLS.length);
    const found = new Set(report.details.map((f) => `${f.call_id} ${f.detector}`));
    const expected = new Map<Place, number>(PLACES.map((p) => [p, 0]));
    const actual = new Map<Place, number>(PLACES.map((p) => [p, 0]));
    const missed: string[] = [];
    for (const cell of CELLS) {
      expected.set(cell.place, expected.get(cell.place)! + 1);
      if (found.has(`${cell.callId} ${cell.kind.detector}`)) actual.set(cell.place, actual.get(cell.place)! + 1);
      else missed.push(cellName(cell));
    }
    assert.deepEqual(Object.fromEntries(actual), Object.fromEntries(expected), `missed: ${missed.slice(0, 20).join('; ')}`);
    for (const { values } of KINDS) for (const value of values) assert.ok(!result.stdout.includes(value), 'the report leaks nothing');
  });

  for (const format of ['openai', 'nemo', 'nemo-customizer']) {
    it(`export --format ${format} writes none of the planted values, keeps recorded number text, and stays valid`, () => {
      const out = path.join(tempDir(), format);
      const result = runCli(['export', tree, '--format', format, '--out', out, '--trajectories', 'all', '--validation-fraction', '0', '--json']);
      assert.equal(result.status, 0, result.stderr);
      assert.deepEqual(leaks(out), []);
      const lines = readFileSync(path.join(out, 'training.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
      // NeMo Customizer cannot represent tool results: those examples are dropped, the rest redacted.
      const representable = CELLS.filter((c) => format !== 'nemo-customizer' || shapeOf(c.place) !== 'last_step');
      assert.equal(lines.length, representable.length, 'every representable example exported, redacted');
      // Redaction re-encodes only the strings it changed: the structured output's number keeps its text.
      const structured = representable.filter((c) => shapeOf(c.place) !== 'first_step').length;
      assert.equal(lines.filter((line) => line.includes(`\\"confidence\\":${RECORDED_NUMBER}`)).length, structured);
      const report = JSON.parse(result.stdout) as { scrub: { redactions: Record<string, number> } };
      for (const { detector } of KINDS) assert.ok(report.scrub.redactions[detector] > 0, `${detector} counted`);
      const check = runCli(['validate', path.join(out, 'training.jsonl'), '--format', format]);
      assert.equal(check.status, 0, check.stdout);
    });
  }

  it('export --format ask-recording writes none of the planted values (recordings are committed with the tests that replay them); --drop-on secrets drops every one', () => {
    const out = path.join(tempDir(), 'ask-recording');
    const result = runCli(['export', tree, '--format', 'ask-recording', '--out', out, '--trajectories', 'all', '--json']);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(leaks(out), []);
    const report = JSON.parse(result.stdout) as { conversations: number; scrub: { redactions: Record<string, number> } };
    assert.equal(report.conversations, CELLS.length);
    for (const { detector } of KINDS) assert.ok(report.scrub.redactions[detector] > 0, `${detector} counted`);
    const dropOut = path.join(tempDir(), 'ask-recording-drop');
    const dropped = JSON.parse(runCli(['export', tree, '--format', 'ask-recording', '--out', dropOut, '--trajectories', 'all', '--drop-on', 'secrets', '--json']).stdout) as { dropped: Record<string, number> };
    assert.equal(dropped.dropped.secret, CELLS.length);
  });

  it('--drop-on secrets drops every example that holds one, whatever the escape before it', () => {
    const out = path.join(tempDir(), 'drop');
    const result = runCli(['export', tree, '--format', 'nemo', '--out', out, '--trajectories', 'all', '--drop-on', 'secrets', '--json']);
    // Every example holds one: nothing is left to write, and the run says what it dropped.
    assert.equal(result.status, 1, result.stderr);
    const failure = JSON.parse(result.stdout) as { error: string; exit_code: number };
    assert.equal(failure.exit_code, 1);
    assert.match(failure.error, new RegExp(`^no example to write: all ${CELLS.length} records read were dropped \\(secret ${CELLS.length}\\)`));
    assert.ok(!existsSync(out));
    for (const { values } of KINDS) for (const value of values) assert.ok(!result.stdout.includes(value) && !result.stderr.includes(value));
  });
});

describe('keys glued to words (issue 39): export redacts and scan finds every one', () => {
  const GLUED = KINDS.filter((k) => !['aws_secret_access_key', 'private_key'].includes(k.detector)).flatMap((kind) =>
    [
      ['creds/', '_backup.json'],
      ['KEY_', ''],
      ['', '-old'],
      ['OLD-', '_v2'],
    ].map(([before, after]) => ({ kind, text: `${before}${kind.text}${after}` })),
  );
  let tree = '';
  before(() => {
    tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'prog', 'gen'), { recursive: true });
    const lines = GLUED.map(({ text }, index) =>
      synalinksLine({ index, program: 'prog', module: 'gen', messages: [{ role: 'user', content: `load ${text} please` }, { role: 'assistant', content: `loaded ${index}` }] }),
    );
    writeFileSync(path.join(tree, 'prog', 'gen', 'gen_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
  });

  it('scan names every record that holds one', () => {
    const result = runCli(['scan', tree, '--kinds', 'secrets', '--json']);
    assert.equal(result.status, 1, result.stderr);
    const report = JSON.parse(result.stdout) as { details: { detector: string; call_id: string }[] };
    const found = new Set(report.details.map((f) => `${Number(f.call_id.slice(-12))} ${f.detector}`));
    const missed = GLUED.flatMap(({ kind, text }, index) => (found.has(`${index} ${kind.detector}`) ? [] : [`${kind.detector} in ${text.slice(0, 8)}…${text.slice(-8)}`]));
    assert.deepEqual(missed, []);
  });

  it('export writes none of them', () => {
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', tree, '--format', 'openai', '--out', out, '--validation-fraction', '0', '--json']);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(leaks(out), []);
    assert.equal(readFileSync(path.join(out, 'training.jsonl'), 'utf8').split('\n').filter((l) => l !== '').length, GLUED.length);
  });
});
