/**
 * `traces index`, `traces sql` and `--keep-list`: the index agrees with `stats` and with a
 * strict reading of the lines (Python orjson), every column has its type and null rule, the
 * docs/engine.md keep-list query reproduces `traces dedupe`, and keep-lists are applied and checked.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { generate } from '../bench/generate.js';
import { Engine, sqlString, type QueryResult } from '../src/engine/duckdb.js';
import { INDEX_COLUMNS } from '../src/engine/index-columns.js';
import { FIXTURES, REPO, runCli, runCliJson, SAMPLES, tempDir, flat, UNWRAPPED } from './helpers.js';

/** Runs SQL over Parquet files in a fresh in-memory engine. */
async function query(sql: string): Promise<QueryResult> {
  const engine = await Engine.open(null);
  try {
    return await engine.query(sql);
  } finally {
    engine.close();
  }
}

function objects(result: QueryResult): Record<string, unknown>[] {
  return result.rows.map((row) => Object.fromEntries(result.columns.map((name, i) => [name, row[i]])));
}

function mixedFolder(dir: string): string {
  cpSync(SAMPLES, dir, { recursive: true });
  cpSync(path.join(FIXTURES, 'ask'), path.join(dir, 'recordings'), { recursive: true });
  cpSync(path.join(FIXTURES, 'klieo'), path.join(dir, 'klieo-runs'), { recursive: true });
  return dir;
}

function index(roots: string[], out: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const result = runCli(['index', ...roots, '--out', out, ...extra], { env });
  assert.equal(result.status, 0, result.stderr);
  return result;
}

