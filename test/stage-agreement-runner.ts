/**
 * The stage-agreement property, run in a process of its own: every combination of the
 * curation options over one tree, through the real command line's `main` (one process for
 * hundreds of runs: a process per run would take minutes), each output checked against the
 * invariant of docs/curation.md, "The order of the stages":
 *
 *   every drop that names a `kept` record leads, through `kept`, to a record in the output,
 *   with no cycle.
 *
 * "In the output" is read as each format's provenance says it: a record is in an export's
 * output when a row of `_traces/examples.jsonl` names it and that row is in the data file it
 * names (the file holds exactly the rows the provenance lists for it: JSONL lines, or Parquet
 * rows counted by the engine's reader, `validate --format hf`'s; for hf and hf-preference, a
 * file the dataset card declares). For the preference formats a row is a pair, and both its
 * records are in the output: the chosen (`call_id`) and the rejected (`rejected_call_id`). A
 * dedupe or filter output holds the records whose lines its tree holds. An Ask recording
 * (`--format ask-recording`) holds conversations: a row's `line` is the conversation's number in
 * its recording, and report.json counts each recording's.
 *
 * Beside the chains, every run is checked for its accounting: each record of the tree is in the
 * output or listed in the manifest (a flagged record is listed and kept), and no record is both
 * written and dropped.
 *
 *   node dist/test/stage-agreement-runner.js TREE WORK RESULT.json [full] [pairs|pairs-only] [scores=FILE]
 *
 * Every run crosses the comparing stages' options (--key, --near-duplicates, --trajectories,
 * --keep). `full` crosses them with --quality, --group-by and --against too (8 times the runs);
 * without it, with those three at their defaults and all three changed at once. `--format hf`
 * runs once per combination of the comparing stages (nemo, nemo-customizer and ask-recording, the
 * formats that refuse records, for --trajectories last and --keep first), taking the --quality/--group-by/--against
 * variants and its own options (--file-format, --hf-shape) in turn. The preference formats
 * cross --key, --keep (hf-preference with JSONL shards for one of them), scores (none, --scores, --scores with --min-margin) and --quality, with
 * and without --against (they refuse --near-duplicates and --group-by module, and keep agent
 * steps whole), with `pairs` (a tree that holds answers to pair; `pairs-only` runs these alone); `scores=FILE` names the tree's
 * own scores, else the runner scores two thirds of the records itself.
 *
 * The command's own output goes nowhere (the parent starts this with stdio ignored); the
 * verdicts go to RESULT.json: one row per run, with its options, exit code and the broken chains.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { main } from '../src/cli.js';
import { parquetRowCount } from '../src/engine/duckdb.js';
import { readCard } from '../src/targets/hf/folder.js';

export interface RunVerdict {
  args: string[];
  exit: number;
  /** Drops whose `kept` chain ends at a record not in the output, or loops; and records the run lost or both wrote and dropped. */
  broken: string[];
  /** Drops that name a kept record. */
  chains: number;
}

export const KEYS = ['inputs,config,module', 'inputs,config', 'inputs', 'conversation'] as const;
export const NEAR = [null, '0.8', '0.9'] as const;
export const PREFERENCE_FORMATS = ['openai-preference', 'hf-preference', 'nemo-preference'] as const;

interface Drop {
  call_id?: string;
  reason: string;
  kept?: string;
  flagged?: true;
}

