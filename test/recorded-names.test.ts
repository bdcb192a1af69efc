/**
 * Every text derived from recorded text is scrubbed as the recorded text is: a key recorded as
 * a program, module, model, tool, service or span name (a Synalinks tree, an Ask recording, a
 * klieo capture, OTLP spans) reaches no output of any command (plain text, --json, --csv, the
 * files it writes, their names) that does not show the recorded text itself. Table-driven: a
 * new command or output form is one line of COMMANDS.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { Engine } from '../src/engine/duckdb.js';
import { leaksIn, leaksInFiles, secretBodies, writtenFiles } from './leaks.js';
import { KEYS, PLANTED, plantedTree } from './planted-names.js';

const BODIES = secretBodies(PLANTED);
import { runCli, tempDir, type CliResult } from './helpers.js';

/** Parquet rows (and the file's key-value metadata) as text, so a key in a column is seen. */
async function parquetText(file: string): Promise<string | null> {
  if (!file.endsWith('.parquet')) return null;
  const engine = await Engine.open(null, { threads: 1 });
  try {
    const quoted = `'${file.replaceAll("'", "''")}'`;
    const rows = await engine.query(`SELECT * FROM read_parquet(${quoted})`);
    const meta = await engine.query(`SELECT decode(key), decode(value) FROM parquet_kv_metadata(${quoted})`);
    const text = (value: unknown) => JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    return [text(rows.columns), text(rows.rows), text(meta.rows), readFileSync(file, 'latin1')].join('\n');
  } finally {
    engine.close();
  }
}

interface Context {
  tree: string;
  /** A fresh folder of this case's own, for what it writes. */
  dir: string;
}

interface Case {
  /** The command line, as the test names it. */
  name: string;
  args: (c: Context) => string[];
  /** What the command writes, walked for keys (a folder or a file below `dir`). */
  writes?: (c: Context) => string;
  /** Standard input. */
  input?: (c: Context) => string;
}

const out = (c: Context, name = 'out') => path.join(c.dir, name);

/** Runs the index, keep-list and tool inference map reads its lists from. */
function mapInputs(c: Context): string[] {
  const index = path.join(c.dir, 'index');
  runOk(['index', c.tree, '--format', 'openai', '--out', `${index}/`]);
  runOk(['keep-list', index, '--out', path.join(c.dir, 'keep.parquet'), '--tools-out', path.join(c.dir, 'tools.json')]);
  return ['--keep-list', path.join(c.dir, 'keep.parquet'), '--inferred-tools', path.join(c.dir, 'tools.json')];
}

function runOk(args: string[]): CliResult {
  const result = runCli(args);
  assert.ok(result.status === 0 || result.status === 1, `${args.join(' ')}: exit ${result.status}\n${result.stderr}`);
  return result;
}

/** The folder of the Synalinks module, named after it (in the folder named after its program). */
const moduleFolder = (c: Context) => path.join(c.tree, 'synalinks', KEYS['synalinks program'], KEYS['synalinks module']);

/** The Synalinks lines of the tree, as map reads them on standard input. */
const synalinksInput = (c: Context) => readFileSync(path.join(moduleFolder(c), `${KEYS['synalinks module']}_20260709-120000.jsonl`), 'utf8');

