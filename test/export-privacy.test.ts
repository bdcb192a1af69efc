/** Issue: no secret or personal data leaves in an export; scan reports without leaking. */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { canonicalValueHash } from '../src/canonical/canonical.js';
import {
  ANTHROPIC_KEY,
  AWS_KEY_ID,
  AWS_SECRET,
  BEARER_TOKEN,
  GITHUB_PAT,
  GITHUB_TOKEN,
  GOOGLE_KEY,
  JWT,
  OPENAI_KEY,
  PEM_BODY,
  PRIVATE_KEY,
  RANDOM_SECRET,
  SLACK_TOKEN,
  STRIPE_KEY,
  DB_PASSWORD,
} from './fake-secrets.js';
import { SAMPLES, TEST_CONFIG, runCli, runCliJson, seededRandom, synalinksLine, tempDir } from './helpers.js';
import { scrubbedCallId } from '../src/privacy/scrub.js';
import { redactValue } from '../src/privacy/index.js';

/** Each planted value, the text that carries it, and the detector that must catch it. */
const PLANTED: { detector: string; value: string; text: string }[] = [
  { detector: 'openai', value: OPENAI_KEY, text: `export OPENAI_API_KEY=${OPENAI_KEY}` },
  { detector: 'anthropic', value: ANTHROPIC_KEY, text: `client = Anthropic(api_key="${ANTHROPIC_KEY}")` },
  { detector: 'aws_access_key_id', value: AWS_KEY_ID, text: `aws_access_key_id = ${AWS_KEY_ID}` },
  { detector: 'aws_secret_access_key', value: AWS_SECRET, text: `aws_secret_access_key = ${AWS_SECRET}` },
  { detector: 'github', value: GITHUB_TOKEN, text: `git clone https://github.com/x/y (token ${GITHUB_TOKEN})` },
  { detector: 'github', value: GITHUB_PAT, text: `GH_TOKEN=${GITHUB_PAT}` },
  { detector: 'google_api_key', value: GOOGLE_KEY, text: `maps key ${GOOGLE_KEY}` },
  { detector: 'slack', value: SLACK_TOKEN, text: `slack bot ${SLACK_TOKEN}` },
  { detector: 'stripe', value: STRIPE_KEY, text: `stripe.api_key = "${STRIPE_KEY}"` },
  { detector: 'jwt', value: JWT, text: `session=${JWT}` },
  { detector: 'bearer', value: BEARER_TOKEN, text: `Authorization: Bearer ${BEARER_TOKEN}` },
  { detector: 'private_key', value: PEM_BODY.split('\n')[0], text: PRIVATE_KEY },
  { detector: 'url_password', value: DB_PASSWORD, text: `postgres://admin:${DB_PASSWORD}@db.internal:5432/app` },
  { detector: 'generic_secret', value: RANDOM_SECRET, text: `client_secret=${RANDOM_SECRET}` },
  { detector: 'email', value: 'alice.martin@example.org', text: 'write to alice.martin@example.org today' },
  { detector: 'phone', value: '+44 20 7946 0958', text: 'UK office: +44 20 7946 0958.' },
  { detector: 'ipv4', value: '203.0.113.42', text: 'client 203.0.113.42 connected' },
  { detector: 'ipv6', value: '2001:db8::8a2e:370:7334', text: 'from 2001:db8::8a2e:370:7334 via' },
  { detector: 'credit_card', value: '4111 1111 1111 1111', text: 'card 4111 1111 1111 1111 exp 12/29' },
  { detector: 'iban', value: 'GB82WEST12345698765432', text: 'to GB82WEST12345698765432.' },
  { detector: 'home_path', value: 'carolsmith', text: 'open /home/carolsmith/projects/app.py' },
];