/** A row of `_traces/examples.jsonl`. */
interface WrittenRow {
  file: string;
  line: number;
  call_id: string;
  rejected_call_id?: string;
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

/**
 * The records an export's output holds, as its provenance says (both records of a pair), and
 * what does not hold: a provenance row whose file is missing, undeclared by its dataset card,
 * or holds another number of rows than the provenance lists for it.
 */
async function exportedRecords(out: string): Promise<{ records: Set<string>; problems: string[] }> {
  const rows = jsonLines<WrittenRow>(path.join(out, '_traces', 'examples.jsonl'));
  const records = new Set<string>();
  const problems: string[] = [];
  const byFile = new Map<string, number[]>();
  for (const row of rows) {
    records.add(row.call_id);
    if (row.rejected_call_id !== undefined) records.add(row.rejected_call_id);
    const lines = byFile.get(row.file) ?? [];
    lines.push(row.line);
    byFile.set(row.file, lines);
  }
  const cards = new Map<string, Set<string> | null>();
  // An Ask recording holds conversations, not lines: report.json counts each file's.
  const conversations = new Map<string, number>();
  if (existsSync(path.join(out, 'report.json'))) {
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as { format?: string; files?: { file: string; conversations?: number }[] };
    if (report.format === 'ask-recording') for (const f of report.files ?? []) conversations.set(f.file.split(path.sep).join('/'), f.conversations ?? 0);
  }
  for (const [file, lines] of byFile) {
    const full = path.join(out, file);
    if (!existsSync(full)) {
      problems.push(`the provenance names ${file}, which is not in the output`);
      continue;
    }
    // An hf folder's shards are data/… beside its card: the card must declare the file, or no loader reads it.
    if (path.basename(path.dirname(file)) === 'data') {
      const folder = path.dirname(path.dirname(file));
      if (!cards.has(folder)) {
        const cardFile = path.join(out, folder, 'README.md');
        const card = existsSync(cardFile) ? readCard(readFileSync(cardFile, 'utf8')) : null;
        cards.set(folder, card === null || typeof card === 'string' ? null : new Set([...card.files.values()].flat()));
      }
      const declared = cards.get(folder);
      if (declared === null || !declared!.has(path.relative(folder, file))) problems.push(`${file} is in no split of its dataset card`);
    }
    const held = conversations.has(file) ? conversations.get(file)! : file.endsWith('.parquet') ? await parquetRowCount(full) : readFileSync(full, 'utf8').split('\n').filter((line) => line !== '').length;
    const sorted = [...lines].sort((a, b) => a - b);
    if (held !== lines.length || sorted.some((line, i) => line !== i + 1)) problems.push(`${file} holds ${held} rows; the provenance lists ${lines.length} (lines ${sorted.slice(0, 5).join(', ')}…)`);
  }
  return { records, problems };
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

/**
 * The records a run lost (in neither the output nor the manifest) or both wrote and dropped
 * (a flagged record is listed and kept: not a drop). `every`: the call_ids of the tree's records.
 */
export function accounting(drops: readonly Drop[], output: ReadonlySet<string>, every: ReadonlySet<string>): string[] {
  const dropped = new Map<string, string>();
  for (const drop of drops) if (drop.call_id !== undefined && drop.flagged !== true) dropped.set(drop.call_id, drop.reason);
  const problems: string[] = [];
  for (const id of every) if (!output.has(id) && !dropped.has(id)) problems.push(`${id}: in neither the output nor the manifest`);
  for (const [id, reason] of dropped) if (output.has(id)) problems.push(`${id}: written, and dropped as ${reason}`);
  return problems;
}

async function run(args: string[]): Promise<number> {
  return main(['node', 'traces', ...args]);
}

async function verdict(args: string[], out: string, every: ReadonlySet<string>): Promise<RunVerdict> {
  rmSync(out, { recursive: true, force: true });
  const exit = await run(args);
  const drops = jsonLines<Drop>(path.join(out, '_traces', 'manifest.jsonl'));
  const { records: output, problems } =
    args[0] === 'export' ? await exportedRecords(out) : { records: existsSync(out) ? treeCallIds(out) : new Set<string>(), problems: [] };
  const chains = brokenChains(drops, output);
  // A run that wrote nothing (exit 1, nothing to write) has no output to account for.
  const accounted = exit === 0 ? accounting(drops, output, every) : [];
  return { args, exit, broken: [...chains.broken, ...problems, ...accounted], chains: chains.chains };
}

/** --quality, --group-by and --against: every combination, or the defaults and all three changed. */
function exportVariants(full: boolean): { quality: string; groupBy: string; against: boolean }[] {
  const all = ['default', 'all'].flatMap((quality) => ['none', 'module'].flatMap((groupBy) => [false, true].map((against) => ({ quality, groupBy, against }))));
  return full ? all : [all[0], all[all.length - 1]];
}

const ALL_VARIANTS = exportVariants(true);
/** hf's own options, taken in turn. */
const HF_OPTIONS = [[], ['--file-format', 'jsonl'], ['--hf-shape', 'prompt-completion'], ['--file-format', 'jsonl', '--hf-shape', 'prompt-completion']];

async function propertyRuns(tree: string, work: string, { full, pairs, scoresFile }: { full: boolean; pairs: boolean | 'only'; scoresFile: string | null }): Promise<RunVerdict[]> {
  const verdicts: RunVerdict[] = [];
  const out = path.join(work, 'out');
  const every = await everyRecord(tree, work);
  const scores = scoresFile ?? writeScores(every, path.join(work, 'scores.jsonl'));
  let hfTurn = 0;
  for (const key of KEYS) {
    // An earlier output of part of the tree, with the same key, for --against.
    const earlier = path.join(work, `earlier-${KEYS.indexOf(key)}`);
    await run(['export', tree, '--format', 'openai', '--out', earlier, '--force', '--key', key, '--until', await midpoint(tree)]);
    const hasEarlier = existsSync(path.join(earlier, '_traces', 'keys.bin'));
    for (const near of pairs === 'only' ? [] : NEAR) {
      for (const trajectories of ['last', 'all']) {
        for (const keep of ['first', 'last']) {
          const curation = ['--key', key, '--trajectories', trajectories, '--keep', keep, ...(near === null ? [] : ['--near-duplicates', near])];
          for (const { quality, groupBy, against } of exportVariants(full)) {
            if (against && !hasEarlier) continue;
            const args = ['export', tree, '--format', 'openai', '--out', out, '--force', ...curation, '--quality', quality, '--group-by', groupBy];
            if (against) args.push('--against', earlier);
            verdicts.push(await verdict(args, out, every));
          }
          // hf, once per combination: the export variants and its own options in turn (every pair of them in 32 combinations).
          {
            const { quality, groupBy, against } = ALL_VARIANTS[hfTurn % ALL_VARIANTS.length];
            const args = ['export', tree, '--format', 'hf', '--out', out, '--force', ...curation, '--quality', quality, '--group-by', groupBy, ...HF_OPTIONS[(hfTurn + Math.floor(hfTurn / ALL_VARIANTS.length)) % HF_OPTIONS.length]];
            hfTurn++;
            if (against && hasEarlier) args.push('--against', earlier);
            verdicts.push(await verdict(args, out, every));
          }
          // The targets that refuse records the plan kept (tool results, a low token limit), with
          // the comparing stages' options that decide what they are handed.
          if (trajectories === 'last' && keep === 'first') {
            for (const format of ['nemo', 'nemo-customizer', 'ask-recording']) verdicts.push(await verdict(['export', tree, '--format', format, '--out', out, '--force', ...curation], out, every));
            verdicts.push(await verdict(['export', tree, '--format', 'openai', '--out', out, '--force', ...curation, '--max-example-tokens', '150'], out, every));
            verdicts.push(await verdict(['export', tree, '--format', 'hf', '--out', out, '--force', ...curation, '--max-example-tokens', '150'], out, every));
          }
          verdicts.push(await verdict(['dedupe', tree, '--out', out, '--force', ...curation, '--status', 'ok'], out, every));
          // filter keeps duplicates: it takes no --near-duplicates, and one --keep says as much as two.
          if (near === null && keep === 'first') verdicts.push(await verdict(['filter', tree, '--out', out, '--force', '--key', key, '--trajectories', trajectories], out, every));
        }
      }
    }
    // The preference formats: pairs where dedupe stands (no near-duplicates, no collapse, one dataset).
    for (const keep of pairs ? ['first', 'last'] : []) {
      for (const scored of [[], ['--scores', scores], ['--scores', scores, '--min-margin', '0.5']]) {
        for (const format of PREFERENCE_FORMATS) {
          // hf-preference writes JSONL shards for one --keep, Parquet for the other.
          const shards = format === 'hf-preference' && keep === 'last' ? ['--file-format', 'jsonl'] : [];
          const base = ['export', tree, '--format', format, '--out', out, '--force', '--key', key, '--keep', keep, ...scored, ...shards];
          verdicts.push(await verdict([...base, '--quality', 'default'], out, every));
          // With every quality stage on and against the earlier output: one format a time, in turn.
          if (format === PREFERENCE_FORMATS[(KEYS.indexOf(key) + scored.length) % PREFERENCE_FORMATS.length]) {
            verdicts.push(await verdict([...base, '--quality', 'all', ...(hasEarlier ? ['--against', earlier] : [])], out, every));
            // A low token limit refuses rows the pair finder found.
            verdicts.push(await verdict([...base, '--max-example-tokens', '120'], out, every));
          }
        }
      }
    }
  }
  return verdicts;
}

/** The call_ids of every record of the tree: those filter keeps (every status, every step, duplicates) and those its quality stages drop. */
async function everyRecord(tree: string, work: string): Promise<Set<string>> {
  const out = path.join(work, 'every');
  await run(['filter', tree, '--out', out, '--force', '--status', 'ok,exception,no_output', '--trajectories', 'all']);
  const every = treeCallIds(out);
  for (const drop of jsonLines<Drop>(path.join(out, '_traces', 'manifest.jsonl'))) if (drop.call_id !== undefined) every.add(drop.call_id);
  return every;
}

/** Scores for two records in three (0, 0.25, 0.5 or 1, from the call_id's digest), as JSONL: a platform's score export. */
function writeScores(every: ReadonlySet<string>, file: string): string {
  const lines: string[] = [];
  for (const id of every) {
    const byte = createHash('sha256').update(id).digest()[0]!;
    if (byte % 3 === 0) continue;
    lines.push(JSON.stringify({ call_id: id, score: [0, 0.25, 0.5, 1][byte % 4] }));
  }
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
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
  const [tree, work, result, ...flags] = process.argv.slice(2);
  const scores = flags.find((flag) => flag.startsWith('scores='))?.slice('scores='.length) ?? null;
  const pairs = flags.includes('pairs-only') ? 'only' : flags.includes('pairs');
  const verdicts = await propertyRuns(tree, work, { full: flags.includes('full'), pairs, scoresFile: scores });
  writeFileSync(result, JSON.stringify(verdicts));
  process.exit(0);
}