const COMMANDS: Case[] = [
  ...['', '--json', '--by program', '--by module', '--by model', '--by version', '-v'].map((flags): Case => ({
    name: `stats ${flags}`,
    args: (c) => ['stats', c.tree, ...flags.split(' ').filter(Boolean)],
  })),
  ...['', '--json', '-v'].map((flags): Case => ({ name: `verify ${flags}`, args: (c) => ['verify', c.tree, ...flags.split(' ').filter(Boolean)] })),
  ...['', '--json', '-v', '--sort cost'].map((flags): Case => ({ name: `runs ${flags}`, args: (c) => ['runs', c.tree, ...flags.split(' ').filter(Boolean)] })),
  ...['', '--json', '-v', '--kinds secrets,pii'].map((flags): Case => ({ name: `scan ${flags}`, args: (c) => ['scan', c.tree, ...flags.split(' ').filter(Boolean)] })),
  ...['--json', '-v', '--format openai --json', '--format openai -v'].map(
    (flags): Case => ({ name: `index --out FILE ${flags}`, args: (c) => ['index', c.tree, '--out', out(c, 'index.parquet'), ...flags.split(' ')], writes: (c) => out(c, 'index.parquet') }),
  ),
  { name: 'index --out DIR/', args: (c) => ['index', c.tree, '--out', `${out(c, 'index')}/`], writes: (c) => out(c, 'index') },
  ...['', '--json', '--csv'].map(
    (flags): Case => ({ name: `sql SELECT * ${flags}`, args: (c) => ['sql', 'SELECT * FROM records ORDER BY file, line', c.tree, ...flags.split(' ').filter(Boolean)] }),
  ),
  { name: 'sql GROUP BY program, module, model', args: (c) => ['sql', 'SELECT program, module, model, count(*) AS n FROM records GROUP BY ALL ORDER BY ALL', c.tree] },
  ...['--json', ''].map(
    (flags): Case => ({
      name: `keep-list --out --tools-out ${flags}`,
      args: (c) => {
        runOk(['index', c.tree, '--format', 'openai', '--out', `${out(c, 'index')}/`]);
        return ['keep-list', out(c, 'index'), '--out', out(c, 'keep.parquet'), '--tools-out', out(c, 'tools.json'), ...flags.split(' ').filter(Boolean)];
      },
      writes: (c) => c.dir,
    }),
  ),
  ...['', '--json'].map(
    (flags): Case => ({
      name: `map --format openai ${flags}`,
      args: (c) => ['map', '--format', 'openai', ...mapInputs(c), ...flags.split(' ').filter(Boolean)],
      input: synalinksInput,
      writes: (c) => c.dir,
    }),
  ),
  ...['openai', 'nemo', 'nemo-customizer', 'hf'].flatMap((format) =>
    ['none', 'module'].map(
      (groupBy): Case => ({
        name: `export --format ${format} --group-by ${groupBy} --json`,
        args: (c) => ['export', c.tree, '--format', format, '--out', out(c), '--trajectories', 'all', '--group-by', groupBy, '--validation-fraction', '0.2', '--json'],
        writes: (c) => out(c),
      }),
    ),
  ),
  ...['openai-preference', 'hf-preference', 'nemo-preference'].map(
    (format): Case => ({ name: `export --format ${format} --json`, args: (c) => ['export', c.tree, '--format', format, '--out', out(c), '--json'], writes: (c) => out(c) }),
  ),
  { name: 'export --format hf (Parquet)', args: (c) => ['export', c.tree, '--format', 'hf', '--out', out(c), '--group-by', 'module'], writes: (c) => out(c) },
  { name: 'export --format ask-recording --json', args: (c) => ['export', c.tree, '--format', 'ask-recording', '--out', out(c), '--trajectories', 'all', '--json'], writes: (c) => out(c) },
  { name: 'export --format openai -v', args: (c) => ['export', c.tree, '--format', 'openai', '--out', out(c), '-v'], writes: (c) => out(c) },
  ...['-v', '--json', ''].map((flags): Case => ({ name: `export --dry-run ${flags}`, args: (c) => ['export', c.tree, '--format', 'openai', '--dry-run', ...flags.split(' ').filter(Boolean)] })),
  ...['openai', 'hf'].flatMap((format) =>
    ['', '--json'].map(
      (flags): Case => ({
        name: `validate --format ${format} (an export) ${flags}`,
        args: (c) => {
          runOk(['export', c.tree, '--format', format, '--out', out(c), '--trajectories', 'all', '--group-by', 'module', '--validation-fraction', '0.5']);
          // openai's files one by one (every dataset), hf's folder.
          const files = format === 'hf' ? [out(c)] : writtenFiles(out(c)).filter((file) => file.endsWith('.jsonl') && !file.includes('_traces'));
          return ['validate', ...files, '--format', format, ...flags.split(' ').filter(Boolean)];
        },
      }),
    ),
  ),
  // A program or module folder named as the root: its own name is a key too.
  ...[
    ['stats', '--json'],
    ['stats', '-v'],
    ['runs', '--json'],
    ['verify', '--json'],
    ['scan', '--json'],
    ['sql', 'SELECT * FROM records', '--csv'],
    ['export', '--format', 'openai', '--dry-run', '-v'],
  ].map((command): Case => ({
    name: `${command.join(' ')} (root: the module folder)`,
    args: (c) => (command[0] === 'sql' ? [command[0], command[1], moduleFolder(c), ...command.slice(2)] : [command[0], moduleFolder(c), ...command.slice(1)]),
  })),
  { name: 'index --json (root: the module folder)', args: (c) => ['index', moduleFolder(c), '--out', out(c, 'index.parquet'), '--json'], writes: (c) => out(c, 'index.parquet') },
  // dedupe and filter copy the records byte for byte (their copies hold the recorded text by
  // design, names included); what they print holds none of it, so it is scrubbed.
  ...['dedupe', 'filter'].flatMap((command) =>
    ['--dry-run', '--dry-run -v', '--dry-run --json', '--json', '-v'].map(
      (flags): Case => ({ name: `${command} ${flags}`, args: (c) => [command, c.tree, ...(flags.includes('--dry-run') ? [] : ['--out', out(c)]), ...flags.split(' ')] }),
    ),
  ),
];