/** Every kept line of a dedupe/filter output tree, by relative path (the _traces folder aside). */
function treeLines(dir: string): Map<string, string> {
  const lines = new Map<string, string>();
  for (const relative of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const full = path.join(dir, relative);
    if (relative.startsWith('_traces') || !statSync(full).isFile()) continue;
    readFileSync(full, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .forEach((l, i) => lines.set(`${relative}:${i}`, l));
  }
  return lines;
}

const PYTHON_READER = String.raw`
import json, os, sys
import orjson
root = sys.argv[1]
rows = []
for dirpath, _, names in os.walk(root):
    for name in names:
        if not name.endswith('.jsonl'):
            continue
        full = os.path.join(dirpath, name)
        with open(full, 'rb') as f:
            for number, line in enumerate(f.read().split(b'\n'), 1):
                if line == b'':
                    continue
                try:
                    r = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(r, dict) or 'synalinks_version' not in r:
                    continue
                status = 'exception' if 'exception' in r else ('no_output' if r.get('outputs') is None else 'ok')
                usage = r.get('usage') if status == 'ok' else None
                msgs = r.get('messages') or []
                rows.append({
                    'call_id': r.get('call_id'), 'file': os.path.relpath(full, root), 'line': number, 'length': len(line),
                    'status': status, 'timestamp': r.get('timestamp'), 'duration': r.get('duration'),
                    'prompt_tokens': usage.get('prompt_tokens') if usage else None,
                    'completion_tokens': usage.get('completion_tokens') if usage else None,
                    'cost_reported': r.get('cost') if status == 'ok' else None,
                    'messages': len(msgs),
                    'has_tool_calls': any(isinstance(m, dict) and isinstance(m.get('tool_calls'), list) and len(m['tool_calls']) > 0 for m in msgs),
                    'inputs_hash': r.get('inputs_hash'), 'config_hash': r.get('config_hash'),
                })
print(json.dumps(rows))
`;

function pythonRows(root: string): Record<string, unknown>[] | null {
  const result = spawnSync('python3', ['-c', PYTHON_READER, root], { encoding: 'utf8', maxBuffer: 256 << 20 });
  if (result.status !== 0) return null;
  return JSON.parse(result.stdout) as Record<string, unknown>[];
}

describe('traces index', () => {
  let work: string;
  let tree: string;
  let treeIndex: string;
  let mixed: string;
  let mixedIndex: string;

  before(() => {
    work = tempDir('traces-index-');
    tree = path.join(work, 'tree');
    generate({ out: tree, mb: 3, seed: 31, firstBigImageMb: 1, bigImageEveryMb: 2 });
    treeIndex = path.join(work, 'tree.parquet');
    // Small shares force worker threads, and small parts force several part files merged into one:
    // rows made in several threads and parts come back in file order.
    index([tree], treeIndex, [], { TRACES_SHARE_BYTES: String(256 << 10), TRACES_INDEX_PART_ROWS: '97' });
    mixed = mixedFolder(path.join(work, 'mixed'));
    mixedIndex = path.join(work, 'mixed.parquet');
    index([mixed], mixedIndex);
  });

  for (const which of ['generated tree', 'mixed sources'] as const) {
    it(`agrees with stats --json on the ${which}: records, classes, damaged lines, distinct ok keys, tokens and cost`, async () => {
      const [root, file] = which === 'generated tree' ? [tree, treeIndex] : [mixed, mixedIndex];
      const stats = runCliJson<Record<string, any>>(['stats', root]);
      const [row] = objects(
        await query(`SELECT count(*) AS records,
            count(*) FILTER (status = 'ok') AS ok, count(*) FILTER (status = 'exception') AS exception,
            count(*) FILTER (status = 'no_output') AS no_output,
            count(DISTINCT (inputs_hash, config_hash)) FILTER (status = 'ok') AS unique_ok_keys,
            sum(prompt_tokens) FILTER (status = 'ok') AS prompt, sum(completion_tokens) FILTER (status = 'ok') AS completion,
            sum(total_tokens) FILTER (status = 'ok') AS total,
            count(*) FILTER (status = 'ok' AND prompt_tokens IS NULL) AS without_usage,
            sum(cost_usd) FILTER (status = 'ok' AND cost_source = 'reported') AS reported,
            sum(cost_usd) FILTER (status = 'ok' AND cost_source = 'estimated') AS estimated,
            count(*) FILTER (status = 'ok' AND cost_usd IS NULL) AS unpriced
          FROM read_parquet(${sqlString(file)})`),
      );
      for (const key of ['records', 'ok', 'exception', 'no_output', 'unique_ok_keys'] as const) assert.equal(row[key], stats[key], key);
      assert.ok((stats.records as number) > 0 && (stats.exception as number) + (stats.no_output as number) > 0, 'the tree has failed records');
      const t = stats.totals;
      assert.equal(row.prompt ?? 0, t.tokens.prompt);
      assert.equal(row.completion ?? 0, t.tokens.completion);
      assert.equal(row.total ?? 0, t.tokens.total);
      assert.equal(row.without_usage, t.tokens.ok_records_without_usage);
      assert.ok(Math.abs(((row.reported as number) ?? 0) - t.cost_usd) < 1e-6);
      assert.ok(Math.abs(((row.estimated as number) ?? 0) - t.estimated_cost_usd) < 1e-6);
      assert.equal(row.unpriced, t.ok_records_unpriced);
      const damaged = runCli(['index', root, '--out', path.join(work, `again-${which.replace(' ', '-')}.parquet`), '--json']);
      assert.equal(JSON.parse(damaged.stdout).damaged_lines, stats.damaged_lines);
      if (stats.damaged_lines > 0) assert.match(flat(damaged.stderr), /damaged line, not indexed/);
    });
  }

  it('holds each Synalinks line as a strict parser (orjson) reads it, in file order', async (t) => {
    const expected = pythonRows(tree);
    if (expected === null) return t.skip('python3 with orjson is not available');
    const got = objects(await query(`SELECT * FROM read_parquet(${sqlString(treeIndex)})`));
    // Which lines are damaged is the scanner's rule (tested with it); here every row must be a line orjson reads, as orjson reads it.
    assert.ok(got.length > 0 && got.length <= expected.length);
    const byPlace = new Map(expected.map((r) => [`${r.file}:${r.line}`, r]));
    let previous = '';
    for (const row of got) {
      const place = `${row.file}:${String(row.line).padStart(9, '0')}`;
      assert.ok(place > previous, `rows in file order: ${place} after ${previous}`);
      previous = place;
      const want = byPlace.get(`${row.file}:${row.line}`);
      assert.ok(want, `${row.file}:${row.line} is a record`);
      for (const key of ['call_id', 'length', 'status', 'timestamp', 'duration', 'prompt_tokens', 'completion_tokens', 'messages', 'has_tool_calls', 'inputs_hash', 'config_hash']) {
        assert.deepEqual(row[key], want[key] ?? null, `${key} of ${row.file}:${row.line}`);
      }
      if (want.cost_reported !== null && want.cost_reported !== undefined) {
        assert.equal(row.cost_usd, want.cost_reported);
        assert.equal(row.cost_source, 'reported');
      } else assert.notEqual(row.cost_source, 'reported');
    }
    assert.ok(got.some((r) => r.has_tool_calls === true) && got.some((r) => r.has_tool_calls === false));
  });

  it('has every column with its type, and nulls only where unknown', async () => {
    const described = objects(await query(`DESCRIBE SELECT * FROM read_parquet(${sqlString(mixedIndex)})`));
    const expectedType = (type: string) => type;
    assert.deepEqual(
      described.map((c) => [c.column_name, c.column_type]),
      INDEX_COLUMNS.map((c) => [c.name, expectedType(c.type)]),
    );
    for (const file of [mixedIndex, treeIndex]) {
      const from = `FROM read_parquet(${sqlString(file)})`;
      for (const column of INDEX_COLUMNS.filter((c) => c.notNull)) {
        const [{ n }] = objects(await query(`SELECT count(*) AS n ${from} WHERE "${column.name}" IS NULL`));
        assert.equal(n, 0, `${column.name} is never null`);
      }
      const checks: [string, string][] = [
        ['offset and length are null exactly for Ask and klieo', `("offset" IS NULL) <> (source <> 'synalinks') OR (length IS NULL) <> (source <> 'synalinks')`],
        ['Synalinks usage is null unless the record is ok', `source = 'synalinks' AND status <> 'ok' AND (prompt_tokens IS NOT NULL OR total_tokens IS NOT NULL)`],
        ['cost_source is null exactly when cost_usd is', `(cost_usd IS NULL) <> (cost_source IS NULL)`],
        ['an estimate needs usage and an ok record', `cost_source = 'estimated' AND (status <> 'ok' OR total_tokens IS NULL)`],
        ['unknown cost is null, not 0', `cost_usd = 0 AND cost_source IS NULL`],
        ['status is one of three', `status NOT IN ('ok', 'exception', 'no_output')`],
        ['conversation_hash is 32 hex digits', `NOT regexp_full_match(conversation_hash, '[0-9a-f]{32}')`],
        ['file is relative to root', `file LIKE '/%' OR file LIKE '%..%' OR NOT starts_with(root, '/')`],
        ['messages count the completion of ok records', `status = 'ok' AND messages < 1`],
      ];
      for (const [rule, violation] of checks) {
        const [{ n }] = objects(await query(`SELECT count(*) AS n ${from} WHERE ${violation}`));
        assert.equal(n, 0, rule);
      }
    }
    const [{ sources }] = objects(await query(`SELECT list(DISTINCT source ORDER BY source) AS sources FROM read_parquet(${sqlString(mixedIndex)})`));
    assert.deepEqual(sources, ['ask', 'klieo', 'synalinks']);
    // Records with unknown usage exist, and their cost stays null (never estimated as 0).
    const [{ unknown }] = objects(await query(`SELECT count(*) AS unknown FROM read_parquet(${sqlString(treeIndex)}) WHERE total_tokens IS NULL AND cost_usd IS NULL`));
    assert.ok((unknown as number) > 0);
  });

  it('matches dedupe --key conversation: distinct conversation_hash of ok records = unique keys', async () => {
    const dedupe = runCliJson<{ unique_keys: number }>(['dedupe', tree, '--status', 'ok', '--key', 'conversation', '--dry-run']);
    const [{ n }] = objects(await query(`SELECT count(DISTINCT conversation_hash) AS n FROM read_parquet(${sqlString(treeIndex)}) WHERE status = 'ok'`));
    assert.equal(n, dedupe.unique_keys);
  });

  it('keeps every text exactly, whatever it holds: quotes, commas, line breaks, empty, non-ASCII; null stays null', async () => {
    // The rows cross from the readers to the engine as text: text that looks like that text's syntax must come back unchanged.
    const odd = ['a"b', 'c,d', 'e\nf', '', '"', '\r\n', 'x""y', '"quoted"', 'é ✓ 中文 😀', ' lead and trail ', '\\N', 'NULL', 'tab\there'];
    const sample = path.join(SAMPLES, 'my_program', 'my_program_20260707-101530.jsonl');
    const template = JSON.parse(readFileSync(sample, 'utf8').split('\n')[0]) as Record<string, unknown>;
    const root = path.join(work, 'odd-texts');
    const file = path.join(root, 'my_program', 'my_program_20260707-101530.jsonl');
    mkdirSync(path.dirname(file), { recursive: true });
    const lines = odd.map((text, i) => JSON.stringify({ ...template, call_id: text, parent_call_id: i % 2 === 0 ? null : text }));
    writeFileSync(file, lines.join('\n') + '\n');
    for (const [out, env] of [
      [path.join(work, 'odd.parquet'), {}],
      [path.join(work, 'odd-parts') + '/', { TRACES_INDEX_PART_ROWS: '4' }],
    ] as const) {
      index([root], out, [], env);
      const source = out.endsWith('/') ? `${out}part-*.parquet` : out;
      const got = objects(await query(`SELECT call_id, parent_call_id, line FROM read_parquet(${sqlString(source)}) ORDER BY line`));
      assert.deepEqual(
        got.map((r) => [r.call_id, r.parent_call_id]),
        odd.map((text, i) => [text, i % 2 === 0 ? null : text]),
      );
    }
  });

  it('reads timestamp, duration and cost in every recorded number form as the doubles they are', async () => {
    // The rows carry recorded number text to the engine: each form must come back as Number(text).
    const forms = ['1767707893.6880524', '1E+2', '-0', '-0.0', '0.1e-7', '1e-400', '123456789012345678901234567890', '2.2250738585072011e-308', '9007199254740993', '1.0', '1e300', '5e-324'];
    const sample = path.join(SAMPLES, 'my_program', 'my_program_20260707-101530.jsonl');
    const template = JSON.parse(readFileSync(sample, 'utf8').split('\n')[0]) as Record<string, unknown>;
    assert.ok(template.outputs !== null && template.exception === undefined, 'the template is an ok record, so its cost counts');
    const root = path.join(work, 'number-forms');
    const file = path.join(root, 'my_program', 'my_program_20260707-101530.jsonl');
    mkdirSync(path.dirname(file), { recursive: true });
    const lines = forms.map((text, i) =>
      JSON.stringify({ ...template, call_id: `n${i}`, timestamp: '@T@', duration: '@T@', cost: '@T@' }).replaceAll('"@T@"', text),
    );
    writeFileSync(file, lines.join('\n') + '\n');
    const out = path.join(work, 'number-forms.parquet');
    index([root], out);
    const got = objects(await query(`SELECT timestamp, duration, cost_usd, cost_source FROM read_parquet(${sqlString(out)}) ORDER BY line`));
    assert.deepEqual(
      got.map((r) => [r.timestamp, r.duration, r.cost_usd, r.cost_source]),
      // A timestamp past what a date can hold (±8.64e12 s) is no time, and a duration negative or longer than that none: null, as in stats.
      forms.map((text) => [Math.abs(Number(text)) <= 8.64e12 ? Number(text) : null, Number(text) >= 0 && Number(text) <= 8.64e12 ? Number(text) : null, Number(text), 'reported']),
    );
  });

  it('writes part files into a folder, or Parquet on stdout; a small tree is one row group within the target size', async () => {
    const folder = path.join(work, 'parts') + '/';
    index([mixed], folder, [], { TRACES_INDEX_PART_ROWS: '10' });
    const parts = readdirSync(folder);
    assert.ok(parts.length >= 3 && parts.every((p) => /^part-\d+\.parquet$/.test(p)), parts.join(','));
    const ordered = objects(await query(`SELECT file, line FROM read_parquet([${parts.map((_, i) => sqlString(path.join(folder, `part-${i}.parquet`))).join(', ')}])`));
    const single = objects(await query(`SELECT file, line FROM read_parquet(${sqlString(mixedIndex)})`));
    assert.deepEqual(ordered, single, 'part files in order hold the rows of the single file, in order');
    const [{ n }] = objects(await query(`SELECT count(*) AS n FROM read_parquet(${sqlString(path.join(folder, '*.parquet'))})`));
    const [{ m }] = objects(await query(`SELECT count(*) AS m FROM read_parquet(${sqlString(mixedIndex)})`));
    assert.equal(n, m);
    const stdout = spawnSync(process.execPath, [path.join(REPO, 'bin', 'traces.js'), 'index', mixed, '--out', '-'], { maxBuffer: 64 << 20 });
    assert.equal(stdout.status, 0, String(stdout.stderr));
    assert.equal(stdout.stdout.subarray(0, 4).toString('latin1'), 'PAR1');
    const piped = path.join(work, 'piped.parquet');
    writeFileSync(piped, stdout.stdout);
    const [{ p }] = objects(await query(`SELECT count(*) AS p FROM read_parquet(${sqlString(piped)})`));
    assert.equal(p, m);
    const groups = objects(await query(`SELECT max(row_group_num_rows) AS most FROM parquet_metadata(${sqlString(treeIndex)})`));
    assert.ok((groups[0].most as number) <= 131072);
  });

  it('never replaces a file without --force, never writes inside an input or through a link', () => {
    const out = path.join(work, 'exists.parquet');
    writeFileSync(out, 'keep me');
    const refused = runCli(['index', mixed, '--out', out]);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /already exists: pass --force/);
    assert.equal(readFileSync(out, 'utf8'), 'keep me');
    index([mixed], out, ['--force']);
    assert.equal(readFileSync(out).subarray(0, 4).toString('latin1'), 'PAR1');
    const inside = runCli(['index', mixed, '--out', path.join(mixed, 'index.parquet')]);
    assert.equal(inside.status, 2);
    assert.match(inside.stderr, /is inside the input/);
    assert.equal(existsSync(path.join(mixed, 'index.parquet')), false);
    const target = path.join(work, 'target.parquet');
    writeFileSync(target, 'target');
    const link = path.join(work, 'link.parquet');
    symlinkSync(target, link);
    const linked = runCli(['index', mixed, '--out', link, '--force']);
    assert.equal(linked.status, 2);
    assert.match(linked.stderr, /symbolic link/);
    assert.equal(readFileSync(target, 'utf8'), 'target');
    assert.deepEqual(readdirSync(work).filter((f) => f.startsWith('.traces-tmp-')), [], 'no scratch folder left behind');
  });
});

