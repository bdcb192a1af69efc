import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalValueHash } from '../src/canonical/canonical.js';
import { FIXTURES, SAMPLES, runCli, runCliJson, synalinksLine, tempDir, flat } from './helpers.js';

const expected = JSON.parse(readFileSync(path.join(FIXTURES, 'samples-expected.json'), 'utf8'));

interface Summary {
  records_read: number;
  damaged_lines: number;
  kept: number;
  dropped: Record<string, number>;
}

interface ManifestLine {
  call_id?: string;
  file: string;
  line: number;
  reason: string;
  kept?: string;
  detail?: string;
}

/** Every line of every .jsonl file under `dir` (outside `_traces`), keyed by relative path. */
function treeLines(dir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== '_traces') walk(full);
      } else if (entry.name.endsWith('.jsonl')) {
        out.set(path.relative(dir, full), readFileSync(full, 'utf8').split('\n').filter((l) => l !== ''));
      }
    }
  };
  walk(dir);
  return out;
}

function manifest(dir: string): ManifestLine[] {
  return readFileSync(path.join(dir, '_traces', 'manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

function run(args: string[]): { out: string; summary: Summary } {
  const out = path.join(tempDir(), 'out');
  const summary = runCliJson<Summary>([...args, '--out', out]);
  return { out, summary };
}

function idsOf(lines: Iterable<string[]>): string[] {
  return [...lines].flat().map((l) => JSON.parse(l).call_id as string);
}

describe('traces dedupe', () => {
  it('keeps exactly the distinct ok keys, each line byte for byte, and explains every drop once', () => {
    const { out, summary } = run(['dedupe', SAMPLES, '--status', 'ok']);
    assert.equal(summary.kept, expected.unique_ok_keys);
    assert.equal(summary.dropped.duplicate, expected.duplicate_ok_records);
    assert.equal(summary.dropped.status, expected.exception + expected.no_output);
    assert.equal(summary.damaged_lines, expected.damaged_lines);
    const kept = treeLines(out);
    const source = treeLines(SAMPLES);
    for (const [file, lines] of kept) {
      for (const line of lines) assert.ok(source.get(file)?.includes(line), `${file} line copied byte for byte`);
    }
    const keys = idsOf(kept.values()).length;
    assert.equal(keys, expected.unique_ok_keys);
    const drops = manifest(out);
    // Kept records a flagging stage found something in (the samples' refusal) are listed too, with "flagged": true: no drop.
    const droppedIds = drops.filter((d) => d.reason !== 'damaged' && (d as { flagged?: boolean }).flagged !== true).map((d) => d.call_id!);
    const all = [...idsOf(kept.values()), ...droppedIds];
    assert.equal(all.length, summary.records_read, 'kept plus dropped equals records read');
    assert.equal(new Set(all).size, all.length, 'no record is both kept and dropped, or dropped twice');
    assert.deepEqual(
      drops.filter((d) => d.reason === 'damaged').map((d) => [d.file.endsWith(expected.damaged_line.file), d.line]),
      [[true, expected.damaged_line.line]],
    );
  });

  it('names the record a duplicate gave way to, and keeps the first by timestamp unless told last', () => {
    const first = run(['dedupe', SAMPLES, '--status', 'ok']);
    const duplicate = manifest(first.out).find((d) => d.reason === 'duplicate')!;
    assert.deepEqual([duplicate.call_id, duplicate.kept], ['d4e45dfd-1936-406d-a55e-7617346d3387', '08ad8811-dff0-4419-b934-5695fb1686c2']);
    const last = run(['dedupe', SAMPLES, '--status', 'ok', '--keep', 'last']);
    const lastDuplicate = manifest(last.out).find((d) => d.reason === 'duplicate')!;
    assert.deepEqual([lastDuplicate.call_id, lastDuplicate.kept], [duplicate.kept, duplicate.call_id]);
  });

  it('keeps the success of a call retried after a failure, whatever the order', () => {
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'p', 'gen'), { recursive: true });
    const inputs = [{ role: 'user', content: 'What is 2+2?' }];
    const config = { module: 'synalinks', class_name: 'LanguageModel', config: { model: 'openai/gpt-4o-mini' }, registered_name: null };
    const base = { synalinks_version: '0.9.014', parent_call_id: null, program: 'p', module: 'gen', duration: 1.0, inputs_hash: canonicalValueHash(inputs), config, config_hash: canonicalValueHash(config) };
    const failed = { ...base, call_id: 'f0000000-0000-4000-8000-000000000001', timestamp: 100.0, usage: null, cost: null, messages: inputs, outputs: null, exception: 'timeout' };
    const answer = { role: 'assistant', content: '4' };
    const succeeded = { ...base, call_id: 'f0000000-0000-4000-8000-000000000002', timestamp: 200.0, usage: null, cost: null, messages: [...inputs, answer], outputs: answer };
    writeFileSync(path.join(tree, 'p', 'gen', 'gen_20260101-000000.jsonl'), `${JSON.stringify(failed)}\n${JSON.stringify(succeeded)}\n`);
    const { out, summary } = run(['dedupe', tree]);
    assert.equal(summary.kept, 1);
    assert.deepEqual(
      manifest(out).map((d) => [d.call_id, d.reason, d.kept]),
      [[failed.call_id, 'duplicate', succeeded.call_id]],
    );
  });

  it('keeps different answers to the same prompt with --key conversation', () => {
    const { summary } = run(['dedupe', SAMPLES, '--status', 'ok', '--key', 'conversation']);
    assert.equal(summary.dropped.duplicate, 0, 'the re-run answered differently');
    assert.equal(summary.kept, expected.ok);
  });

  it('collapses agent trajectories to their last step with --trajectories last', () => {
    const { out, summary } = run(['dedupe', SAMPLES, '--status', 'ok', '--trajectories', 'last']);
    const prefixes = manifest(out).filter((d) => d.reason === 'prefix');
    assert.equal(summary.dropped.prefix, 6);
    assert.ok(prefixes.every((d) => d.file.includes('tool_calls_generator_math_agent')));
    assert.deepEqual(new Set(prefixes.map((d) => d.kept)), new Set(['78e42908-154a-4f33-9623-fdc459c8c999', '5b2b4d61-1481-4a35-b39a-59d8e896a0f1']));
    assert.ok(!treeLines(out).has('math_agent/tool_calls_generator_math_agent/tool_calls_generator_math_agent_20260708-163045.jsonl'));
  });

  it('a second run --against the first output keeps nothing', () => {
    const first = run(['dedupe', SAMPLES, '--status', 'ok', '--trajectories', 'last']);
    const second = run(['dedupe', SAMPLES, '--status', 'ok', '--trajectories', 'last', '--against', first.out]);
    assert.equal(second.summary.kept, 0);
    assert.equal(second.summary.dropped.seen, expected.ok);
  });

  it('refuses --against an output made with another key', () => {
    const first = run(['dedupe', SAMPLES, '--status', 'ok']);
    const result = runCli(['dedupe', SAMPLES, '--key', 'inputs', '--against', first.out, '--dry-run']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--against .* was made with --key inputs,config/);
  });
});

describe('traces filter options', () => {
  const keptIds = (args: string[]) => {
    const { out } = run(['filter', SAMPLES, ...args]);
    return new Set(idsOf(treeLines(out).values()).map((id) => id.slice(0, 8)));
  };

  it('--status', () => {
    assert.deepEqual(keptIds(['--status', 'exception,no_output']), new Set(['9c9899b3', '4c60e633']));
  });
  it('--program and --module globs, repeatable', () => {
    assert.equal(keptIds(['--program', 'language_*']).size, 4);
    assert.equal(keptIds(['--module', 'generator', '--module', 'generator_c?t']).size, 8 + 3);
  });
  it('a glob that is no pattern ([z-a]) is one line and exit 2, for each flag, not a stack', () => {
    for (const flag of ['--program', '--module', '--model']) {
      const result = runCli(['filter', SAMPLES, '--dry-run', flag, '[z-a]']);
      assert.equal(result.status, 2, result.stderr);
      assert.equal(result.stderr, `traces: ${flag} "[z-a]": not a valid pattern (Range out of order in character class): use *, ? and [abc] or [a-z]\n`);
    }
  });
  it('--model glob', () => {
    assert.deepEqual(keptIds(['--model', 'ollama_chat/*', '--module', 'language_model']), new Set(['216f6542']));
  });
  it('--synalinks-version', () => {
    assert.equal(keptIds(['--synalinks-version', '>=0.9.010,<0.10']).size, expected.records);
    assert.equal(keptIds(['--synalinks-version', '0.9.015']).size, 0);
  });
  it('--since and --until, as ISO dates and epoch seconds', () => {
    assert.deepEqual(keptIds(['--since', '2026-07-08T12:00:00Z']).size, 8);
    assert.deepEqual(keptIds(['--until', '1783412132.5']), new Set(['08ad8811', '9e0e124a']));
  });
  it('--since and --until read a year, a month and a basic date as ISO 8601 does, not as epoch seconds of 1970', () => {
    // The samples' calls were made on July 7th and 8th, 2026.
    const all = keptIds([]);
    assert.equal(keptIds(['--until', '2027']).size, all.size);
    assert.equal(keptIds(['--until', '2026']).size, 0);
    assert.equal(keptIds(['--since', '2026-07', '--until', '2026-08']).size, all.size);
    assert.equal(keptIds(['--since', '2026-08']).size, 0);
    assert.deepEqual(keptIds(['--since', '20260708']), keptIds(['--since', '2026-07-08']));
    assert.equal(keptIds(['--since', '20260708']).size, 12);
    // Epoch seconds of that many digits are still written with a fraction.
    assert.equal(keptIds(['--since', '20260708.0']).size, all.size);
  });
  it('--min-tokens and --max-tokens use the usage total; unknown usage does not pass', () => {
    assert.deepEqual(keptIds(['--min-tokens', '1300']), new Set(['5b2b4d61', 'bf85d9fb']));
    // 4b997544: the samples' refusal, a short answer (63 + 14 tokens).
    assert.deepEqual(keptIds(['--max-tokens', '85', '--status', 'ok']), new Set(['08ad8811', '4b997544', 'd4e45dfd']));
  });
  it('--max-cost and --max-duration', () => {
    assert.equal(keptIds(['--max-cost', '0', '--status', 'ok']).size, 5);
    assert.deepEqual(keptIds(['--max-duration', '0.5', '--status', 'ok']), new Set(['d70f51c7']));
  });
  it('--grep searches message text, reasoning and tool arguments', () => {
    assert.ok(keptIds(['--grep', 'Toulouse']).size >= 1);
    // Tool arguments are recorded as objects: {"a":423,"b":362}.
    const toolArgument = keptIds(['--grep', '"a":423', '--program', 'math_agent']);
    assert.ok(toolArgument.size >= 4, 'every step of that run carries the first tool call');
  });
  it('--exclude drops listed call_ids, with comments', () => {
    const file = path.join(tempDir(), 'exclude.txt');
    writeFileSync(file, '# reviewed\n08ad8811-dff0-4419-b934-5695fb1686c2  # bad answer\n\n216f6542-0000-0000-0000-000000000000\n');
    const { out } = run(['filter', SAMPLES, '--exclude', file]);
    const excluded = manifest(out).filter((d) => d.reason === 'excluded');
    assert.deepEqual(excluded.map((d) => d.call_id), ['08ad8811-dff0-4419-b934-5695fb1686c2']);
  });

  for (const [flag, value, message] of [
    ['--since', '2026-13-45', /--since "2026-13-45": expected an ISO 8601/],
    ['--until', 'yesterday', /--until "yesterday": expected/],
    ['--since', '2026-13', /--since "2026-13": expected an ISO 8601/],
    ['--since', '20260230', /--since "20260230": expected an ISO 8601/],
    ['--grep', '([a-', /--grep "\(\[a-": not a valid regular expression/],
    ['--exclude', '/no/such/exclude.txt', /--exclude \/no\/such\/exclude\.txt: no such file/],
    ['--max-tokens', 'lots', /--max-tokens "lots": expected a whole number/],
    ['--status', 'ok,failed', /--status "failed": expected/],
    ['--synalinks-version', 'latest', /--synalinks-version "latest"/],
  ] as const) {
    it(`rejects a bad ${flag} with exit 2 and writes nothing`, () => {
      const out = path.join(tempDir(), 'out');
      const result = runCli(['filter', SAMPLES, flag, value, '--out', out]);
      assert.equal(result.status, 2);
      assert.match(result.stderr, message);
      assert.equal(existsSync(out), false);
    });
  }
});

describe('output safety', () => {
  it('refuses a non-empty --out without --force, and an --out inside a root', () => {
    const out = tempDir();
    writeFileSync(path.join(out, 'keep-me.txt'), 'mine');
    const refused = runCli(['dedupe', SAMPLES, '--out', out]);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /is not empty: pass --force/);
    const forced = runCli(['dedupe', SAMPLES, '--out', out, '--force']);
    assert.equal(forced.status, 0);
    assert.equal(readFileSync(path.join(out, 'keep-me.txt'), 'utf8'), 'mine');
    const inside = runCli(['dedupe', SAMPLES, '--out', path.join(SAMPLES, 'clean')]);
    assert.equal(inside.status, 2);
    assert.match(inside.stderr, /is inside the input/);
    assert.equal(existsSync(path.join(SAMPLES, 'clean')), false);
  });

  it('--dry-run writes nothing and lists the drops', () => {
    const out = path.join(tempDir(), 'out');
    const result = runCli(['dedupe', SAMPLES, '--status', 'ok', '--out', out, '--dry-run']);
    assert.equal(result.status, 0);
    assert.equal(existsSync(out), false);
    assert.match(flat(result.stdout), /generator_20260707-143002\.jsonl:1 d4e45dfd-1936-406d-a55e-7617346d3387: duplicate of 08ad8811/);
    assert.match(result.stderr, /dry run: nothing written/);
  });
  // Interruption (signals, kills) is covered in fs-safety.test.ts, which waits for the run's state.

});