/** One record carrying `text` where the export carries text: user, reasoning, tool arguments, tool results. */
function leakyRecords(): string[] {
  return PLANTED.map(({ text }, i) => {
    const callId = `c${i}`;
    const messages = [
      { role: 'system', content: 'You help with operations.' },
      { role: 'user', content: `Question ${i}: ${text}` },
      { role: 'assistant', content: '', tool_calls: [{ id: callId, type: 'function', function: { name: 'lookup', arguments: { query: text } } }] },
      { role: 'tool', tool_call_id: callId, content: { result: text, log: 'ok' } },
      { role: 'assistant', content: `Done: ${text}`, reasoning_content: `thinking about ${text}` },
    ];
    const inputs = messages.slice(0, -1);
    return JSON.stringify({
      synalinks_version: '0.9.014',
      call_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      parent_call_id: null,
      program: 'ops_agent',
      module: 'ops_agent',
      timestamp: 1783412130 + i,
      duration: 1.5,
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, cached_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0 },
      cost: 0.001,
      messages,
      inputs_hash: canonicalValueHash(inputs),
      outputs: messages.at(-1),
      config: TEST_CONFIG,
      config_hash: canonicalValueHash(TEST_CONFIG),
    });
  });
}

function allWrittenText(dir: string): string {
  let text = '';
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    text += statSync(full).isDirectory() ? allWrittenText(full) : readFileSync(full, 'utf8');
  }
  return text;
}

