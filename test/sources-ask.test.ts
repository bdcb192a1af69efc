import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalValueHash } from '../src/canonical/canonical.js';
import { JsonNumber } from '../src/canonical/json-value.js';
import type { Message, TraceRecord } from '../src/record.js';
import { classOfToolName, toolNameOfClass } from '../src/sources/ask/read.js';
import { headKeys, kindOfKeys } from '../src/sources/detect.js';
import { discover } from '../src/sources/discover.js';
import { readFiles, readSelectedRecords } from '../src/sources/read.js';
import { SynalinksRecord } from '../src/sources/synalinks-record.js';
import { FIXTURES, runCli, tempDir, flat, UNWRAPPED } from './helpers.js';

const ASK = path.join(FIXTURES, 'ask');
const RAW_MARKER = 'RAW-PROVIDER-BODY-MARKER';

async function recordsOf(...roots: string[]): Promise<TraceRecord[]> {
  const discovery = await discover(roots);
  const records: TraceRecord[] = [];
  for await (const batch of readFiles(discovery.files)) records.push(...batch.records);
  return records;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile());
}

const RUBY_V = 'Run `ruby -v` and answer with only the version string.';
const BASH_CALL = {
  id: 'call_00_rcAh7XziBYuMDThLhYT86843',
  type: 'function',
  function: { name: 'bash', arguments: '{"command": "ruby -v"}' },
};

describe('Ask recordings: detection', () => {
  it('finds <test>/recording.yml and recording.json by content, as ask', async () => {
    const { files, skipped } = await discover([ASK]);
    assert.deepEqual(
      files.map((f) => [path.relative(ASK, f.path), f.source]),
      [
        ['first-agent-1/recording.yml', 'ask'],
        ['message-tools/recording.json', 'ask'],
        ['older-format/recording.yml', 'ask'],
      ],
    );
    assert.deepEqual(skipped, []);
  });

  it('tells the shape from the first keys, even when the head ends inside a value', () => {
    assert.equal(kindOfKeys(headKeys(Buffer.from('{\n  "test": "x",\n  "recorded_at": "2026-01-01T00:00:00Z",\n  "interactions": [\n    {"type": "prov'))), 'ask');
    assert.equal(kindOfKeys(headKeys(Buffer.from('{"interactions": [{"messages": ['))), 'ask');
    assert.equal(kindOfKeys(headKeys(Buffer.from('{"test": "only a test key"}'))), null);
    assert.equal(kindOfKeys(headKeys(Buffer.from('test: yaml\n'))), null);
  });

  it('a .yml that is real YAML is skipped with a reason, not fatal', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'some-test'));
    writeFileSync(path.join(dir, 'some-test', 'recording.yml'), 'test: yaml\ninteractions: []\n');
    const { files, skipped } = await discover([dir]);
    assert.deepEqual(files, []);
    assert.equal(skipped.length, 1);
    assert.match(skipped[0].reason, /no known recorder format/);
    const named = runCli(['stats', path.join(dir, 'some-test', 'recording.yml'), '--json']);
    // Skipped, not fatal: said, and, with nothing else to read, no table of zeros but exit 2.
    assert.equal(named.status, 2);
    assert.match(flat(named.stderr), /skipped .*recording\.yml: no known recorder format/);
    assert.match(named.stderr, /no trace file found under .*recording\.yml/);
  });

  it('--source ask reads a file whatever its content looks like', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'odd.json');
    writeFileSync(file, JSON.stringify({ interactions: [] }));
    assert.equal((await discover([file], { source: 'ask' })).files[0].source, 'ask');
    assert.equal((await discover([file])).files[0].source, 'ask');
    assert.equal((await discover([dir], { source: 'klieo' })).files[0].source, 'klieo');
  });
});