describe('copying kept lines', () => {
  it('writes each kept line and its own line end, byte for byte, whatever surrounds it in the file (BOM, CRLF, blank lines, no final newline, long lines)', async () => {
    const { GOLDEN } = await import('./helpers.js');
    const golden = readdirSync(GOLDEN, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
      .flatMap((e) => readFileSync(path.join(e.parentPath, e.name), 'utf8').split('\n').filter((l) => l !== ''));
    const records = golden.map((l) => JSON.parse(l) as Record<string, unknown>);
    const ok = records.filter((r) => r.outputs !== null && !('exception' in r));
    assert.ok(ok.length >= 1, 'the golden file has an ok record');
    // Distinct records (a padding field changes nothing the dedupe key covers, so key them apart).
    const line = (i: number, pad: number) => JSON.stringify({ ...ok[i % ok.length], inputs_hash: `${String(i).padStart(4, '0')}${'a'.repeat(60)}`, pad: 'x'.repeat(pad) });
    const root = tempDir();
    const dir = path.join(root, 'p', 'm');
    mkdirSync(dir, { recursive: true });
    const parts = [
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(`${line(0, 3)}\n${line(1, 10)}\r\n\r\n  \n${line(2, 300_000)}\n${line(0, 3)}\n${line(3, 7)}\n\n${line(4, 1)}\r\n${line(5, 2)}\n${line(6, 0)}`),
    ];
    writeFileSync(path.join(dir, 'm_20260101-000000.jsonl'), Buffer.concat(parts));
    const out = path.join(tempDir(), 'out');
    runCliJson([...['dedupe', root, '--status', 'ok'], '--out', out]);
    const written = readFileSync(path.join(out, 'p', 'm', 'm_20260101-000000.jsonl'), 'utf8');
    // The first line starts with a BOM, which orjson refuses: damaged, so the fourth line (its
    // record again) is the first of its key. Every other line is kept, as its bytes and the line
    // end it had (CR LF stays CR LF, issue 39); the last, which had none, gets \n.
    const keptLines = [`${line(1, 10)}\r\n`, line(2, 300_000), line(0, 3), line(3, 7), `${line(4, 1)}\r\n`, line(5, 2), line(6, 0)];
    assert.equal(written, keptLines.map((l) => (l.endsWith('\r\n') ? l : `${l}\n`)).join(''));
  });

  it('a CRLF file comes out of dedupe and filter with every byte it had, less the lines dropped (issue 39)', () => {
    const root = path.join(tempDir(), 'tree');
    mkdirSync(path.join(root, 'p', 'm'), { recursive: true });
    const lines = [0, 1, 2, 3, 4].map((index) => synalinksLine({ index, program: 'p', module: 'm', messages: [{ role: 'user', content: `question ${index % 4}` }, { role: 'assistant', content: `answer ${index}` }] }));
    const file = path.join(root, 'p', 'm', 'm_20260101-000000.jsonl');
    writeFileSync(file, lines.map((l) => `${l}\r\n`).join(''));
    const out = path.join(tempDir(), 'dedupe');
    runCliJson(['dedupe', root, '--out', out]);
    // The fifth record asks what the first asked: its duplicate.
    assert.equal(readFileSync(path.join(out, 'p', 'm', 'm_20260101-000000.jsonl'), 'latin1'), lines.slice(0, 4).map((l) => `${l}\r\n`).join(''));
    const filtered = path.join(tempDir(), 'filter');
    runCliJson(['filter', root, '--out', filtered]);
    assert.deepEqual(readFileSync(path.join(filtered, 'p', 'm', 'm_20260101-000000.jsonl')), readFileSync(file));
  });
});

describe('records that recorded no hashes', () => {
  it('are keyed by the hashes Synalinks would have recorded: distinct ones all kept, a copy of a hashed record its duplicate, and the index says the same', async () => {
    const { GOLDEN } = await import('./helpers.js');
    const folder = path.join(GOLDEN, 'my_program', 'first_generator');
    const golden = JSON.parse(readFileSync(path.join(folder, readdirSync(folder)[0]!), 'utf8').split('\n')[0]!) as Record<string, unknown>;
    const unhashed = (i: number, changes: Record<string, unknown>, absent: 'missing' | 'null' | 'empty') => {
      const record: Record<string, unknown> = { ...golden, call_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, ...changes };
      if (absent === 'missing') {
        delete record.inputs_hash;
        delete record.config_hash;
      } else {
        record.inputs_hash = absent === 'null' ? null : '';
        record.config_hash = absent === 'null' ? null : '';
      }
      return JSON.stringify(record);
    };
    const messages = golden.messages as { role: string; content: string }[];
    const lines = [
      JSON.stringify(golden),
      // The golden record again, its hashes not recorded: a duplicate of the first.
      unhashed(1, {}, 'missing'),
      // Three other conversations without hashes, each its own.
      ...(['missing', 'null', 'empty'] as const).map((absent, k) => unhashed(2 + k, { messages: [messages[0], { role: 'user', content: `question ${k}` }, messages.at(-1)] }, absent)),
    ];
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    writeFileSync(path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
    const stats = runCliJson<{ unique_ok_keys: number; duplicate_ok_records: number }>(['stats', tree, '--json']);
    assert.deepEqual([stats.unique_ok_keys, stats.duplicate_ok_records], [4, 1]);
    const dry = runCli(['dedupe', tree, '--dry-run']);
    assert.match(dry.stdout + dry.stderr, /would drop 1 record as duplicate/);
    assert.match(flat(dry.stdout + dry.stderr), /00000000-0000-4000-8000-000000000001: duplicate of /);
    const index = path.join(tempDir(), 'index.parquet');
    assert.equal(runCli(['index', tree, '--out', index]).status, 0);
    const rows = runCliJson<{ call_id: string; inputs_hash: string; config_hash: string }[]>(['sql', 'SELECT call_id, inputs_hash, config_hash FROM records ORDER BY line', '--index', index, '--json']);
    assert.equal(rows[1]!.inputs_hash, golden.inputs_hash);
    assert.equal(rows[1]!.config_hash, golden.config_hash);
    assert.equal(new Set(rows.map((r) => `${r.inputs_hash} ${r.config_hash}`)).size, 4);
  });
});

describe('hashes written by hand', () => {
  it('zero-padded counters and hashes that differ only at the end are distinct keys, for every command and for --key inputs; an equal pair is one', async () => {
    const { GOLDEN } = await import('./helpers.js');
    const folder = path.join(GOLDEN, 'my_program', 'first_generator');
    const golden = JSON.parse(readFileSync(path.join(folder, readdirSync(folder)[0]!), 'utf8').split('\n')[0]!) as Record<string, unknown>;
    const config = golden.config_hash as string;
    // What a test or a script writes for distinct hashes: counters, and one digit changed at the end.
    const inputs = [
      ...Array.from({ length: 6 }, (_, i) => i.toString(16).padStart(64, '0')),
      `${'ab'.repeat(31)}c1`,
      `${'ab'.repeat(31)}c2`,
      `${'AB'.repeat(31)}c3`,
    ];
    const lines = [...inputs, inputs[0]].map((hash, i) =>
      JSON.stringify({ ...golden, call_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, timestamp: (golden.timestamp as number) + i, inputs_hash: hash, config_hash: config }),
    );
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    writeFileSync(path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
    const stats = runCliJson<{ unique_ok_keys: number; duplicate_ok_records: number }>(['stats', tree, '--json']);
    assert.deepEqual([stats.unique_ok_keys, stats.duplicate_ok_records], [inputs.length, 1]);
    for (const key of ['inputs,config,module', 'inputs,config', 'inputs']) {
      const dry = runCliJson<{ kept: number; dropped: { duplicate: number } }>(['dedupe', tree, '--key', key, '--dry-run', '--json']);
      assert.deepEqual([dry.kept, dry.dropped.duplicate], [inputs.length, 1], key);
    }
  });

  it('--against an output whose keys were made the earlier way (leading bits) is refused with what to do', () => {
    const out = path.join(tempDir(), 'earlier');
    assert.equal(runCli(['dedupe', SAMPLES, '--out', out]).status, 0);
    const runFile = path.join(out, '_traces', 'run.json');
    const run = JSON.parse(readFileSync(runFile, 'utf8')) as Record<string, unknown>;
    assert.equal(run.keys_version, 3);
    delete run.keys_version;
    writeFileSync(runFile, JSON.stringify(run));
    const result = runCli(['dedupe', SAMPLES, '--against', out, '--dry-run']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /made by an earlier traces.*run that dedupe again \(with --force\)/);
  });
});