describe('--keep-list', () => {
  let work: string;
  let tree: string;
  let treeIndex: string;

  before(() => {
    work = tempDir('traces-keep-');
    tree = path.join(work, 'tree');
    generate({ out: tree, mb: 2, seed: 7, firstBigImageMb: 1, bigImageEveryMb: 2 });
    treeIndex = path.join(work, 'index.parquet');
    index([tree], treeIndex);
  });

  it("docs/engine.md's DuckDB query makes a keep-list with which dedupe keeps exactly what traces dedupe keeps", async () => {
    const readme = readFileSync(path.join(REPO, 'docs', 'engine.md'), 'utf8');
    const match = /<!-- keep-list query: duckdb -->\s*```sql\n([\s\S]*?)```/.exec(readme);
    assert.ok(match, 'docs/engine.md has the DuckDB keep-list query');
    const keep = path.join(work, 'keep.parquet');
    const documented = match[1];
    assert.ok(documented.includes("'index/*/*.parquet'") && documented.includes("'keep.parquet'"));
    // Only the two paths change: the query itself runs as documented.
    await query(documented.replace("'index/*/*.parquet'", sqlString(treeIndex)).replace("'keep.parquet'", sqlString(keep)));
    const plain = path.join(work, 'plain');
    const listed = path.join(work, 'listed');
    assert.equal(runCli(['dedupe', tree, '--out', plain]).status, 0);
    const applied = runCliJson<Record<string, any>>(['dedupe', tree, '--keep-list', keep, '--out', listed]);
    const a = treeLines(plain);
    const b = treeLines(listed);
    assert.ok(a.size > 100);
    assert.deepEqual([...b.values()].sort(), [...a.values()].sort());
    assert.equal(applied.keep_list.not_found, 0);
    assert.equal(applied.dropped.duplicate, 0, 'the list holds one record per key');
    // The tree has what makes the rule matter: keys whose records failed before one succeeded, and repeated keys.
    const [{ mixedKeys }] = objects(
      await query(`SELECT count(*) AS "mixedKeys" FROM (SELECT inputs_hash, config_hash FROM read_parquet(${sqlString(treeIndex)})
        GROUP BY ALL HAVING count(*) FILTER (status = 'ok') > 0 AND count(*) FILTER (status <> 'ok') > 0)`),
    );
    assert.ok((mixedKeys as number) > 0, 'some key has both ok and failed records');
  });

  it('keeps only listed ids from a text list, with comments, and reports the ids no record matched', async () => {
    const ids = objects(await query(`SELECT call_id, status FROM read_parquet(${sqlString(treeIndex)}) ORDER BY file, line`));
    const ok = ids.filter((r) => r.status === 'ok').slice(0, 5).map((r) => r.call_id as string);
    const failed = ids.filter((r) => r.status !== 'ok').slice(0, 2).map((r) => r.call_id as string);
    assert.equal(failed.length, 2);
    const list = path.join(work, 'keep.txt');
    writeFileSync(list, `# chosen by hand\n${ok.join('\n')}\n\n  ${failed[0]}  # a failed one\n${failed[1]}\nno-such-call-1\nno-such-call-2\n`);
    const out = path.join(work, 'filtered');
    const result = runCli(['filter', tree, '--keep-list', list, '--status', 'ok', '--out', out, '--json']);
    assert.equal(result.status, 0, result.stderr);
    const summary = JSON.parse(result.stdout);
    assert.equal(summary.kept, ok.length, 'selection still applies: the failed listed records are dropped by --status');
    assert.equal(summary.dropped.status, summary.records_read - ok.length - summary.dropped.not_in_keep_list);
    assert.deepEqual(
      { listed: summary.keep_list.listed, met: summary.keep_list.met, not_found: summary.keep_list.not_found, malformed: summary.keep_list.malformed },
      { listed: 9, met: 7, not_found: 2, malformed: 0 },
    );
    assert.deepEqual(
      summary.keep_list.not_found_ids.map((e: { id: string; file: string; line: number }) => `${e.file}:${e.line} ${e.id}`),
      [`${list}:10 no-such-call-1`, `${list}:11 no-such-call-2`],
    );
    assert.match(flat(result.stderr), /--keep-list: 2 of 9 listed call_ids not found in these records: no-such-call-1, no-such-call-2/);
    const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const notListed = manifest.filter((d) => d.reason === 'not_in_keep_list');
    assert.equal(notListed.length, summary.dropped.not_in_keep_list);
    assert.ok(notListed.every((d) => !ok.includes(d.call_id) && !failed.includes(d.call_id)));
    const kept = [...treeLines(out).values()].map((l) => JSON.parse(l).call_id).sort();
    assert.deepEqual(kept, [...ok].sort());
  });

  it('reads a Parquet keep-list (call_id column) on export, and refuses a Parquet file without one', async () => {
    const list = path.join(work, 'ok.parquet');
    await query(`COPY (SELECT call_id, timestamp FROM read_parquet(${sqlString(treeIndex)}) WHERE status = 'ok' ORDER BY file, line LIMIT 30) TO ${sqlString(list)} (FORMAT parquet)`);
    const out = path.join(work, 'export');
    const report = runCliJson<Record<string, any>>(['export', tree, '--format', 'openai', '--keep-list', list, '--trajectories', 'all', '--validation-fraction', '0', '--out', out]);
    assert.equal(report.keep_list.listed, 30);
    assert.equal(report.keep_list.not_found, 0);
    assert.ok(report.dropped.not_in_keep_list > 0);
    assert.ok(report.examples.training > 0 && report.examples.training <= 30);
    const noColumn = path.join(work, 'no-column.parquet');
    await query(`COPY (SELECT 1 AS id) TO ${sqlString(noColumn)} (FORMAT parquet)`);
    const refused = runCli(['dedupe', tree, '--keep-list', noColumn, '--dry-run']);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /not a Parquet file with a call_id column/);
    // A row whose call_id is null keeps nothing, and is said, by its row number (nulls first or not).
    const withNulls = path.join(work, 'with-nulls.parquet');
    await query(`COPY (SELECT * FROM (VALUES (NULL), ('no-such-call'), (NULL)) AS t(call_id)) TO ${sqlString(withNulls)} (FORMAT parquet)`);
    const nulls = runCliJson<Record<string, any>>(['dedupe', tree, '--keep-list', withNulls, '--dry-run', '--json']);
    assert.deepEqual(
      { listed: nulls.keep_list.listed, not_found: nulls.keep_list.not_found_ids.map((e: any) => [e.id, e.line]), malformed: nulls.keep_list.malformed_lines.map((e: any) => [e.id, e.line]) },
      { listed: 1, not_found: [['no-such-call', 2]], malformed: [['NULL', 1], ['NULL', 3]] },
    );
    const missing = runCli(['dedupe', tree, '--keep-list', path.join(work, 'missing.txt'), '--dry-run']);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--keep-list .*missing\.txt: no such file/);
  });
});

