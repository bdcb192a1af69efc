/**
 * Issue 28, defect 1: a credential used as a program, module or tool name. Every text an
 * export derives from one (folder names, Ask class names, test names, report fields,
 * examples.jsonl and manifest paths, what it prints) is derived from the scrubbed name, so no
 * key body reaches an output file or stderr, re-cased (`Ask::Tools::SkLive…`) or not.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { safeSegment } from '../src/output/names.js';
import {
  ANTHROPIC_KEY,
  AWS_SECRET,
  GITHUB_PAT,
  GITHUB_TOKEN,
  GOOGLE_KEY,
  JWT,
  OPENAI_KEY,
  PRIVATE_KEY,
  SLACK_TOKEN,
  STRIPE_KEY,
} from './fake-secrets.js';
import { FIXTURES, runCli, tempDir } from './helpers.js';
import { leaksIn as leaksInTexts, leaksInFiles, secretBodies } from './leaks.js';
import { weatherCall } from './planted-names.js';

/** What is planted as a name, by detector. */
const PLANTED: Record<string, string> = {
  openai: OPENAI_KEY,
  anthropic: ANTHROPIC_KEY,
  aws_secret_access_key: `aws_secret_access_key=${AWS_SECRET}`,
  github: GITHUB_TOKEN,
  github_pat: GITHUB_PAT,
  slack: SLACK_TOKEN,
  stripe: STRIPE_KEY,
  google_api_key: GOOGLE_KEY,
  jwt: JWT,
  private_key: PRIVATE_KEY,
};

const BODIES = secretBodies(Object.entries(PLANTED).map(([label, text]) => ({ label, text })));

function recordLine(index: number, program: string, module: string, tool: string | null): string {
  return weatherCall({ index, program, module, tool });
}

/** Secret bodies found in `texts` (any case), as "detector in where". */
function leaksIn(texts: readonly string[], where: string): string[] {
  return leaksInTexts(BODIES, texts, where);
}

/** Secret bodies in the output folder: in file names and folder names, and in every file's bytes. */
async function leaks(dir: string, stderr: string, stdout: string): Promise<string[]> {
  return [...new Set([...leaksIn([stderr], 'stderr'), ...leaksIn([stdout], 'stdout'), ...(await leaksInFiles(BODIES, dir))])];
}