describe('Ask recordings: rebuilt conversations', () => {
  it('streamed results: text and thinking concatenated, tool-call deltas joined per index, tool output as JSON', async () => {
    const records = await recordsOf(path.join(ASK, 'first-agent-1'));
    assert.equal(records.length, 2);
    const [first, second] = records;
    const firstCompletion: Message = { role: 'assistant', content: '', reasoning_content: 'The user wants the Ruby version.', tool_calls: [BASH_CALL] };
    assert.deepEqual(first.messages(), [{ role: 'user', content: RUBY_V }, firstCompletion]);
    // The empty user turn after the tool turn is dropped; the tool result answers the call by id.
    assert.deepEqual(second.messages(), [
      { role: 'user', content: RUBY_V },
      firstCompletion,
      {
        role: 'tool',
        content: { stdout: 'ruby 4.0.1\n', stderr: '', exit_code: new JsonNumber('0'), timed_out: false },
        tool_call_id: 'call_00_rcAh7XziBYuMDThLhYT86843',
      },
      { role: 'assistant', content: 'ruby 4.0.1' },
    ]);
    for (const r of records) {
      assert.equal(r.source, 'ask');
      assert.equal(r.program, 'first-agent-1');
      assert.equal(r.module, 'deepseek-v4-flash');
      assert.equal(r.model, 'deepseek-v4-flash');
      assert.equal(r.status, 'ok');
      assert.equal(r.usage, null, 'streams keep no usage: unknown, not zero');
      assert.equal(r.cost, null);
      assert.equal(r.partial, false);
      assert.equal(r.timestamp, Date.parse('2026-08-03T16:57:12Z') / 1000);
    }
    assert.deepEqual(records.map((r) => r.ref.line), [1, 3], 'line = position of the interaction');
  });

  it('hashes the rebuilt inputs and a {model, provider} config with the canonical rule', async () => {
    const [first, second] = await recordsOf(path.join(ASK, 'first-agent-1'));
    assert.equal(first.inputsHash, canonicalValueHash([{ role: 'user', content: RUBY_V }]));
    assert.equal(second.inputsHash, canonicalValueHash(second.messages().slice(0, -1)));
    assert.equal(first.configHash, canonicalValueHash({ model: 'deepseek-v4-flash', provider: null }));
    assert.equal(first.configHash, second.configHash);
  });

  it('message results: parallel tool calls, Anthropic usage and thinking; a new conversation starts fresh', async () => {
    const records = await recordsOf(path.join(ASK, 'message-tools'));
    assert.equal(records.length, 3);
    const system = { role: 'system', content: 'You are a terse weather assistant.' };
    const user = { role: 'user', content: 'Is it warmer in Paris or in Oslo right now?' };
    const calls: Message = {
      role: 'assistant',
      content: '',
      reasoning_content: 'I need both temperatures.',
      tool_calls: [
        { id: 'toolu_01A', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_01B', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
      ],
    };
    assert.deepEqual(records[0].messages(), [system, user, calls]);
    assert.deepEqual(records[1].messages(), [
      system,
      user,
      calls,
      { role: 'tool', content: { city: 'Paris', celsius: new JsonNumber('18.5') }, tool_call_id: 'toolu_01A' },
      { role: 'tool', content: { city: 'Oslo', celsius: new JsonNumber('7') }, tool_call_id: 'toolu_01B' },
      { role: 'assistant', content: 'Paris (18.5 °C) is warmer than Oslo (7 °C).' },
    ]);
    assert.deepEqual(records[2].messages(), [
      { role: 'user', content: 'Say hi.' },
      { role: 'assistant', content: 'Hi!' },
    ]);
    // Anthropic counts cache reads apart from input_tokens: the prompt total includes them.
    assert.deepEqual(records[0].usage, {
      prompt_tokens: 812,
      completion_tokens: 88,
      total_tokens: 900,
      cached_tokens: 400,
      cache_creation_tokens: 0,
      reasoning_tokens: 0,
    });
    assert.deepEqual(records[2].usage, {
      prompt_tokens: 9,
      completion_tokens: 2,
      total_tokens: 11,
      cached_tokens: 0,
      cache_creation_tokens: 0,
      reasoning_tokens: 0,
    });
    assert.equal(records[2].module, 'gpt-4o-mini-2024-07-18');
    assert.ok(records.every((r) => !r.partial));
  });

  it('older files without type: every item is a provider call, tool output only from the history', async () => {
    const records = await recordsOf(path.join(ASK, 'older-format'));
    const call = { id: 'call_ls', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } };
    assert.deepEqual(records[1].messages(), [
      { role: 'user', content: 'List the files.' },
      { role: 'assistant', content: '', tool_calls: [call] },
      { role: 'tool', content: '{stdout: "a.txt\\nb.txt\\n", exit_code: 0}', tool_call_id: 'call_ls' },
      { role: 'assistant', content: 'a.txt and b.txt' },
    ]);
    assert.equal(records[1].usage?.cached_tokens, 64);
  });

  it('never copies the provider raw body into a record', async () => {
    for (const r of await recordsOf(ASK)) {
      assert.ok(!r.raw.includes(RAW_MARKER));
      assert.ok(!JSON.stringify(r.messages()).includes(RAW_MARKER));
    }
  });

  it('raw is a Synalinks-shaped line that reads back with the same hashes and messages', async () => {
    for (const r of await recordsOf(ASK)) {
      const back = new SynalinksRecord(r.raw, r.ref);
      assert.equal(back.inputsHash, r.inputsHash);
      assert.equal(back.configHash, r.configHash);
      assert.deepEqual(back.messages(), r.messages());
      assert.equal(back.status, r.status);
      assert.equal(back.model, r.model);
      const recomputed = back.recomputeHashes(new (await import('../src/canonical/byte-sink.js')).ByteSink());
      assert.equal(recomputed.inputsHash, r.inputsHash);
      assert.equal(recomputed.configHash, r.configHash);
    }
  });

  it('reads the same records twice (pass 2 selects by ref.line)', async () => {
    const discovery = await discover([ASK]);
    const fileIndex = discovery.files.findIndex((f) => f.path.includes('message-tools'));
    const picked: TraceRecord[] = [];
    for await (const { records } of readSelectedRecords(discovery.files, new Map([[fileIndex, Int32Array.from([4, 5])]]))) picked.push(...records);
    const all = (await recordsOf(path.join(ASK, 'message-tools'))).filter((r) => r.ref.line !== 1);
    assert.deepEqual(
      picked.map((r) => [r.ref.line, r.callId, r.inputsHash]),
      all.map((r) => [r.ref.line, r.callId, r.inputsHash]),
    );
  });

  /** The message-tools recording spoiled by `spoil`, read: it must keep the interactions before the break and report the rest. */
  async function keepsWhatCameBefore(spoil: (text: string) => string): Promise<void> {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'spoiled'));
    const text = readFileSync(path.join(ASK, 'message-tools', 'recording.json'), 'utf8');
    writeFileSync(path.join(dir, 'spoiled', 'recording.yml'), spoil(text));
    const discovery = await discover([dir]);
    const records: TraceRecord[] = [];
    const damaged = [];
    for await (const batch of readFiles(discovery.files)) {
      records.push(...batch.records);
      damaged.push(...batch.damaged);
    }
    assert.deepEqual(records.map((r) => r.ref.line), [1, 4]);
    assert.equal(damaged.length, 1);
    assert.match(damaged[0].reason, /broken JSON after interaction 4/);
  }

  it('a truncated recording keeps the interactions before the break and reports the rest', async () => {
    await keepsWhatCameBefore((text) => text.slice(0, text.indexOf('"Say hi."')));
  });

  it('a recording broken mid-way keeps the interactions before the break, as a truncated one does', async () => {
    await keepsWhatCameBefore((text) => text.replace('"Say hi."', '"Say hi." junk'));
  });

  it('takes the test name and time even when they come after the interactions', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'late'));
    mkdirSync(path.join(dir, 'later'));
    const original = JSON.parse(readFileSync(path.join(ASK, 'first-agent-1', 'recording.yml'), 'utf8'));
    writeFileSync(
      path.join(dir, 'late', 'recording.json'),
      JSON.stringify({ interactions: original.interactions, recorded_at: original.recorded_at, test: original.test }, null, 2),
    );
    writeFileSync(
      path.join(dir, 'later', 'recording.json'),
      JSON.stringify({ test: original.test, interactions: original.interactions, recorded_at: original.recorded_at }, null, 2),
    );
    const both = await recordsOf(dir);
    assert.equal(both.length, 4);
    const late = both.slice(0, 2);
    assert.deepEqual(
      both.slice(2).map((r) => [r.program, r.callId, r.inputsHash, r.timestamp]),
      late.map((r) => [r.program, r.callId, r.inputsHash, r.timestamp]),
    );
    const usual = await recordsOf(path.join(ASK, 'first-agent-1'));
    assert.deepEqual(
      late.map((r) => [r.program, r.callId, r.inputsHash, r.timestamp]),
      usual.map((r) => [r.program, r.callId, r.inputsHash, r.timestamp]),
    );
  });

  it('maps Ruby tool classes to tool names and back', () => {
    assert.equal(toolNameOfClass('Ask::Tools::Bash'), 'bash');
    assert.equal(toolNameOfClass('Ask::Tools::WebSearch'), 'web_search');
    assert.equal(toolNameOfClass('HTTPClient'), 'http_client');
    assert.equal(classOfToolName('bash'), 'Ask::Tools::Bash');
    assert.equal(classOfToolName('search_documents'), 'Ask::Tools::SearchDocuments');
    assert.equal(toolNameOfClass(classOfToolName('search_documents')), 'search_documents');
  });
});