describe('traces sql', () => {
  let work: string;
  let idx: string;
  const Q = "SELECT status, count(*) AS n, sum(cost_usd) AS cost FROM records GROUP BY status ORDER BY status";

  before(() => {
    work = tempDir('traces-sql-');
    idx = path.join(work, 'samples.parquet');
    index([SAMPLES], idx);
  });

  it('answers the same from roots and from --index, as a table, JSON or CSV', () => {
    const fromRoots = runCli(['sql', Q, SAMPLES, '--json']);
    assert.equal(fromRoots.status, 0, fromRoots.stderr);
    const rows = JSON.parse(fromRoots.stdout) as { status: string; n: number; cost: number | null }[];
    const stats = runCliJson<Record<string, number>>(['stats', SAMPLES]);
    assert.deepEqual(
      rows.map((r) => [r.status, r.n]),
      (['exception', 'no_output', 'ok'] as const).filter((s) => stats[s] > 0).map((s) => [s, stats[s]]),
    );
    const fromIndex = runCli(['sql', Q, '--index', idx, '--json']);
    assert.deepEqual(JSON.parse(fromIndex.stdout), rows);
    const csv = runCli(['sql', Q, '--index', idx, '--csv']);
    assert.equal(csv.status, 0);
    const lines = csv.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'status,n,cost');
    // A sum of doubles prints to the 15 digits a double holds (--json keeps the engine's double).
    const shown = (cost: number | null) => (cost === null ? null : String(Number(cost.toPrecision(15))));
    assert.deepEqual(lines.slice(1), rows.map((r) => `${r.status},${r.n},${shown(r.cost) ?? ''}`));
    const table = runCli(['sql', Q, '--index', idx]);
    assert.equal(table.status, 0);
    const tableLines = table.stdout.trimEnd().split('\n');
    assert.match(tableLines[0], /^status\s+n\s+cost$/);
    assert.match(tableLines[1], /^─+  ─+  ─+$/);
    for (const r of rows) assert.ok(tableLines.some((l) => l.startsWith(r.status) && l.includes(` ${r.n}`) && l.includes(shown(r.cost) ?? 'NULL')));
    assert.equal(tableLines.at(-1), `(${rows.length} rows)`);
  });

  it('prints sums of doubles without the noise of their rounding, in the table and CSV', () => {
    const query = 'SELECT program, sum(cost_usd) AS cost FROM records GROUP BY 1 ORDER BY 1';
    const json = JSON.parse(runCli(['sql', query, '--index', idx, '--json']).stdout) as { program: string; cost: number }[];
    assert.ok(json.some((r) => String(r.cost).length > 17), `a sum shows float noise in the engine's double: ${JSON.stringify(json)}`);
    const table = runCli(['sql', query, '--index', idx]).stdout;
    const csv = runCli(['sql', query, '--index', idx, '--csv']).stdout;
    for (const r of json) {
      const shown = String(Number(r.cost.toPrecision(15)));
      assert.ok(shown.length < String(r.cost).length || shown === String(r.cost));
      assert.match(table, new RegExp(`^${r.program}\\s+${shown.replace('.', '\\.')}$`, 'm'));
      assert.ok(csv.includes(`${r.program},${shown}\n`), csv);
    }
    assert.doesNotMatch(table + csv, /\d{16,}/);
  });

  it('a keyword as a bare column alias (sum(cost_usd) cost) is a parser error that says the fix: AS cost', () => {
    const bad = runCli(['sql', 'SELECT program, sum(cost_usd) cost FROM records GROUP BY 1', '--index', idx]);
    assert.equal(bad.status, 2);
    assert.equal(bad.stderr, 'traces: query failed: Parser Error: syntax error at or near "cost" (cost is a keyword of DuckDB\'s SQL: to name a column cost, write AS cost after its expression, or quote it: "cost")\n');
    assert.equal(runCli(['sql', 'SELECT program, sum(cost_usd) AS cost FROM records GROUP BY 1', '--index', idx]).status, 0);
    // Another word gets no such hint.
    assert.doesNotMatch(runCli(['sql', 'SELEC nope', '--index', idx]).stderr, /keyword/);
  });

  it('quotes CSV fields and escapes control characters in the table', () => {
    const csv = runCli(['sql', "SELECT 'a,b' AS x, 'say \"hi\"' AS y, NULL AS w, 12345678901234567890::HUGEINT AS big", '--index', idx, '--csv']);
    assert.equal(csv.status, 0, csv.stderr);
    assert.equal(csv.stdout, 'x,y,w,big\n"a,b","say ""hi""",,12345678901234567890\n');
    const json = runCli(['sql', 'SELECT 12345678901234567890::HUGEINT AS big, 42::BIGINT AS small', '--index', idx, '--json']);
    assert.deepEqual(JSON.parse(json.stdout), [{ big: '12345678901234567890', small: 42 }]);
    const table = runCli(['sql', "SELECT chr(10) || 'x' AS t", '--index', idx]);
    assert.match(table.stdout, /\\nx/);
  });

  it('prints every row of a big answer with --csv and --json, as it comes; a table shows the first 10,000 and counts the rest', () => {
    const query = 'SELECT range AS n FROM range(25000)';
    const csv = runCli(['sql', query, '--index', idx, '--csv']);
    assert.equal(csv.status, 0, csv.stderr);
    const lines = csv.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 25001);
    assert.deepEqual([lines[0], lines[1], lines[25000]], ['n', '0', '24999']);
    const json = runCli(['sql', query, '--index', idx, '--json']);
    const rows = JSON.parse(json.stdout) as { n: number }[];
    assert.equal(rows.length, 25000);
    assert.deepEqual([rows[0], rows[24999]], [{ n: 0 }, { n: 24999 }]);
    const table = runCli(['sql', query, '--index', idx]).stdout.trimEnd().split('\n');
    assert.equal(table.length, 2 + 10000 + 2);
    assert.equal(table.at(-3)!.trim(), '9999');
    assert.deepEqual(table.slice(-2), ['… 15,000 more rows not shown: print them all with --csv or --json', '(25,000 rows)']);
    // An error met while the rows come is the same one line as an error before them.
    const late = runCli(['sql', "SELECT CASE WHEN range < 5000 THEN range ELSE CAST('x' || range AS INTEGER) END AS n FROM range(10000)", '--index', idx, '--csv']);
    assert.equal(late.status, 2);
    assert.match(late.stderr, /^traces: query failed: Conversion Error: [^\n]*\n$/);
  });

  it('reports a bad query, a missing index and conflicting options in one line, exit 2', () => {
    const bad = runCli(['sql', 'SELEC nope', '--index', idx]);
    assert.equal(bad.status, 2);
    assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    assert.match(bad.stderr, /^traces: query failed: Parser Error: syntax error at or near "SELEC"/);
    const unknown = runCli(['sql', 'SELECT nope FROM records', SAMPLES]);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr.trim().split('\n').at(-1)!, /^traces: query failed: Binder Error: Referenced column "nope" not found/);
    assert.doesNotMatch(unknown.stderr, /\n\s+at /, 'no stack trace');
    const missing = runCli(['sql', 'SELECT 1', '--index', path.join(work, 'nowhere.parquet')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--index .*nowhere\.parquet: no such file or folder/);
    const notParquet = path.join(work, 'text.parquet');
    writeFileSync(notParquet, 'hello');
    const broken = runCli(['sql', 'SELECT 1 FROM records', '--index', notParquet]);
    assert.equal(broken.status, 2);
    assert.match(broken.stderr, /not a readable Parquet index/);
    assert.equal(runCli(['sql', 'SELECT 1', '--index', idx, '--json', '--csv']).status, 2);
    assert.equal(runCli(['sql', 'SELECT 1', SAMPLES, '--index', idx]).status, 2);
  });

  it('a query of no statement (blank, comments, semicolons) says so in one line, where the engine said "Error in native callback"', () => {
    for (const query of ['', '   ', ';', ' ; ;\n', '/* nothing */', '-- nothing\n;']) {
      for (const where of [['--index', idx], [SAMPLES]]) {
        const run = runCli(['sql', '--', query, ...where]);
        assert.equal(run.status, 2, JSON.stringify(query));
        assert.equal(run.stderr, 'traces: query failed: no statement to run: give one, e.g. "SELECT status, count(*) FROM records GROUP BY 1"\n', JSON.stringify(query));
      }
    }
    // A comment or '--' inside a statement leaves a statement.
    assert.equal(runCli(['sql', "SELECT '--' AS a /* c */", '--index', idx, '--csv']).stdout, 'a\n--\n');
  });

  it('reads the index only: a query writes no file (over a trace or the index) and reads no other, and cannot lift that', () => {
    const tree = path.join(tempDir('traces-sql-'), 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    const traceFile = path.join(tree, 'my_program', 'generator', readdirSync(path.join(tree, 'my_program', 'generator')).find((f) => f.endsWith('.jsonl'))!);
    const traceBefore = readFileSync(traceFile);
    const indexBefore = readFileSync(idx);
    const secret = path.join(work, 'secret.txt');
    writeFileSync(secret, 'not for queries\n');
    const elsewhere = path.join(work, 'written-by-a-query.csv');
    const attempts: [string, string[]][] = [
      [`COPY (SELECT 1 AS x) TO ${sqlString(traceFile)} (FORMAT csv)`, [tree]],
      [`COPY (SELECT * FROM records) TO ${sqlString(idx)}`, ['--index', idx]],
      [`COPY (SELECT 1 AS x) TO ${sqlString(elsewhere)} (FORMAT csv)`, ['--index', idx]],
      [`EXPORT DATABASE ${sqlString(path.join(work, 'exported'))}`, ['--index', idx]],
      [`ATTACH ${sqlString(path.join(work, 'attached.db'))}`, ['--index', idx]],
      [`SELECT * FROM read_text(${sqlString(secret)})`, ['--index', idx]],
      [`SELECT * FROM read_text(${sqlString(secret)})`, [tree]],
      ['SET enable_external_access = true', ['--index', idx]],
      ['INSTALL httpfs', ['--index', idx]],
    ];
    for (const [query, where] of attempts) {
      const run = runCli(['sql', query, ...where]);
      assert.equal(run.status, 2, `${query}: ${run.stderr}`);
      assert.match(run.stderr.trim().split('\n').at(-1)!, /^traces: (query failed: .*(Permission Error|locked)|\w[\w ]* is not allowed: traces sql reads the records and writes nothing)/, query);
      assert.doesNotMatch(run.stderr, /not for queries/);
    }
    assert.ok(readFileSync(traceFile).equals(traceBefore), 'the trace file is unchanged');
    assert.ok(readFileSync(idx).equals(indexBefore), 'the index is unchanged');
    for (const name of ['written-by-a-query.csv', 'exported', 'attached.db']) assert.equal(existsSync(path.join(work, name)), false, name);
    // Queries that only read, in several statements, still run.
    const script = runCli(['sql', "CREATE TEMP TABLE ok AS SELECT * FROM records WHERE status = 'ok'; SELECT count(*) AS n FROM ok", '--index', idx, '--json']);
    assert.equal(script.status, 0, script.stderr);
    assert.ok((JSON.parse(script.stdout) as { n: number }[])[0]!.n > 0);
  });

  it("is confined by the engine's locked configuration: no escape reads or writes a file of the user's, with --index FILE or DIR", () => {
    const place = tempDir('traces-sql-sandbox-');
    const scratchHome = tempDir('traces-sql-tmp-');
    cpSync(idx, path.join(place, 'idx.parquet'));
    index([SAMPLES], path.join(place, 'dir') + path.sep);
    // The engine's default temp_directory is .tmp in the working folder, and the engine always allows it.
    mkdirSync(path.join(place, '.tmp'));
    writeFileSync(path.join(place, '.tmp', 'notes.txt'), 'private notes\n');
    const before = new Map(['idx.parquet', path.join('dir', 'part-0.parquet')].map((name) => [name, readFileSync(path.join(place, name))]));
    const attempts: [string, string][] = [
      ["PREPARE p AS COPY (SELECT 1 AS a) TO 'idx.parquet' (FORMAT parquet, USE_TMP_FILE false); EXECUTE p", 'idx.parquet'],
      ["PREPARE p AS COPY (SELECT 1 AS a) TO 'dir/part-0.parquet' (FORMAT parquet, USE_TMP_FILE false); EXECUTE p", 'dir'],
      ["EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO 'idx.parquet' (FORMAT parquet, USE_TMP_FILE false)", 'idx.parquet'],
      ["COPY (SELECT 1 AS a) TO 'dir/part-1.parquet'", 'dir'],
      ["SELECT * FROM read_text('.tmp/notes.txt')", 'idx.parquet'],
      ["SELECT * FROM read_text('.tmp/notes.txt')", 'dir'],
      ["SELECT * FROM read_csv('/etc/passwd', sep = ':')", 'idx.parquet'],
      ["SELECT * FROM glob('/*')", 'idx.parquet'],
      ["SELECT * FROM glob('*')", 'dir'],
      ["ATTACH 'attached.db'", 'idx.parquet'],
      ['INSTALL httpfs', 'idx.parquet'],
      ['LOAD httpfs', 'idx.parquet'],
      ['SET threads = 1', 'idx.parquet'],
      ['RESET temp_directory', 'idx.parquet'],
      ["PRAGMA enable_external_access = true", 'idx.parquet'],
      ["COPY records TO 'written.csv'", 'idx.parquet'],
      ["EXPORT DATABASE 'exported'", 'dir'],
      ["SELECT 1; COPY (SELECT 1 AS a) TO 'idx.parquet' (FORMAT parquet, USE_TMP_FILE false)", 'idx.parquet'],
    ];
    for (const [query, where] of attempts) {
      const run = runCli(['sql', query, '--index', where], { cwd: place, env: { TMPDIR: scratchHome } });
      assert.equal(run.status, 2, `${query}: ${run.stdout}${run.stderr}`);
      const lines = run.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `${query}: ${run.stderr}`);
      assert.match(lines[0]!, /^traces: (query failed: .*(Permission Error|locked)|\w[\w ]* is not allowed: traces sql reads the records and writes nothing)/, query);
      assert.doesNotMatch(run.stdout + run.stderr, /private notes|root:/, query);
    }
    for (const [name, bytes] of before) assert.ok(readFileSync(path.join(place, name)).equals(bytes), `${name} is unchanged`);
    assert.deepEqual(readdirSync(place).sort(), ['.tmp', 'dir', 'idx.parquet']);
    assert.deepEqual(readdirSync(path.join(place, 'dir')), ['part-0.parquet']);
    assert.deepEqual(readdirSync(scratchHome), [], 'the run removes its own temp folder');
    // Reading still works, from a file and from a folder, relative to the working folder.
    for (const where of ['idx.parquet', 'dir']) {
      const run = runCli(['sql', "SELECT count(*) AS n FROM records WHERE status = 'ok'", '--index', where, '--json'], { cwd: place, env: { TMPDIR: scratchHome } });
      assert.equal(run.status, 0, run.stderr);
      assert.ok((JSON.parse(run.stdout) as { n: number }[])[0]!.n > 0);
    }
    assert.deepEqual(readdirSync(scratchHome), []);
  });

  it('leaves no scratch folder behind and does not load DuckDB for other commands', () => {
    const probe = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `import { main } from ${JSON.stringify(path.join(REPO, 'dist', 'src', 'cli.js'))}; await main(['node', 'traces', 'stats', ${JSON.stringify(SAMPLES)}, '--json']); const loaded = Object.keys((await import('node:module')).createRequire(import.meta.url).cache).filter((k) => k.includes('duckdb')); process.stderr.write('LOADED=' + loaded.length + '\\n');`],
      { encoding: 'utf8' },
    );
    assert.match(probe.stderr, /LOADED=0/);
  });
});

