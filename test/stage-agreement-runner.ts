/**
 * The stage-agreement property, run in a process of its own: every combination of the
 * curation options over one tree, through the real command line's `main` (one process for
 * hundreds of runs: a process per run would take minutes), each output checked against the
 * invariant of docs/curation.md, "The order of the stages":
 *
 *   every drop that names a `kept` record leads, through `kept`, to a record in the output
 *   (an example in _traces/examples.jsonl, or a line of the dedupe/filter tree), with no cycle.
 *
 *   node dist/test/stage-agreement-runner.js TREE WORK RESULT.json [full]
 *
 * Every run crosses the comparing stages' options (--key, --near-duplicates, --trajectories,
 * --keep). `full` crosses them with --quality, --group-by and --against too (8 times the runs);
 * without it, with those three at their defaults and all three changed at once.
 *
 * The command's own output goes nowhere (the parent starts this with stdio ignored); the
 * verdicts go to RESULT.json: one row per run, with its options, exit code and the broken chains.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { main } from '../src/cli.js';

export interface RunVerdict {
  args: string[];
  exit: number;
  /** Drops whose `kept` chain ends at a record not in the output, or loops. */
  broken: string[];
  /** Drops that name a kept record. */
  chains: number;
}

export const KEYS = ['inputs,config,module', 'inputs,config', 'inputs', 'conversation'] as const;
export const NEAR = [null, '0.8', '0.9'] as const;

interface Drop {
  call_id?: string;
  reason: string;
  kept?: string;
  flagged?: true;
}

function jsonLines<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}

/** call_ids of the records a dedupe or filter tree holds (its lines are the records' own). */
function treeCallIds(dir: string, into = new Set<string>()): Set<string> {
  for (const name of readdirSync(dir)) {
    if (name === '_traces') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) treeCallIds(full, into);
    else for (const record of jsonLines<{ call_id?: string }>(full)) if (record.call_id !== undefined) into.add(record.call_id);
  }
  return into;
}

/** The drops whose `kept` chain does not end in `output`. */
export function brokenChains(drops: readonly Drop[], output: ReadonlySet<string>): { broken: string[]; chains: number } {
  const dropOf = new Map<string, Drop>();
  for (const drop of drops) if (drop.call_id !== undefined && drop.flagged !== true) dropOf.set(drop.call_id, drop);
  const broken: string[] = [];
  let chains = 0;
  for (const drop of drops) {
    if (drop.kept === undefined) continue;
    chains++;
    const met = new Set<string>();
    let at = drop.kept;
    while (!output.has(at)) {
      const next = dropOf.get(at);
      if (met.has(at) || next?.kept === undefined) {
        broken.push(`${drop.reason} ${drop.call_id} → ${at}: ${met.has(at) ? 'a cycle' : next === undefined ? 'in no output' : `dropped as ${next.reason}`}`);
        break;
      }
      met.add(at);
      at = next.kept;
    }
  }
  return { broken, chains };
}

async function run(args: string[]): Promise<number> {
  return main(['node', 'traces', ...args]);
}

async function verdict(args: string[], out: string): Promise<RunVerdict> {
  rmSync(out, { recursive: true, force: true });
  const exit = await run(args);
  const drops = jsonLines<Drop>(path.join(out, '_traces', 'manifest.jsonl'));
  const output =
    args[0] === 'export'
      ? new Set(jsonLines<{ call_id: string }>(path.join(out, '_traces', 'examples.jsonl')).map((row) => row.call_id))
      : existsSync(out)
        ? treeCallIds(out)
        : new Set<string>();
  return { args, exit, ...brokenChains(drops, output) };
}

/** --quality, --group-by and --against: every combination, or the defaults and all three changed. */
function exportVariants(full: boolean): { quality: string; groupBy: string; against: boolean }[] {
  const all = ['default', 'all'].flatMap((quality) => ['none', 'module'].flatMap((groupBy) => [false, true].map((against) => ({ quality, groupBy, against }))));
  return full ? all : [all[0], all[all.length - 1]];
}

async function propertyRuns(tree: string, work: string, full: boolean): Promise<RunVerdict[]> {
  const verdicts: RunVerdict[] = [];
  const out = path.join(work, 'out');
  for (const key of KEYS) {
    // An earlier output of part of the tree, with the same key, for --against.
    const earlier = path.join(work, `earlier-${KEYS.indexOf(key)}`);
    await run(['export', tree, '--format', 'openai', '--out', earlier, '--force', '--key', key, '--until', await midpoint(tree)]);
    for (const near of NEAR) {
      for (const trajectories of ['last', 'all']) {
        for (const keep of ['first', 'last']) {
          const curation = ['--key', key, '--trajectories', trajectories, '--keep', keep, ...(near === null ? [] : ['--near-duplicates', near])];
          for (const { quality, groupBy, against } of exportVariants(full)) {
            if (against && !existsSync(path.join(earlier, '_traces', 'keys.bin'))) continue;
            const args = ['export', tree, '--format', 'openai', '--out', out, '--force', ...curation, '--quality', quality, '--group-by', groupBy];
            if (against) args.push('--against', earlier);
            verdicts.push(await verdict(args, out));
          }
          // The targets that refuse records the plan kept (tool results, a low token limit), with
          // the comparing stages' options that decide what they are handed.
          if (trajectories === 'last' && keep === 'first') {
            for (const format of ['nemo', 'nemo-customizer']) verdicts.push(await verdict(['export', tree, '--format', format, '--out', out, '--force', ...curation], out));
            verdicts.push(await verdict(['export', tree, '--format', 'openai', '--out', out, '--force', ...curation, '--max-example-tokens', '150'], out));
          }
          verdicts.push(await verdict(['dedupe', tree, '--out', out, '--force', ...curation, '--status', 'ok'], out));
          // filter keeps duplicates: it takes no --near-duplicates, and one --keep says as much as two.
          if (near === null && keep === 'first') verdicts.push(await verdict(['filter', tree, '--out', out, '--force', '--key', key, '--trajectories', trajectories], out));
        }
      }
    }
  }
  return verdicts;
}

/** An ISO time halfway through the tree's calls: the earlier output holds about half of them. */
async function midpoint(tree: string): Promise<string> {
  const times: number[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.jsonl'))
        for (const line of readFileSync(full, 'utf8').split('\n')) {
          const match = /"timestamp":\s*([0-9.]+)/.exec(line);
          if (match !== null) times.push(Number(match[1]));
        }
    }
  };
  walk(tree);
  times.sort((a, b) => a - b);
  return new Date((times[Math.floor(times.length / 2)] ?? 0) * 1000).toISOString();
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const [tree, work, result, full] = process.argv.slice(2);
  const verdicts = await propertyRuns(tree, work, full === 'full');
  writeFileSync(result, JSON.stringify(verdicts));
  process.exit(0);
}