describe('privacy', () => {
  let tree = '';
  before(() => {
    tree = path.join(tempDir(), 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    mkdirSync(path.join(tree, 'ops_agent'));
    writeFileSync(path.join(tree, 'ops_agent', 'ops_agent_20260709-120000.jsonl'), `${leakyRecords().join('\n')}\n`);
  });

  it('scan finds the one key planted in the bundled samples (AWS\'s documented example key), and export redacts it', () => {
    const result = runCli(['scan', SAMPLES]);
    assert.equal(result.status, 1, result.stdout);
    assert.match(result.stdout, /^aws_access_key_id \(secret\): 1$/m);
    assert.match(result.stdout, /24 records scanned, 1 finding/);
    const out = path.join(tempDir(), 'ds');
    const exported = runCli(['export', SAMPLES, '--format', 'nemo', '--out', out]);
    assert.equal(exported.status, 0, exported.stderr);
    assert.match(exported.stderr, /^redacted 1 value by kind: aws_access_key_id 1;/m);
    const written = readFileSync(path.join(out, 'training.jsonl'), 'utf8') + readFileSync(path.join(out, 'validation.jsonl'), 'utf8');
    assert.ok(written.includes('[REDACTED:aws_access_key_id]') && !written.includes('AKIA'));
  });

  it('scan names every planted kind, where it is, and never prints the value', () => {
    const result = runCli(['scan', tree, '--json']);
    assert.equal(result.status, 1);
    const report = JSON.parse(result.stdout) as { details: { detector: string; path: string; preview: string; call_id: string }[] };
    for (const { detector } of PLANTED) assert.ok(report.details.some((f) => f.detector === detector), `${detector} found`);
    assert.ok(report.details.some((f) => f.path === 'messages[2].tool_calls[0].function.arguments.query'));
    assert.ok(report.details.some((f) => f.path === 'messages[3].content.result'));
    assert.ok(report.details.some((f) => f.path === 'messages[4].reasoning_content'));
    for (const { value } of PLANTED) assert.ok(!result.stdout.includes(value), 'the report leaks nothing');
  });

  it('scan --json lists every finding, in file order, as the human report counts them (in workers too)', () => {
    const json = runCli(['scan', tree, '--json'], { env: { ...process.env, TRACES_WORKERS: '2', TRACES_SHARE_BYTES: '2048' } });
    const report = JSON.parse(json.stdout) as { findings: number; by_detector: Record<string, number>; details: { detector: string; file: string; line: number }[] };
    assert.equal(report.details.length, report.findings);
    const counted: Record<string, number> = {};
    for (const f of report.details) counted[f.detector] = (counted[f.detector] ?? 0) + 1;
    assert.deepEqual(counted, report.by_detector);
    const order = report.details.map((f) => `${f.file}\u0000${String(f.line).padStart(9, '0')}`);
    assert.deepEqual(order, [...order].sort());
    const human = runCli(['scan', tree]).stdout;
    for (const [detector, n] of Object.entries(report.by_detector)) assert.match(human, new RegExp(`^${detector} \\((secret|pii)\\): ${n}$`, 'm'));
    assert.match(human, new RegExp(`records scanned, ${report.findings} findings`));
  });

  for (const format of ['openai', 'nemo', 'nemo-customizer', 'hf']) {
    it(`export --format ${format} --scrub secrets,pii leaves none of the planted values, and stays valid`, () => {
      const out = path.join(tempDir(), format);
      // hf as JSONL: every byte of its rows, card and entries is text the check reads.
      const args = ['export', tree, '--format', format, '--out', out, '--scrub', 'secrets,pii', '--json', '--validation-fraction', '0', ...(format === 'hf' ? ['--file-format', 'jsonl'] : [])];
      if (format === 'nemo-customizer') args.push('--trajectories', 'all');
      const result = runCli(args);
      assert.equal(result.status, 0, result.stderr);
      const written = allWrittenText(out);
      for (const { detector, value } of PLANTED) assert.ok(!written.includes(value), `${detector} value left in ${format} output`);
      const report = JSON.parse(result.stdout);
      if (format !== 'nemo-customizer') {
        for (const { detector } of PLANTED) assert.ok(report.scrub.redactions[detector] > 0, `${detector} counted`);
        assert.ok(written.includes('[REDACTED:openai]'));
      }
      const check = runCli(['validate', format === 'hf' ? out : path.join(out, 'training.jsonl'), '--format', format]);
      assert.equal(check.status, 0, check.stdout);
    });
  }

  it('redacts secrets by default but not personal data; --scrub none keeps everything (the test can fail)', () => {
    const byDefault = path.join(tempDir(), 'default');
    assert.equal(runCli(['export', tree, '--format', 'nemo', '--out', byDefault]).status, 0);
    const text = allWrittenText(byDefault);
    assert.ok(!text.includes(OPENAI_KEY));
    assert.ok(text.includes('alice.martin@example.org'), 'pii needs --scrub secrets,pii');
    const none = path.join(tempDir(), 'none');
    assert.equal(runCli(['export', tree, '--format', 'nemo', '--out', none, '--scrub', 'none']).status, 0);
    assert.ok(allWrittenText(none).includes(OPENAI_KEY));
  });

  it('--drop-on secrets drops whole examples instead', () => {
    const out = path.join(tempDir(), 'drop');
    const report = runCliJson<{ dropped: Record<string, number> }>(['export', tree, '--format', 'nemo', '--out', out, '--drop-on', 'secrets']);
    const secretPlants = PLANTED.filter((p) => !['email', 'phone', 'ipv4', 'ipv6', 'credit_card', 'iban', 'home_path'].includes(p.detector));
    // And the samples' own planted key (AWS's documented example) in the copied tree.
    assert.equal(report.dropped.secret, secretPlants.length + 1);
    assert.ok(!allWrittenText(out).includes(GITHUB_TOKEN));
  });

  it('--scrub-rules adds named patterns; a bad rules file is a clear error', () => {
    const rules = path.join(tempDir(), 'rules.json');
    writeFileSync(rules, JSON.stringify([{ name: 'employee_id', pattern: 'EMP-\\d{6}' }]));
    const withRule = tree + '-rule';
    cpSync(tree, withRule, { recursive: true });
    const file = path.join(withRule, 'language_model', 'language_model_20260708-090512.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace('Is 1001 a prime number?', 'Is 1001 a prime number? (asked by EMP-123456)'));
    const out = path.join(tempDir(), 'rules');
    const report = runCliJson<{ scrub: { redactions: Record<string, number> } }>(['export', withRule, '--format', 'nemo', '--out', out, '--scrub-rules', rules]);
    assert.equal(report.scrub.redactions.employee_id, 1);
    assert.ok(!allWrittenText(out).includes('EMP-123456'));
    writeFileSync(rules, JSON.stringify([{ name: 'broken', pattern: 'EMP-(\\d+' }]));
    const bad = runCli(['export', tree, '--format', 'nemo', '--out', path.join(tempDir(), 'bad'), '--scrub-rules', rules]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--scrub-rules .*rules\.json.*broken/);
  });

  it('--group-by module folders built from record fields never leave the output folder', () => {
    const evil = path.join(tempDir(), 'evil');
    mkdirSync(path.join(evil, 'p'), { recursive: true });
    const line = JSON.parse(leakyRecords()[0]);
    const names: [string, string][] = [
      ['../../escape', '..'],
      ['/etc', 'C:\\Windows\\x'],
      ['.', 'a/b'],
    ];
    const lines = names.map(([program, module], i) => JSON.stringify({ ...line, call_id: `e${i}`, program, module, timestamp: line.timestamp + i, inputs_hash: `${i}`.repeat(64).slice(0, 64) }));
    writeFileSync(path.join(evil, 'p', 'p_20260709-120000.jsonl'), `${lines.join('\n')}\n`);
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', evil, '--format', 'nemo', '--out', out, '--group-by', 'module', '--scrub', 'none']);
    assert.equal(result.status, 0, result.stderr);
    const written: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const full = path.join(dir, entry);
        if (statSync(full).isDirectory()) walk(full);
        else written.push(path.relative(out, full));
      }
    };
    walk(out);
    const datasets = written.filter((f) => f.endsWith('training.jsonl'));
    assert.equal(datasets.length, 3);
    for (const file of written) assert.ok(!file.startsWith('..') && !path.isAbsolute(file), file);
    assert.deepEqual(readdirSync(path.dirname(out)).sort(), ['out']);
  });

  it('names that make the same safe folder name, or differ only in case, still get a folder of their own, for datasets and Ask recordings', () => {
    const tree = path.join(tempDir(), 'names');
    mkdirSync(path.join(tree, 'p'), { recursive: true });
    const line = JSON.parse(leakyRecords()[0]);
    const long = 'x'.repeat(130);
    const names: [string, string][] = [
      ['翻訳', '翻訳'],
      ['要約', '要約'],
      ['a/b', 'm'],
      ['a_b', 'm'],
      [`${long}1`, 'm'],
      [`${long}2`, 'm'],
      // One folder where case does not count (macOS, Windows).
      ['p', 'Gen'],
      ['p', 'gen'],
    ];
    const lines = names.map(([program, module], i) => JSON.stringify({ ...line, call_id: `n${i}`, program, module, timestamp: line.timestamp + i, inputs_hash: `${i}`.repeat(64) }));
    writeFileSync(path.join(tree, 'p', 'p_20260709-120000.jsonl'), `${lines.join('\n')}\n`);
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', tree, '--format', 'nemo', '--out', out, '--group-by', 'module', '--scrub', 'none', '--validation-fraction', '0']);
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as { files: { dataset: string }[] };
    const folders = report.files.map((f) => f.dataset);
    assert.equal(new Set(folders.map((f) => f.toLowerCase())).size, names.length, folders.join(' '));
    assert.ok(folders.includes(path.join('a_b', 'm')), 'a name already safe keeps its folder name');
    for (const folder of folders) assert.equal(readFileSync(path.join(out, folder, 'training.jsonl'), 'utf8').trim().split('\n').length, 1, folder);
    const ask = path.join(tempDir(), 'ask');
    assert.equal(runCli(['export', tree, '--format', 'ask-recording', '--out', ask]).status, 0);
    assert.equal(new Set(readdirSync(ask).filter((f) => f !== '_traces' && f !== 'report.json').map((f) => f.toLowerCase())).size, names.length);
  });

  /** A tree of records each calling one tool, by name, as their completion. */
  function toolCallTree(tools: string[]): string {
    const records = tools.map((tool, i) => {
      const messages = [
        { role: 'system', content: 'You help with operations.' },
        { role: 'user', content: `Question ${i}: which host serves the API?` },
        { role: 'assistant', content: '', tool_calls: [{ id: `t${i}`, type: 'function', function: { name: tool, arguments: { query: `host ${i}` } } }] },
      ];
      return JSON.stringify({
        ...JSON.parse(leakyRecords()[0]),
        call_id: `00000000-0000-4000-8000-${String(100 + i).padStart(12, '0')}`,
        timestamp: 1783412200 + i,
        messages,
        inputs_hash: canonicalValueHash(messages.slice(0, -1)),
        outputs: messages.at(-1),
      });
    });
    const root = path.join(tempDir(), 'named');
    mkdirSync(path.join(root, 'ops'), { recursive: true });
    writeFileSync(path.join(root, 'ops', 'ops_20260709-120000.jsonl'), `${records.join('\n')}\n`);
    return root;
  }

  it('a secret used as a tool name: its examples are dropped, no definition carries it, the rest is written', () => {
    // A GitHub token is a valid tool name (letters, digits, _), but its redaction is not.
    const named = toolCallTree(['lookup', GITHUB_TOKEN, 'search', 'lookup']);
    for (const format of ['openai', 'nemo', 'nemo-customizer']) {
      const out = path.join(tempDir(), `named-${format}`);
      const report = runCliJson<{ dropped: Record<string, number>; examples: { training: number; validation: number } }>(['export', named, '--format', format, '--out', out]);
      assert.equal(report.dropped.redacted_tool_name, 1, format);
      assert.equal(report.examples.training + report.examples.validation, 3, format);
      const text = allWrittenText(out);
      assert.ok(!text.includes(GITHUB_TOKEN), `${format}: the token left in a written file`);
      // NeMo Customizer lines carry every tool's definition: the others are still there.
      if (format === 'nemo-customizer') assert.match(readFileSync(path.join(out, 'training.jsonl'), 'utf8'), /"name":"search"/);
      const drop = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').split('\n').find((l) => l.includes('redacted_tool_name'));
      assert.match(drop ?? '', /holds what --scrub redacts \(github\)/);
    }
    // Asked for, the name is kept as recorded.
    const kept = path.join(tempDir(), 'named-none');
    assert.equal(runCli(['export', named, '--format', 'openai', '--out', kept, '--scrub', 'none']).status, 0);
    assert.ok(allWrittenText(kept).includes(GITHUB_TOKEN));
  });

  it("a drop's detail that quotes a secret (an invalid tool name) is scrubbed as the examples are", () => {
    // Not a valid tool name (the dot): dropped as not_representable, with the name quoted in the detail.
    const named = toolCallTree(['lookup', `${OPENAI_KEY}.run`, 'search']);
    const out = path.join(tempDir(), 'quoted');
    const report = runCliJson<{ dropped: Record<string, number> }>(['export', named, '--format', 'openai', '--out', out]);
    assert.equal(report.dropped.not_representable, 1);
    const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8');
    assert.match(manifest, /tool name .*\[REDACTED:openai\]/);
    assert.ok(!allWrittenText(out).includes(OPENAI_KEY));
    const none = path.join(tempDir(), 'quoted-none');
    runCliJson(['export', named, '--format', 'openai', '--out', none, '--scrub', 'none']);
    assert.ok(readFileSync(path.join(none, '_traces', 'manifest.jsonl'), 'utf8').includes(OPENAI_KEY), 'asked for, the detail is kept');
  });
});