describe('traces sql: the engine cannot take the command with it (issue 39)', () => {
  let work: string;
  let idx: string;
  /** Longer than any test (hours): the sum of 10^14 numbers' remainders by 7, which no integer overflow ends early. */
  const LONG = 'SELECT sum(x % 7) AS s FROM range(100000000000000) t(x)';

  before(() => {
    work = tempDir('traces-sql-child-');
    idx = path.join(work, 'samples.parquet');
    index([SAMPLES], idx);
  });

  it('an exception the engine does not catch (file logging under the locked configuration) is one line, exit 2, and its scratch folder goes', () => {
    const queries = [
      "CALL enable_logging(storage='file', storage_path='/tmp/traces-log'); SELECT count(*) FROM records",
      "CALL enable_logging(level='trace', storage='file', storage_path='logs'); SELECT status FROM records",
    ];
    for (const query of queries) {
      for (const where of [['--index', idx], [SAMPLES]]) {
        for (const form of [[], ['--json'], ['--csv']]) {
          const tmp = tempDir('traces-sql-tmp-');
          const run = runCli(['sql', query, ...where, ...form], { env: { ...UNWRAPPED.env, TMPDIR: tmp } });
          assert.equal(run.status, 2, `${query}: ${run.stderr}`);
          const lines = run.stderr.trim().split('\n').filter((l) => !/damaged line|skipped \d+ files/.test(l));
          assert.equal(lines.length, 1, run.stderr);
          assert.match(lines[0]!, /^traces: query failed: Permission Error: Cannot access directory .* file system operations are disabled/);
          assert.doesNotMatch(run.stderr, /terminate called|what\(\)/);
          if (form[0] === '--json') assert.equal((JSON.parse(run.stdout) as { exit_code: number }).exit_code, 2);
          assert.deepEqual(readdirSync(tmp), [], 'no scratch folder left');
        }
      }
    }
    assert.equal(existsSync('/tmp/traces-log'), false);
  });

  it('--timeout stops a long query: one line, exit 2, nothing left behind; a bad value is refused', () => {
    const tmp = tempDir('traces-sql-tmp-');
    const run = runCli(['sql', LONG, '--index', idx, '--timeout', '0.5'], { env: { TMPDIR: tmp } });
    assert.equal(run.status, 2, run.stderr);
    assert.equal(run.stderr, 'traces: query stopped: it ran longer than --timeout 0.5 s; narrow it, or give it more time\n');
    assert.deepEqual(readdirSync(tmp), []);
    for (const bad of ['0', '-1', 'soon']) {
      const refused = runCli(['sql', 'SELECT 1', '--index', idx, '--timeout', bad]);
      assert.equal(refused.status, 2);
      assert.match(refused.stderr, /--timeout .*: give the seconds a query may run/);
    }
    // A query that ends in time answers as without it.
    assert.equal(runCli(['sql', 'SELECT 1 AS a', '--index', idx, '--csv', '--timeout', '60']).stdout, 'a\n1\n');
  });

  /** CPU seconds the processes of a process group have used (Linux /proc). */
  const cpuSeconds = (group: number): number => {
    const pids = spawnSync('pgrep', ['-g', String(group)], { encoding: 'utf8' }).stdout.split('\n').filter((p) => p !== '');
    let ticks = 0;
    for (const pid of pids) {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
        ticks += Number(fields[11]) + Number(fields[12]);
      } catch {
        // Gone meanwhile.
      }
    }
    return ticks / 100;
  };

  it('Ctrl-C stops a running query at once: exit 130, nothing left behind, no process left', { timeout: 30_000, skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
    const tmp = tempDir('traces-sql-tmp-');
    const child = spawn(process.execPath, [path.join(REPO, 'bin', 'traces.js'), 'sql', LONG, '--index', idx], {
      env: { ...process.env, TMPDIR: tmp },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // A run that does not stop fails the test at its limit, and is then killed, not left running.
    t.signal.addEventListener('abort', () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    });
    try {
      // The query is under way once the engine has its copy of the index and has worked a while (CPU it used, not time gone by).
      const copied = () => readdirSync(tmp).some((d) => existsSync(path.join(tmp, d, 'index')));
      while (!copied() || cpuSeconds(child.pid!) < 1.5) await new Promise((resolve) => setTimeout(resolve, 20));
      // As a terminal sends it: to the whole process group.
      process.kill(-child.pid!, 'SIGINT');
      assert.equal(await closed, 130, stderr);
    } finally {
      // Whatever failed above: no run of this test is left running.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    assert.match(stderr, /traces: interrupted/);
    assert.deepEqual(readdirSync(tmp), []);
    // The engine's process was killed, so ends without running anything; init reaps it (a hung one would time the test out).
    while (spawnSync('pgrep', ['-g', String(child.pid)]).status === 0) await new Promise((resolve) => setImmediate(resolve));
  });
});