describe('Ask recordings: outputs', () => {
  it('the raw provider body appears in no output of dedupe, export or ask-recording', () => {
    const out = tempDir();
    const results = [
      runCli(['dedupe', ASK, '--out', path.join(out, 'dedupe')]),
      runCli(['export', ASK, '--format', 'openai', '--out', path.join(out, 'openai'), '--validation-fraction', '0']),
      runCli(['export', ASK, '--format', 'nemo', '--out', path.join(out, 'nemo')]),
      runCli(['export', ASK, '--format', 'ask-recording', '--out', path.join(out, 'ask')]),
      runCli(['stats', ASK, '--json']),
      runCli(['runs', ASK, '--json']),
    ];
    for (const r of results) {
      assert.equal(r.status, 0, r.stderr);
      assert.ok(!r.stdout.includes(RAW_MARKER));
    }
    for (const file of filesUnder(out)) assert.ok(!readFileSync(file).includes(RAW_MARKER), file);
  });

  it('dedupe writes Synalinks-shaped lines under <program>/<module>/ that verify cleanly', () => {
    const out = path.join(tempDir(), 'out');
    assert.equal(runCli(['dedupe', ASK, '--out', out]).status, 0);
    const written = filesUnder(out)
      .map((f) => path.relative(out, f))
      .filter((f) => !f.startsWith('_traces'))
      .sort();
    assert.deepEqual(written, [
      'first-agent-1/deepseek-v4-flash/deepseek-v4-flash_20260803-165712.jsonl',
      'older-format/gpt-4o-2024-08-06/gpt-4o-2024-08-06_20251120-080000.jsonl',
      'weather-compare/claude-sonnet-4-6/claude-sonnet-4-6_20260804-091500.jsonl',
      'weather-compare/gpt-4o-mini-2024-07-18/gpt-4o-mini-2024-07-18_20260804-091500.jsonl',
    ]);
    const verify = runCli(['verify', out, '--json']);
    assert.equal(verify.status, 0);
    assert.deepEqual(JSON.parse(verify.stdout).mismatches, []);
    assert.equal(JSON.parse(verify.stdout).checked, 7);
    const line = JSON.parse(readFileSync(path.join(out, written[0]), 'utf8').split('\n')[0]);
    assert.equal(line.source, 'ask');
    assert.equal(line.program, 'first-agent-1');
  });

  it('export --format ask-recording writes recordings traces reads back into the same conversations', async () => {
    const out = path.join(tempDir(), 'rec');
    const result = runCli(['export', ASK, '--format', 'ask-recording', '--out', out, '--json']);
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(result.stdout);
    assert.equal(report.format, 'ask-recording');
    assert.deepEqual(
      report.files.map((f: { file: string }) => f.file).sort(),
      [
        'first-agent-1__deepseek-v4-flash/recording.yml',
        'older-format__gpt-4o-2024-08-06/recording.yml',
        'weather-compare__claude-sonnet-4-6/recording.yml',
        'weather-compare__gpt-4o-mini-2024-07-18/recording.yml',
      ],
    );
    const recording = JSON.parse(readFileSync(path.join(out, 'first-agent-1__deepseek-v4-flash', 'recording.yml'), 'utf8'));
    assert.deepEqual(Object.keys(recording), ['test', 'recorded_at', 'interactions']);
    assert.deepEqual(
      recording.interactions.map((i: { type: string }) => i.type),
      ['provider', 'tool', 'provider'],
    );
    assert.equal(recording.interactions[1].name, 'Ask::Tools::Bash');
    assert.equal(recording.interactions[1].args, '{"command": "ruby -v"}');
    // Read back: the last conversation of each recording is the curated one, turn for turn.
    const original = new Map((await recordsOf(ASK)).map((r) => [`${r.program}/${r.module}`, r.messages()]));
    const back = await recordsOf(out);
    const lastOf = new Map<string, Message[]>();
    for (const r of back) lastOf.set(r.program, r.messages());
    assert.deepEqual(lastOf.get('first-agent-1__deepseek-v4-flash'), original.get('first-agent-1/deepseek-v4-flash'));
    assert.deepEqual(lastOf.get('weather-compare__claude-sonnet-4-6'), original.get('weather-compare/claude-sonnet-4-6'));
    assert.deepEqual(lastOf.get('older-format__gpt-4o-2024-08-06'), original.get('older-format/gpt-4o-2024-08-06'));
  });

  it('a copied recordings folder exports to nemo and openai files that validate', () => {
    const dir = tempDir();
    cpSync(ASK, path.join(dir, 'recordings'), { recursive: true });
    for (const format of ['nemo', 'openai']) {
      const out = path.join(dir, `out-${format}`);
      const result = runCli(['export', path.join(dir, 'recordings'), '--format', format, '--out', out, '--validation-fraction', '0'], UNWRAPPED);
      assert.equal(result.status, 0, result.stderr);
      const validate = runCli(['validate', path.join(out, 'training.jsonl'), '--format', format, '--json']);
      const errors = (JSON.parse(validate.stdout).errors as { code: string }[]).map((e) => e.code);
      // Four recordings: OpenAI refuses a training file under 10 examples, and the export said so last.
      if (format === 'openai') {
        assert.deepEqual(errors, ['too_few_examples']);
        assert.match(result.stderr.trimEnd().split('\n').at(-1)!, /^openai will refuse .*training\.jsonl as it is: 4 training examples/);
      } else {
        assert.equal(validate.status, 0, validate.stdout);
        assert.deepEqual(errors, []);
      }
    }
  });
});
