/**
 * Issue 38's property: the curation stages agree. Every combination of --key, --near-duplicates,
 * --trajectories, --keep, --quality, --group-by and --against (and the targets that refuse
 * records, hf's Parquet and JSONL folders, the preference formats with and without --scores and
 * --min-margin, and dedupe/filter) on our samples, the trees the real Synalinks Recorder wrote
 * (retried and scored calls among them), real Ask recordings and generated trees with agent
 * runs, repeats, planted near-duplicates and planted pairs: every drop that names a kept record
 * leads to a record in the output, and every record is in the output or in the manifest, never
 * both. The combinations run in stage-agreement-runner.ts, one process per tree, side by side.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { FIXTURES, generatedTree, REPO, runCli, SAMPLES, tempDir } from './helpers.js';
import { brokenChains, type RunVerdict } from './stage-agreement-runner.js';

const RUNNER = path.join(REPO, 'dist', 'test', 'stage-agreement-runner.js');

interface TreeRuns {
  /** Every combination of the export variants (see the runner). */
  full?: boolean;
  /** The preference formats too (the tree holds answers to pair), or, `only`, those alone. */
  pairs?: boolean | 'only';
  /** The tree's own scores, for --scores (else the runner scores the records itself). */
  scores?: string;
}

/**
 * Counts the reads of each file a command makes in full (a probe of its head aside): a module
 * preloaded into the command, in one thread (TRACES_WORKERS=0), counts its opens by caller.
 */