describe('secrets as program, module and tool names', () => {
  let tree = '';
  before(() => {
    tree = path.join(tempDir(), 'tree');
    const lines: string[] = [];
    let index = 0;
    for (const text of Object.values(PLANTED)) {
      // The whole name a secret; a module that holds one after other words; a tool so named.
      lines.push(recordLine(index++, text, `step ${text}`, null));
      lines.push(recordLine(index++, `agent ${text}`, 'weather', text));
      lines.push(recordLine(index++, 'weather_agent', 'weather_agent', text));
    }
    mkdirSync(path.join(tree, 'weather_agent'), { recursive: true });
    writeFileSync(path.join(tree, 'weather_agent', 'weather_agent_20260709-120000.jsonl'), `${lines.join('\n')}\n`);
    // A klieo capture whose agent (its program) and tool are keys: names come from every recorder.
    const capture = JSON.parse(readFileSync(path.join(FIXTURES, 'klieo', 'capture-support.json'), 'utf8')) as {
      run_log: { agent: string; steps: { kind: string; name: string }[] };
      llm_io: { tool_calls?: { name: string }[] }[];
    };
    capture.run_log.agent = `support ${SLACK_TOKEN}`;
    for (const step of capture.run_log.steps) if (step.kind === 'tool_call') step.name = GOOGLE_KEY;
    for (const call of capture.llm_io) for (const tool of call.tool_calls ?? []) tool.name = GOOGLE_KEY;
    mkdirSync(path.join(tree, 'klieo'), { recursive: true });
    writeFileSync(path.join(tree, 'klieo', 'capture.json'), JSON.stringify(capture));
    // A Synalinks tree names its folders after the program and module: a drop's file path holds the key.
    for (const key of [STRIPE_KEY, GITHUB_TOKEN]) {
      const folder = path.join(tree, key, key);
      mkdirSync(folder, { recursive: true });
      const line = recordLine(index++, key, key, null);
      // The same call twice (dropped as a duplicate, with its file) and a damaged line (reported with its file).
      writeFileSync(path.join(folder, `${key}_20260709-120000.jsonl`), `${line}\n${line}\n{"call_id": \n`);
    }
  });

  it('the planted names are what the test looks for', () => {
    assert.ok(BODIES.length >= Object.keys(PLANTED).length);
    // The test would see a leak: the raw tree holds every body.
    assert.equal(new Set(leaksIn([readFileSync(path.join(tree, 'weather_agent', 'weather_agent_20260709-120000.jsonl'), 'utf8')], 'tree').map((l) => l.split(' ')[0])).size, Object.keys(PLANTED).length);
  });

  // hf as JSONL: the card, entries and rows are all text a scan reads (Parquet is compressed).
  for (const format of ['openai', 'nemo', 'nemo-customizer', 'hf']) {
    for (const groupBy of ['none', 'module']) {
      it(`export --format ${format} --group-by ${groupBy}: no key body in any file, path or what it prints`, async () => {
        const out = path.join(tempDir(), `${format}-${groupBy}`);
        const own = format === 'hf' ? ['--file-format', 'jsonl'] : [];
        const result = runCli(['export', tree, '--format', format, ...own, '--out', out, '--trajectories', 'all', '--group-by', groupBy, '--validation-fraction', '0.2', '--json']);
        assert.ok(result.status === 0 || result.status === 1, result.stderr);
        assert.deepEqual(await leaks(out, result.stderr, result.stdout), []);
        const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as { files: { examples: number }[] };
        assert.ok(report.files.reduce((n, f) => n + f.examples, 0) > 0, 'examples were written');
      });
    }
  }

  it('export --dry-run lists its drops as the manifest would hold them: -v, --json and the examples, scrubbed', () => {
    for (const shown of [['-v'], ['--json'], []]) {
      const result = runCli(['export', tree, '--format', 'openai', '--trajectories', 'all', '--dry-run', ...shown]);
      assert.equal(result.status, 0, result.stderr);
      assert.deepEqual([...new Set([...leaksIn([result.stderr], 'stderr'), ...leaksIn([result.stdout], 'stdout')])], [], shown.join(' '));
      // The drops are still listed, with the folders that held a key redacted.
      assert.match(result.stdout, /\[REDACTED:stripe\]\/\[REDACTED:stripe\]\/\[REDACTED:stripe\]_20260709-120000\.jsonl/, shown.join(' '));
    }
    // --scrub none shows them as recorded, as its manifest would.
    const raw = runCli(['export', tree, '--format', 'openai', '--trajectories', 'all', '--dry-run', '-v', '--scrub', 'none']);
    assert.notDeepEqual(leaksIn([raw.stdout], 'stdout'), []);
  });

  it('scan finds the keys used as names, as export redacts them, and its report shows none of them', () => {
    for (const json of [true, false]) {
      const result = runCli(['scan', tree, '--kinds', 'secrets', ...(json ? ['--json'] : [])]);
      assert.equal(result.status, 1, result.stderr);
      assert.deepEqual([...new Set([...leaksIn([result.stderr], 'stderr'), ...leaksIn([result.stdout], 'stdout')])], [], `scan${json ? ' --json' : ''}`);
      if (!json) continue;
      const report = JSON.parse(result.stdout) as { by_detector: Record<string, number>; details: { detector: string; path: string; file: string }[] };
      const where = new Set(report.details.map((d) => `${d.detector} ${d.path}`));
      for (const name of ['program', 'module']) assert.ok(where.has(`stripe ${name}`), `a stripe key as the ${name} name: ${[...where].join(', ')}`);
      assert.ok(report.details.some((d) => d.file.includes('[REDACTED:stripe]')), 'the key folders are named scrubbed');
    }
  });

  it('export --format ask-recording: class names and test names come from the scrubbed names', async () => {
    const out = path.join(tempDir(), 'ask');
    const result = runCli(['export', tree, '--format', 'ask-recording', '--out', out, '--trajectories', 'all', '--json']);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(await leaks(out, result.stderr, result.stdout), []);
    const report = JSON.parse(result.stdout) as { conversations: number; files: { file: string }[] };
    // Three records per kind, the two keys' own folders, and the klieo capture's two calls.
    assert.equal(report.conversations, Object.keys(PLANTED).length * 3 + 2 + 2);
    const recording = readFileSync(path.join(out, report.files.find((f) => f.file.startsWith('weather_agent'))!.file), 'utf8');
    assert.match(recording, /"name": "Ask::Tools::\[REDACTED:stripe\]"/);
  });

  it('--scrub none writes the names as recorded (nothing derived is hidden when nothing is scrubbed)', async () => {
    const out = path.join(tempDir(), 'ask-none');
    const result = runCli(['export', tree, '--format', 'ask-recording', '--out', out, '--trajectories', 'all', '--scrub', 'none', '--json']);
    assert.equal(result.status, 0, result.stderr);
    assert.notDeepEqual(await leaks(out, result.stderr, result.stdout), []);
  });
});

describe('Windows-reserved names as folder names', () => {
  it('con, aux, nul, prn, com1-9 and lpt1-9 (in any case, with any extension) and names ending in a dot gain a hash', () => {
    const reserved = ['con', 'CON', 'aux', 'Nul', 'prn', 'com1', 'COM9', 'lpt1', 'lpt9', 'con.txt', 'aux.tar.gz', 'name.', 'name..'];
    for (const name of reserved) {
      const segment = safeSegment(name);
      assert.notEqual(segment, name, name);
      assert.match(segment, /-[0-9a-f]{8}$/, name);
      assert.doesNotMatch(segment, /[. ]$/, name);
    }
    for (const name of ['console', 'com10', 'lpt', 'auxiliary', 'connect.py', 'nuls']) assert.equal(safeSegment(name), name, name);
  });
});