describe('call_ids are recorded text, scrubbed as the records are', () => {
  const SECRET_IDS = PLANTED.filter((p) => ['openai', 'github', 'stripe', 'slack', 'aws_access_key_id'].includes(p.detector));

  it('no key in a call_id reaches the manifest, examples.jsonl or the report, and the files still join by call_id', () => {
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'agent', 'gen'), { recursive: true });
    const lines: string[] = [];
    SECRET_IDS.forEach(({ value }, i) => {
      const messages = [
        { role: 'user', content: `question ${i}` },
        { role: 'assistant', content: `answer ${i}` },
      ];
      // The second record repeats the first one's prompt: a duplicate whose manifest line names the kept call_id.
      lines.push(synalinksLine({ index: 2 * i, callId: `run:${value}:kept`, program: 'agent', module: 'gen', messages }));
      lines.push(synalinksLine({ index: 2 * i + 1, callId: `run:${value}:again`, program: 'agent', module: 'gen', messages }));
    });
    writeFileSync(path.join(tree, 'agent', 'gen', 'gen_20260709-120000.jsonl'), `${lines.join('\n')}\n`);
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', tree, '--format', 'openai', '--out', out, '--validation-fraction', '0', '--json']);
    assert.equal(result.status, 0, result.stderr);
    const written = allWrittenText(out) + result.stdout + result.stderr;
    for (const { detector, value } of SECRET_IDS) assert.ok(!written.includes(value), `${detector} key of a call_id left in the output`);
    const rows = readFileSync(path.join(out, '_traces', 'examples.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { call_id: string; merged: string[] });
    const drops = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { call_id: string; kept: string; reason: string });
    assert.equal(rows.length, SECRET_IDS.length);
    assert.equal(drops.filter((d) => d.reason === 'duplicate').length, SECRET_IDS.length);
    for (const row of rows) assert.match(row.call_id, /^run:\[REDACTED:[a-z_]+\]:kept$/);
    // The manifest's kept call_id is the one examples.jsonl lists, with the duplicate merged into it.
    for (const d of drops) {
      const row = rows.find((r) => r.call_id === d.kept);
      assert.ok(row !== undefined, `kept ${d.kept} is an example's call_id`);
      assert.deepEqual(row.merged, [d.call_id]);
    }
    const none = path.join(tempDir(), 'none');
    assert.equal(runCli(['export', tree, '--format', 'openai', '--out', none, '--scrub', 'none']).status, 0);
    assert.ok(allWrittenText(none).includes(SECRET_IDS[0].value), '--scrub none keeps the ids as recorded');
  });

  it('an id is scrubbed once: an identical example\'s manifest line names the kept id as examples.jsonl does, even with a rule that matches the redaction marker', () => {
    const tree = path.join(tempDir(), 'tree');
    const messages = [
      { role: 'user', content: 'the same question' },
      { role: 'assistant', content: 'the same answer' },
    ];
    // Two programs: two keys, one example written twice (duplicate_example).
    for (const [index, program] of ['first', 'second'].entries()) {
      mkdirSync(path.join(tree, program, 'gen'), { recursive: true });
      const line = synalinksLine({ index, callId: `run:${OPENAI_KEY}:${program}`, program, module: 'gen', messages });
      writeFileSync(path.join(tree, program, 'gen', 'gen_20260709-120000.jsonl'), `${line}\n`);
    }
    const rules = path.join(tempDir(), 'rules.json');
    writeFileSync(rules, JSON.stringify([{ name: 'marker', pattern: 'REDACTED' }]));
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', tree, '--format', 'openai', '--out', out, '--validation-fraction', '0', '--scrub-rules', rules]);
    assert.equal(result.status, 0, result.stderr);
    const rows = readFileSync(path.join(out, '_traces', 'examples.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { call_id: string; merged: string[] });
    const drops = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { call_id: string; kept: string; reason: string });
    const repeat = drops.find((d) => d.reason === 'duplicate_example');
    assert.ok(repeat !== undefined && rows.length === 1);
    assert.ok(!allWrittenText(out).includes(OPENAI_KEY));
    assert.equal(repeat.kept, rows[0].call_id);
    assert.deepEqual(rows[0].merged, [repeat.call_id]);
  });

  it('no built-in secret detector matches a uuid, so uuids are written as recorded', () => {
    const options = { kinds: new Set(['secret' as const]) };
    const random = seededRandom(29);
    const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
    const uuids = Array.from({ length: 2000 }, () => `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`);
    uuids.push('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '12345678-1234-1234-1234-123456789012', 'deadbeef-cafe-babe-face-feedfacecafe');
    for (const uuid of uuids) {
      assert.equal(scrubbedCallId(uuid, { options, dropOnSecrets: false }), uuid);
      assert.deepEqual(redactValue(uuid, options).counts, {}, `${uuid} matched a secret detector`);
    }
    // With personal data on, an id is scrubbed whatever its shape: a phone detector may read digits and dashes.
    const pii = { options: { kinds: new Set(['secret' as const, 'pii' as const]) }, dropOnSecrets: false };
    assert.equal(scrubbedCallId(uuids[0], pii), redactValue(uuids[0], pii.options).value);
    assert.equal(scrubbedCallId(`id:${OPENAI_KEY}`, { options, dropOnSecrets: false }), 'id:[REDACTED:openai]');
  });
});