function openCounter(): { env: NodeJS.ProcessEnv; counts: () => Record<string, number> } {
  const dir = tempDir('traces-opens-');
  const hook = path.join(dir, 'count-opens.mjs');
  const counts = path.join(dir, 'counts.json');
  writeFileSync(
    hook,
    [
      "import fs, { writeFileSync } from 'node:fs';",
      "import { syncBuiltinESMExports } from 'node:module';",
      'const counts = {};',
      'const open = fs.openSync;',
      'fs.openSync = function (file, ...rest) {',
      "  if (!/sources[\\/]head\\.js/.test(new Error().stack ?? '')) counts[String(file)] = (counts[String(file)] ?? 0) + 1;",
      '  return open.call(this, file, ...rest);',
      '};',
      'syncBuiltinESMExports();',
      `process.on('exit', () => writeFileSync(${JSON.stringify(counts)}, JSON.stringify(counts)));`,
    ].join('\n'),
  );
  return {
    env: { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}`, TRACES_WORKERS: '0' },
    counts: () => JSON.parse(readFileSync(counts, 'utf8')) as Record<string, number>,
  };
}

function verdicts(tree: string, { full = false, pairs = false, scores }: TreeRuns): Promise<RunVerdict[]> {
  const work = tempDir('traces-agreement-');
  const result = path.join(work, 'verdicts.json');
  const flags = [...(full ? ['full'] : []), ...(pairs === 'only' ? ['pairs-only'] : pairs ? ['pairs'] : []), ...(scores !== undefined ? [`scores=${scores}`] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, tree, work, result, ...flags], { stdio: ['ignore', 'ignore', 'pipe'], cwd: work, env: { ...process.env, TRACES_WORKERS: '0' } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`runner exited ${code}: ${stderr.slice(-2000)}`));
      resolve(JSON.parse(readFileSync(result, 'utf8')) as RunVerdict[]);
    });
  });
}

/**
 * The genuine retried and scored calls, and beside them the same calls as a second program
 * records them (program renamed, call_ids changed: the Recorder hashes neither), with their
 * scores: with the default key, each pair of the second program is the same row as one of the
 * first (duplicate_example, naming on each side the record of the row written before).
 */
function pairsTreeTwice(): { tree: string; scores: string } {
  const source = path.join(FIXTURES, 'genuine-pairs');
  const dir = tempDir('traces-pairs-twice-');
  const tree = path.join(dir, 'tree');
  cpSync(path.join(source, 'tree'), tree, { recursive: true });
  const again = (text: string): string => text.replace(/\b([0-9a-f]{8})(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/g, (_, head: string, rest: string) => `${(0xffffffff - parseInt(head, 16)).toString(16).padStart(8, '0')}${rest}`);
  for (const program of readdirSync(path.join(source, 'tree'))) {
    for (const module of readdirSync(path.join(source, 'tree', program))) {
      mkdirSync(path.join(tree, `${program}_again`, module), { recursive: true });
      for (const file of readdirSync(path.join(source, 'tree', program, module))) {
        const text = readFileSync(path.join(source, 'tree', program, module, file), 'utf8');
        writeFileSync(path.join(tree, `${program}_again`, module, file), again(text).replaceAll(`"program":"${program}"`, `"program":"${program}_again"`));
      }
    }
  }
  const scores = path.join(dir, 'scores.jsonl');
  const original = readFileSync(path.join(source, 'scores.jsonl'), 'utf8');
  writeFileSync(scores, original + again(original));
  return { tree, scores };
}

function assertAgreement(runs: RunVerdict[]): void {
  const broken = runs.filter((run) => run.broken.length > 0).map((run) => `traces ${run.args.join(' ')}\n  ${run.broken.slice(0, 4).join('\n  ')}`);
  assert.deepEqual(broken, [], `${broken.length} of ${runs.length} runs lose records`);
  // Each run either wrote an output or refused with a meaning (1: nothing to write); never a crash.
  const crashed = runs.filter((run) => run.exit !== 0 && run.exit !== 1).map((run) => `exit ${run.exit}: traces ${run.args.join(' ')}`);
  assert.deepEqual(crashed, []);
  // The property says something: these trees hold chains to follow.
  assert.ok(runs.reduce((n, run) => n + run.chains, 0) > runs.length, 'few drops name a kept record');
}

describe('the curation stages agree: every drop that names a kept record leads to the output', { concurrency: true }, () => {
  // Every combination on the generated tree (agent runs, repeats, planted near-duplicates); on
  // the others, every combination of the comparing stages' options (see the runner).
  const pairsTwice = pairsTreeTwice();
  const trees: [string, () => string, TreeRuns][] = [
    ['the samples', () => SAMPLES, {}],
    ['a generated tree with agent runs, repeats and near-duplicates', () => generatedTree({ mb: 0.4, seed: 38, profile: 'small', plantNearDuplicates: true }).tree, { full: true }],
    ['a tree the real Recorder wrote (orjson 3.8)', () => path.join(FIXTURES, 'genuine', 'bare-exponent', 'tree'), {}],
    ['a tree the real Recorder wrote (orjson 3.12)', () => path.join(FIXTURES, 'genuine', 'plus-exponent', 'tree'), {}],
    ['real Ask recordings', () => path.join(FIXTURES, 'ask'), {}],
    // Retried and scored calls: the preference formats' pairs, the rows they cannot write, and rows written twice.
    ['a tree the real Recorder wrote of retried and scored calls, and the same calls by a second program', () => pairsTwice.tree, { pairs: 'only', scores: pairsTwice.scores }],
    ['a generated tree with planted pairs and scores', () => generatedTree({ mb: 0.4, seed: 3, plantPairs: true }).tree, { pairs: true, scores: `${generatedTree({ mb: 0.4, seed: 3, plantPairs: true }).tree}.scores.jsonl` }],
  ];
  for (const [name, tree, runs] of trees) it(name, async () => assertAgreement(await verdicts(tree(), runs)));

  it('a run whose last steps the target refuses is exported up to the steps it takes, in one plan that reads each file twice', () => {
    // NeMo Customizer takes no tool results: the math agent's runs hold them from their second step on.
    const out = path.join(tempDir(), 'out');
    const opens = openCounter();
    const result = runCli(['export', SAMPLES, '--format', 'nemo-customizer', '--out', out, '--json'], { env: opens.env });
    assert.equal(result.status, 0, result.stderr);
    // The target's verdict is a stage of the plan: no pass again, and each file is read by the plan and for its kept records only.
    assert.doesNotMatch(result.stderr, /\(pass \d+\)/);
    const reads = opens.counts();
    const recordFiles = Object.keys(reads).filter((file) => file.includes(`${path.sep}math_agent${path.sep}`));
    assert.equal(recordFiles.length, 2, JSON.stringify(reads));
    // A file with kept records is read twice; one whose records the target all refused, once.
    for (const file of recordFiles) assert.ok(reads[file] === 1 || reads[file] === 2, `${file} read ${reads[file]} times`);
    assert.equal(reads[recordFiles.find((file) => file.includes('tool_calls_generator'))!], 2);
    const exported = readFileSync(path.join(out, '_traces', 'examples.jsonl'), 'utf8');
    // The two runs' first steps, which end at the tool call (their call_ids in samples/synalinks/math_agent).
    for (const id of ['5ab33be9-979d-454a-b42a-b7a512a4c08f', 'cc4eadc0-55db-4156-946a-bfb3cb1c7f3e']) assert.ok(exported.includes(id), id);
    const report = JSON.parse(result.stdout) as { kept_after_curation: number; examples: { training: number; validation: number }; dropped: Record<string, number>; warnings: string[] };
    assert.equal(report.dropped.not_representable, 7);
    assert.equal(report.kept_after_curation, report.examples.training + report.examples.validation + report.dropped.not_representable);
    assert.ok(report.warnings.some((w) => w.includes('each run is exported up to its last step that has none')), report.warnings.join('\n'));
  });

  it('the checker itself finds a cycle, a chain to a dropped record and one to nowhere', () => {
    const drops = [
      { call_id: 'final', reason: 'near_duplicate', kept: 'step' },
      { call_id: 'step', reason: 'prefix', kept: 'final' },
      { call_id: 'copy', reason: 'duplicate', kept: 'long' },
      { call_id: 'long', reason: 'too_long' },
      { call_id: 'other', reason: 'duplicate', kept: 'gone' },
      { call_id: 'fine', reason: 'duplicate', kept: 'kept' },
    ];
    const { broken, chains } = brokenChains(drops, new Set(['kept']));
    assert.equal(chains, 5);
    assert.deepEqual(broken, [
      'near_duplicate final → step: a cycle',
      'prefix step → final: a cycle',
      'duplicate copy → long: dropped as too_long',
      'duplicate other → gone: in no output',
    ]);
  });
});