describe('keys recorded as names reach no output of any command', () => {
  let tree = '';
  before(() => {
    tree = plantedTree();
  });

  it('every planted key is in the tree, and every recorder reads its records', () => {
    const all = runCli(['export', tree, '--format', 'openai', '--dry-run', '--json', '--scrub', 'none', '--trajectories', 'all']);
    assert.equal(all.status, 0, all.stderr);
    const sources = runCli(['sql', 'SELECT DISTINCT source FROM records ORDER BY 1', tree, '--csv', '--scrub', 'none']);
    assert.equal(sources.stdout, 'source\nask\nklieo\notlp\nsynalinks\n', sources.stderr);
    // Unscrubbed, every place's key is seen: the oracle can see each leak.
    const raw = runCli(['sql', 'SELECT * FROM records', tree, '--json', '--scrub', 'none']);
    const seen = new Set([...leaksIn(BODIES, [raw.stdout], 'raw')].map((leak) => leak.replace(/ in raw$/, '')));
    for (const label of ['synalinks program', 'synalinks module', 'synalinks model', 'synalinks version', 'klieo agent', 'klieo run_id', 'klieo model', 'ask test', 'ask model', 'otlp service.name', 'otlp span name', 'otlp model']) {
      assert.ok(seen.has(label), `${label} is recorded as a name: ${[...seen].join(', ')}`);
    }
  });

  it('--scrub none shows the names as recorded, in every view that takes it', () => {
    for (const command of [['stats'], ['runs', '--json'], ['verify'], ['sql', 'SELECT program FROM records'], ['dedupe', '--dry-run', '-v'], ['filter', '--dry-run', '--json']]) {
      const args = command[0] === 'sql' ? [...command, tree] : [command[0], tree, ...command.slice(1)];
      const result = runCli([...args, '--scrub', 'none']);
      assert.ok(result.status === 0 || result.status === 1, `${args.join(' ')}: exit ${result.status}\n${result.stderr}`);
      assert.ok(leaksIn(BODIES, [result.stdout, result.stderr], 'out').some((leak) => leak.startsWith('synalinks ')), `${args.join(' ')} --scrub none shows the names as recorded`);
    }
  });

  for (const entry of COMMANDS) {
    it(`${entry.name}: no key in stdout, stderr or any file written`, async () => {
      const c: Context = { tree, dir: tempDir('traces-names-out-') };
      const args = entry.args(c);
      const result = runCli(args, { input: entry.input?.(c) });
      assert.ok(result.status === 0 || result.status === 1, `exit ${result.status}\n${result.stderr}`);
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
      const found = [...leaksIn(BODIES, [result.stdout], 'stdout'), ...leaksIn(BODIES, [result.stderr], 'stderr')];
      // What dedupe and filter copy is the recorded text itself.
      if (entry.writes !== undefined) found.push(...(await leaksInFiles(BODIES, entry.writes(c), parquetText)));
      assert.deepEqual(found, []);
    });
  }
});
