/**
 * Every command on trees the real Synalinks Recorder wrote (test/fixtures/genuine, made by
 * make.py there). Expected figures come from the generator's log of what it asked for
 * (log.json) and from what the fake provider received (calls.jsonl), never from traces.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chatRows, rowText } from '../src/ui/chat-lines.js';
import { IndexStore } from '../src/ui/index-store.js';
import { FIXTURES, runCli, runCliJson, tempDir } from './helpers.js';

const GENUINE = path.join(FIXTURES, 'genuine');
const VARIANTS = ['bare-exponent', 'plus-exponent'] as const;
const TARGETS = ['openai', 'nemo', 'nemo-customizer', 'ask-recording'] as const;

interface ModuleLog {
  program: string;
  module: string;
  folder: string;
  calls: number;
  ok: number;
  exception: number;
  no_output: number;
  identical_repeats: number;
  continued_steps: number;
  /** The structured answers the script had the provider give, as exact JSON text (big integers included). */
  final_answers_json: string[];
}
interface GeneratorLog {
  synalinks: { version: string; commit: string };
  orjson: { version: string; exponent: string };
  model: string;
  planted_numbers: Record<string, string>;
  planted_texts: Record<string, string>;
  stale_usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  modules: ModuleLog[];
  same_prompt_groups: [string, string, number][][];
  runs: { program: string; calls: number }[];
  totals: { calls: number; ok: number; exception: number; no_output: number; identical_repeats: number; exponent_in_inputs: number; continued_steps: number };
}
interface WireMessage {
  role: string;
  content?: string | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}
interface ProviderCall {
  program: string;
  module: string;
  outcome: 'answered' | 'provider_error';
  model: string;
  messages: WireMessage[];
  kwargs: Record<string, unknown>;
}
interface Example {
  messages: WireMessage[];
}

function jsonl<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

/**
 * A JSON text with its numbers kept as written: integers as exact BigInt text, other numbers
 * by their double value (so 1e16, 1e+16 and 10000000000000000.0 agree, and
 * 9007199254740993 does not become 9007199254740992). Strings decoded, so escapes and
 * separators do not count. Key order kept. Throws on anything that is not one JSON value.
 */
function canonicalJson(text: string): string {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const value = (): string => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      const parts: string[] = [];
      ws();
      if (text[i] === close) {
        i++;
        return c + close;
      }
      for (;;) {
        if (c === '{') {
          ws();
          const key = string();
          ws();
          assert.equal(text[i++], ':');
          parts.push(`${key}:${value()}`);
        } else parts.push(value());
        ws();
        const sep = text[i++];
        if (sep === close) return c + parts.join(',') + close;
        assert.equal(sep, ',', `bad JSON at ${i}: ${text.slice(0, 80)}`);
      }
    }
    if (c === '"') return string();
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?|^true|^false|^null/.exec(text.slice(i));
    assert.ok(m, `bad JSON at ${i}: ${text.slice(0, 80)}`);
    i += m[0].length;
    if (!/^-?\d/.test(m[0])) return m[0];
    return m[1] === undefined && m[2] === undefined ? `i${BigInt(m[0])}` : `f${Number(m[0])}`;
  };
  const string = (): string => {
    const m = /^"(?:[^"\\]|\\.)*"/s.exec(text.slice(i));
    assert.ok(m, `bad string at ${i}`);
    i += m[0].length;
    return JSON.stringify(JSON.parse(m[0]));
  };
  const out = value();
  ws();
  assert.equal(i, text.length, `trailing text in ${text.slice(0, 80)}`);
  return out;
}

interface Variant {
  name: string;
  tree: string;
  log: GeneratorLog;
  calls: ProviderCall[];
}

function loadVariant(name: string): Variant {
  const dir = path.join(GENUINE, name);
  const log = JSON.parse(readFileSync(path.join(dir, 'log.json'), 'utf8')) as GeneratorLog;
  return { name, tree: path.join(dir, 'tree'), log, calls: jsonl<ProviderCall>(path.join(dir, 'calls.jsonl')) };
}

const exports = new Map<string, { out: string; report: Record<string, unknown> }>();

/** An export of a variant's tree, made once per options for the tests that read it. */
function exportTo(v: Variant, target: string, extra: string[] = []): { out: string; report: Record<string, unknown> } {
  const key = JSON.stringify([v.name, target, extra]);
  const done = exports.get(key);
  if (done) return done;
  const out = path.join(tempDir('traces-genuine-'), target);
  const result = runCli(['export', v.tree, '--format', target, '--out', out, '--json', ...extra]);
  assert.equal(result.status, 0, result.stderr);
  const made = { out, report: JSON.parse(result.stdout) as Record<string, unknown> };
  exports.set(key, made);
  return made;
}

function examplesOf(out: string): Example[] {
  return filesUnder(out)
    .filter((f) => /(training|validation)(-\d+)?\.jsonl$/.test(f) && !f.includes(`${path.sep}_traces${path.sep}`))
    .flatMap((f) => jsonl<Example>(f));
}

/** Every string in a parsed JSON value, and in strings that are themselves JSON texts. */
function stringsIn(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') {
    into.push(value);
    if (/^[[{]/.test(value)) {
      try {
        stringsIn(JSON.parse(value), into);
      } catch {
        // not JSON: a plain string
      }
    }
  } else if (Array.isArray(value)) value.forEach((item) => stringsIn(item, into));
  else if (value && typeof value === 'object') Object.values(value).forEach((item) => stringsIn(item, into));
  return into;
}

function agentFinalAnswers(v: Variant): string[] {
  const finals = v.log.modules.filter((m) => m.module.startsWith('final_generator_'));
  assert.ok(finals.length > 0, 'the log has an agent final answer');
  return finals.flatMap((m) => m.final_answers_json);
}

/** Does an exported example end with this final answer (compared value for value, numbers as written)? */
function endsWithAnswer(example: Example, answerText: string): boolean {
  const last = example.messages[example.messages.length - 1];
  if (last?.role !== 'assistant' || typeof last.content !== 'string') return false;
  try {
    return canonicalJson(last.content) === canonicalJson(answerText);
  } catch {
    return false;
  }
}


/**
 * A trace line as Python's json.dumps(json.loads(line), ensure_ascii=False) writes it: ", " and
 * ": " separators, and floats by Python's repr, whose exponents carry a sign and two digits
 * (1e16 -> 1e+16, 2.5e-8 -> 2.5e-08). Strings are kept as they are (raw UTF-8 both ways). Only
 * number forms on which the two writers agree otherwise are accepted: a plain decimal Python
 * would write in exponent form (below 1e-4, or from 1e16) fails the test instead. On the
 * genuine trees this is byte for byte what Python 3.11's json writes (compared when written).
 */
function asPythonJsonWritesIt(line: string): string {
  return line.replace(/"(?:[^"\\]|\\.)*"|(-?\d+(?:\.\d+)?)(?:e([+-]?)(\d+))?|([,:])/g, (token, mantissa?: string, sign?: string, exponent?: string, separator?: string) => {
    if (separator !== undefined) return `${separator} `;
    if (mantissa === undefined) return token;
    if (exponent === undefined) {
      const value = Math.abs(Number(mantissa));
      assert.ok(!mantissa.includes('.') || value === 0 || (value >= 1e-4 && value < 1e16), `Python writes ${mantissa} otherwise`);
      return token;
    }
    return `${mantissa}e${sign === '-' ? '-' : '+'}${exponent.padStart(2, '0')}`;
  });
}

for (const name of VARIANTS) {
  describe(`genuine Synalinks trees: ${name}`, () => {
    const v = loadVariant(name);
    const files = filesUnder(v.tree);

    it('the Recorder wrote one <module>_<YYYYmmdd-HHMMSS>.jsonl in each folder the log names', () => {
      const folders = files.map((f) => path.relative(v.tree, path.dirname(f)).split(path.sep).join('/'));
      assert.deepEqual([...folders].sort(), v.log.modules.map((m) => m.folder).sort());
      for (const f of files) {
        const module = path.basename(path.dirname(f)) === path.basename(v.tree) ? '' : path.basename(path.dirname(f));
        assert.match(path.basename(f), new RegExp(`^${module}_\\d{8}-\\d{6}\\.jsonl$`));
      }
      assert.equal(v.log.synalinks.version, '0.9.014');
    });

    it('stats counts every record of each kind, overall and per program and module, as the log asked', () => {
      const stats = runCliJson<Record<string, any>>(['stats', v.tree]);
      assert.equal(stats.records, v.log.totals.calls);
      assert.equal(stats.ok, v.log.totals.ok);
      assert.equal(stats.exception, v.log.totals.exception);
      assert.equal(stats.no_output, v.log.totals.no_output);
      assert.equal(stats.damaged_lines, 0);
      assert.equal(stats.files, v.log.modules.length);
      assert.deepEqual(stats.models, { [v.log.model]: v.log.totals.calls });
      for (const m of v.log.modules) {
        const row = stats.modules[`${m.program}/${m.module}`];
        assert.ok(row, `stats has ${m.program}/${m.module}`);
        assert.deepEqual([row.records, row.ok, row.exception, row.no_output], [m.calls, m.ok, m.exception, m.no_output], `${m.program}/${m.module}`);
      }
      const programs = new Set(v.log.modules.map((m) => m.program));
      assert.deepEqual(Object.keys(stats.programs).sort(), [...programs].sort());
    });

    it("verify recomputes every record's inputs_hash and config_hash and finds them all matching", () => {
      const report = runCliJson<Record<string, any>>(['verify', v.tree]);
      assert.equal(report.checked, v.log.totals.calls);
      assert.deepEqual(report.mismatches, []);
      assert.equal(report.damaged_lines, 0);
      assert.equal(report.files_without_hashes, 0);
    });

    it(`the tree holds the planted numbers as this orjson writes them (${name === 'plus-exponent' ? '1e+16' : '1e16'}) and the planted texts raw`, () => {
      const text = files.map((f) => readFileSync(f, 'utf8')).join('');
      assert.equal(v.log.planted_numbers.ten_to_sixteen, v.log.orjson.exponent);
      for (const [label, planted] of Object.entries(v.log.planted_numbers)) {
        assert.match(text, new RegExp(`[:\\[,]${planted.replace(/[.+]/g, '\\$&')}[,}\\]]`), label);
      }
      assert.equal(/[:,\[]1e\+16[,}\]]/.test(text), name === 'plus-exponent');
      assert.equal(/[:,\[]1e16[,}\]]/.test(text), name === 'bare-exponent');
      for (const [label, planted] of Object.entries(v.log.planted_texts)) assert.ok(text.includes(planted), label);
    });

    it('verify tells a tree Python json wrote again from an edited one: reserialized where an input holds 1e16, as the log planted', () => {
      const rewritten = tempDir('traces-genuine-python-json-');
      for (const file of files) {
        const target = path.join(rewritten, path.relative(v.tree, file));
        mkdirSync(path.dirname(target), { recursive: true });
        const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
        writeFileSync(target, lines.map(asPythonJsonWritesIt).join('\n') + '\n');
      }
      const result = runCli(['verify', rewritten, '--json']);
      assert.equal(result.status, 0, result.stderr);
      const report = JSON.parse(result.stdout) as Record<string, any>;
      assert.equal(report.checked, v.log.totals.calls);
      assert.equal(report.edited, 0);
      // Python spells 1e16 as 1e+16: only the bare-exponent records that hashed 1e16 change.
      const expected = v.log.orjson.exponent === '1e16' ? v.log.totals.exponent_in_inputs : 0;
      assert.equal(report.reserialized, expected);
      assert.equal(report.mismatches.length, expected);
      for (const m of report.mismatches) {
        assert.equal(m.verdict, 'reserialized');
        assert.equal(m.field, 'inputs_hash');
      }
    });

    it('dedupe --key inputs,config,module drops exactly the identical repeats the log asked for', () => {
      const out = path.join(tempDir('traces-genuine-'), 'dedupe');
      const report = runCliJson<Record<string, any>>(['dedupe', v.tree, '--status', 'ok', '--key', 'inputs,config,module', '--out', out]);
      assert.equal(report.kept, v.log.totals.ok - v.log.totals.identical_repeats);
      assert.equal(report.dropped.duplicate, v.log.totals.identical_repeats);
      const kept = filesUnder(out).filter((f) => !f.includes('_traces')).flatMap((f) => jsonl<Record<string, unknown>>(f));
      assert.equal(kept.length, report.kept);
      for (const m of v.log.modules) {
        const n = kept.filter((r) => r.program === m.program && r.module === m.module).length;
        assert.equal(n, m.ok - m.identical_repeats, `${m.program}/${m.module}`);
      }
    });

    it('dedupe --key inputs,config also merges the calls the log built with one prompt in different modules', () => {
      const merged = v.log.same_prompt_groups.reduce((sum, group) => sum + group.length - 1, 0);
      assert.ok(merged > 0);
      const report = runCliJson<Record<string, any>>(['dedupe', v.tree, '--status', 'ok', '--key', 'inputs,config', '--dry-run']);
      assert.equal(report.dropped.duplicate, v.log.totals.identical_repeats + merged);
      // And says how many of those it merged across modules (issue 27): each group's extra members.
      assert.equal(report.merged_across_modules, merged);
    });

    it('filter keeps each class of record the log asked for; the swallowed provider error keeps the stale usage', () => {
      for (const [status, expected] of [
        ['ok,exception,no_output', v.log.totals.calls],
        ['exception', v.log.totals.exception],
        ['no_output', v.log.totals.no_output],
      ] as const) {
        const out = path.join(tempDir('traces-genuine-'), 'filter');
        const report = runCliJson<Record<string, any>>(['filter', v.tree, '--status', status, '--out', out]);
        assert.equal(report.kept, expected, status);
        if (status === 'no_output') {
          const [record] = filesUnder(out).filter((f) => !f.includes('_traces')).flatMap((f) => jsonl<Record<string, any>>(f));
          assert.equal(record.outputs, null);
          assert.equal(record.exception, undefined);
          assert.equal(record.usage.total_tokens, v.log.stale_usage.total_tokens);
          assert.equal(record.usage.prompt_tokens, v.log.stale_usage.prompt_tokens);
        }
      }
    });

    for (const target of TARGETS) {
      it(`export --format ${target} with default options writes a dataset its trainer accepts`, () => {
        const { out, report } = exportTo(v, target);
        assert.equal(report.records_read, v.log.totals.calls);
        assert.equal((report.dropped as Record<string, number>).status, v.log.totals.exception + v.log.totals.no_output);
        if (target === 'ask-recording') {
          const recordings = filesUnder(out).filter((f) => f.endsWith('recording.yml'));
          assert.ok(recordings.length > 0);
          for (const f of recordings) JSON.parse(readFileSync(f, 'utf8'));
          return;
        }
        const outputs = filesUnder(out).filter((f) => /(training|validation)\.jsonl$/.test(f) && readFileSync(f, 'utf8').trim() !== '');
        const validation = runCliJson<any>(['validate', '--format', target, ...outputs]);
        for (const r of Array.isArray(validation) ? validation : [validation]) {
          assert.equal(r.ok, true, JSON.stringify(r.errors));
          assert.deepEqual(r.errors, []);
        }
      });
    }

    it('exports keep the recorded number text: 1e16 stays as the Recorder wrote it, big integers exact', () => {
      for (const target of ['openai', 'nemo'] as const) {
        const text = filesUnder(exportTo(v, target, ['--key', 'inputs,config,module']).out)
          .filter((f) => /(training|validation)\.jsonl$/.test(f))
          .map((f) => readFileSync(f, 'utf8'))
          .join('');
        for (const label of ['ten_to_sixteen', 'past_two_to_53', 'u64_max', 'i64_min', 'one_point_zero']) {
          const planted = v.log.planted_numbers[label];
          assert.ok(new RegExp(`[:\\[,]${planted.replace(/[.+]/g, '\\$&')}[,}\\]]`).test(text), `${target} keeps ${label} as ${planted}`);
        }
        assert.ok(!/9007199254740992/.test(text), 'no integer rounded to a double');
      }
    });

    it(
      'every FunctionCallingAgent final answer reaches every export target with default options (issue 27)',
      () => {
        const answers = agentFinalAnswers(v);
        for (const target of TARGETS) {
          const { out } = exportTo(v, target);
          if (target === 'ask-recording') {
            const strings = filesUnder(out)
              .filter((f) => f.endsWith('recording.yml'))
              .flatMap((f) => stringsIn(JSON.parse(readFileSync(f, 'utf8'))));
            for (const answer of answers) {
              assert.ok(strings.some((s) => { try { return canonicalJson(s) === canonicalJson(answer); } catch { return false; } }), `${target}: ${answer}`);
            }
            continue;
          }
          const examples = examplesOf(out);
          if (target === 'nemo-customizer') {
            // Customizer has no tool role: a final answer after tool results is named in the
            // manifest as not_representable instead of vanishing as a duplicate.
            const manifest = jsonl<Record<string, string>>(path.join(out, '_traces', 'manifest.jsonl'));
            const finals = manifest.filter((e) => e.file.includes('final_generator_'));
            assert.equal(finals.length, answers.length);
            for (const entry of finals) assert.equal(entry.reason, 'not_representable');
            continue;
          }
          for (const answer of answers) assert.ok(examples.some((e) => endsWithAnswer(e, answer)), `${target}: ${answer}`);
        }
        // dedupe and stats with their defaults agree: only the identical repeats are duplicates.
        const out = path.join(tempDir('traces-genuine-'), 'dedupe-default');
        const report = runCliJson<Record<string, any>>(['dedupe', v.tree, '--status', 'ok', '--out', out]);
        assert.equal(report.dropped.duplicate, v.log.totals.identical_repeats);
        const kept = filesUnder(out).filter((f) => !f.includes('_traces')).flatMap((f) => jsonl<Record<string, unknown>>(f));
        for (const m of v.log.modules.filter((x) => x.module.startsWith('final_generator_'))) {
          assert.equal(kept.filter((r) => r.program === m.program && r.module === m.module).length, m.ok, `dedupe keeps ${m.program}/${m.module}`);
        }
        const stats = runCliJson<Record<string, any>>(['stats', v.tree]);
        assert.equal(stats.duplicate_ok_records, v.log.totals.identical_repeats);
      },
    );

    it('with default options every ok call of every shape is an example, but identical repeats and agent steps a later step continues (openai, nemo)', () => {
      const placeOf = new Map<string, string>();
      for (const f of files) for (const r of jsonl<{ call_id: string; program: string; module: string }>(f)) placeOf.set(r.call_id, `${r.program}/${r.module}`);
      for (const target of ['openai', 'nemo'] as const) {
        const { out, report } = exportTo(v, target);
        assert.equal((report.dropped as Record<string, number>).duplicate, v.log.totals.identical_repeats);
        assert.equal((report.dropped as Record<string, number>).prefix, v.log.totals.continued_steps);
        const exported = new Map<string, number>();
        for (const e of jsonl<{ call_id: string }>(path.join(out, '_traces', 'examples.jsonl'))) {
          const place = placeOf.get(e.call_id);
          assert.ok(place, `${target}: example of a recorded call`);
          exported.set(place, (exported.get(place) ?? 0) + 1);
        }
        for (const m of v.log.modules) {
          assert.equal(exported.get(`${m.program}/${m.module}`) ?? 0, m.ok - m.identical_repeats - m.continued_steps, `${target}: ${m.program}/${m.module}`);
        }
        assert.equal(examplesOf(out).length, v.log.totals.ok - v.log.totals.identical_repeats - v.log.totals.continued_steps);
      }
    });

    it('with --key inputs,config,module every final structured answer the log asked for is exported (openai, nemo)', () => {
      for (const target of ['openai', 'nemo'] as const) {
        const examples = examplesOf(exportTo(v, target, ['--key', 'inputs,config,module']).out);
        for (const m of v.log.modules) {
          for (const answer of m.final_answers_json) {
            assert.ok(examples.some((e) => endsWithAnswer(e, answer)), `${target} has ${m.program}/${m.module}: ${answer}`);
          }
        }
      }
    });

    it('runs: one run per agent query with a step per LM call, and every call in some run', () => {
      const runs = runCliJson<Record<string, any>[]>(['runs', v.tree]);
      assert.equal(runs.reduce((sum, r) => sum + r.steps, 0), v.log.totals.calls);
      const agentRuns = runs.filter((r) => r.program === 'weather_agent');
      assert.deepEqual(
        agentRuns.map((r) => r.steps),
        v.log.runs.filter((r) => r.program === 'weather_agent').map((r) => r.calls),
      );
      for (const r of agentRuns) assert.equal(r.status, 'ok');
      assert.equal(runs.filter((r) => r.status === 'exception').length, v.log.totals.exception);
      assert.equal(runs.filter((r) => r.status === 'no_output').length, v.log.totals.no_output);
    });

    it('scan finds no secret in the genuine trees', () => {
      const report = runCliJson<Record<string, any>>(['scan', v.tree]);
      assert.equal(report.records, v.log.totals.calls);
      assert.equal(report.findings, 0);
    });

    it('index writes one row per record, and sql over it counts each program, module and status and finds the same-prompt groups of the log', () => {
      const index = path.join(tempDir('traces-genuine-'), 'records.parquet');
      const summary = runCli(['index', v.tree, '--out', index]);
      assert.equal(summary.status, 0, summary.stderr);
      const rows = runCliJson<{ program: string; module: string; status: string; n: number }[]>([
        'sql',
        'select program, module, status, count(*)::INTEGER as n from records group by all order by all',
        '--index',
        index,
      ]);
      const byName = (a: { program: string; module: string; status: string }, b: typeof a) =>
        a.program !== b.program ? (a.program < b.program ? -1 : 1) : a.module !== b.module ? (a.module < b.module ? -1 : 1) : a.status < b.status ? -1 : 1;
      const expected = v.log.modules
        .flatMap((m) => (['exception', 'no_output', 'ok'] as const).filter((s) => m[s] > 0).map((s) => ({ program: m.program, module: m.module, status: s, n: m[s] })))
        .sort(byName);
      assert.deepEqual(rows.map((r) => ({ ...r, n: Number(r.n) })), expected);
      // Ok records of different program/module places that share both hashes: the log's groups.
      const groups = runCliJson<{ places: number }[]>([
        'sql',
        "select count(distinct program || '/' || module)::INTEGER as places from records where status = 'ok' group by inputs_hash, config_hash having places > 1 order by places",
        '--index',
        index,
      ]);
      assert.deepEqual(
        groups.map((g) => Number(g.places)),
        v.log.same_prompt_groups.map((g) => new Set(g.map(([p, m]) => `${p}/${m}`)).size).sort((a, b) => a - b),
      );
    });

    describe('the browser store', () => {
      let store: IndexStore;
      before(async () => {
        store = await IndexStore.open([v.tree]);
        await store.whenDone();
      });
      after(() => store.close());

      it('opens every record with the counts the log asked for and a node per module', () => {
        const all = store.counts(0);
        assert.equal(all.records, v.log.totals.calls);
        assert.equal(all.ok, v.log.totals.ok);
        assert.equal(all.exception, v.log.totals.exception);
        assert.equal(all.no_output, v.log.totals.no_output);
        assert.equal(all.damaged, 0);
        const keys = new Set(store.tree.map((n) => n.key));
        for (const m of v.log.modules) assert.ok(keys.has(`m:${m.program}/${m.module}`), `${m.program}/${m.module}`);
      });

      it('opens and renders every record, each where the log put it, numbers in their recorded text', () => {
        const entries = Array.from(store.list(0, 'all', false));
        assert.equal(entries.length, v.log.totals.calls);
        const places = new Map<string, number>();
        const rendered: string[] = [];
        for (const i of entries) {
          const record = store.record(i);
          assert.ok(record, `entry ${i} opens`);
          places.set(`${record.program}/${record.module}`, (places.get(`${record.program}/${record.module}`) ?? 0) + 1);
          rendered.push(chatRows(record, { width: 100, isOpen: () => true }).map(rowText).join('\n'));
        }
        assert.deepEqual(Object.fromEntries([...places].sort()), Object.fromEntries(v.log.modules.map((m) => [`${m.program}/${m.module}`, m.calls]).sort()));
        const text = rendered.join('\n');
        for (const label of ['ten_to_sixteen', 'past_two_to_53', 'u64_max', 'i64_min', 'one_point_zero']) {
          const planted = v.log.planted_numbers[label];
          assert.ok(new RegExp(`(^|[^0-9.e+-])${planted.replace(/[.+]/g, '\\$&')}($|[^0-9.e])`, 'm').test(text), `the chat view shows ${label} as ${planted}`);
        }
      });
    });

    it('each exported conversation is what the model received, apart from the documented systematic differences', () => {
      // docs/genuine-recordings.md explains each difference counted here.
      const differences = { toolResultText: 0, toolArgumentsText: 0, nullVersusEmptyContent: 0 };
      for (const target of ['openai', 'nemo'] as const) {
        const { out } = exportTo(v, target, ['--key', 'inputs,config,module', '--trajectories', 'all']);
        const examples = examplesOf(out);
        assert.ok(examples.length > 0);
        for (const example of examples) {
          const prompt = example.messages.slice(0, -1);
          const call = v.calls.find((c) => c.messages.length === prompt.length && c.messages.every((m, i) => sameMessage(m, prompt[i], null)));
          assert.ok(call, `${target}: an exported conversation the model never received: ${JSON.stringify(prompt).slice(0, 300)}`);
          call.messages.forEach((m, i) => sameMessage(m, prompt[i], differences));
          // response_format= and tool_choice= were sent beside the messages and never recorded.
          assert.equal('response_format' in example || 'tool_choice' in example, false);
        }
      }
      // The trees hold dict tool results, tool calls and assistant tool-call turns: each kind of difference occurs.
      assert.ok(differences.toolResultText > 0, 'dict tool results are sent as Python json.dumps text');
      assert.ok(differences.toolArgumentsText > 0, 'tool arguments are sent as Python json.dumps text');
      assert.ok(differences.nullVersusEmptyContent > 0, 'an assistant tool-call turn is sent with content null');
    });

    it('every request the model received with a recorded answer is in the export (openai, --trajectories all)', () => {
      const examples = examplesOf(exportTo(v, 'openai', ['--key', 'inputs,config,module', '--trajectories', 'all']).out);
      const answered = v.calls.filter((c) => c.outcome === 'answered');
      assert.equal(answered.length, v.log.totals.ok, 'every ok record is a request the provider answered');
      for (const call of answered) {
        assert.ok(
          examples.some((e) => e.messages.length === call.messages.length + 1 && call.messages.every((m, i) => sameMessage(m, e.messages[i], null))),
          `${call.program}/${call.module} request is exported`,
        );
      }
    });
  });
}

/**
 * Is an exported message the message the model received? Systematic differences are allowed
 * and counted (when `differences` is given): a dict tool result and tool-call arguments are
 * sent as Python json.dumps text and exported as the recorded compact JSON (equal value for
 * value, numbers as written); an assistant tool-call turn's empty content is sent as null.
 */
function sameMessage(
  sent: WireMessage,
  exported: WireMessage | undefined,
  differences: { toolResultText: number; toolArgumentsText: number; nullVersusEmptyContent: number } | null,
): boolean {
  const fail = (why: string) => {
    if (differences) assert.fail(why);
    return false;
  };
  if (!exported || sent.role !== exported.role) return fail(`role ${sent.role} vs ${exported?.role}`);
  if (sent.tool_call_id !== exported.tool_call_id) return fail('tool_call_id');
  if (sent.content !== exported.content) {
    if (sent.content === null && exported.content === '' && sent.tool_calls) {
      if (differences) differences.nullVersusEmptyContent++;
    } else if (sent.role === 'tool' && typeof sent.content === 'string' && typeof exported.content === 'string') {
      let same = false;
      try {
        same = canonicalJson(sent.content) === canonicalJson(exported.content);
      } catch {
        same = false;
      }
      if (!same) return fail(`tool content ${sent.content} vs ${exported.content}`);
      if (differences) differences.toolResultText++;
    } else return fail(`content ${JSON.stringify(sent.content)} vs ${JSON.stringify(exported.content)}`);
  }
  const sentCalls = sent.tool_calls ?? [];
  const exportedCalls = exported.tool_calls ?? [];
  if (sentCalls.length !== exportedCalls.length) return fail('tool_calls length');
  for (let i = 0; i < sentCalls.length; i++) {
    const a = sentCalls[i];
    const b = exportedCalls[i];
    if (a.id !== b.id || a.function.name !== b.function.name) return fail('tool call id or name');
    if (a.function.arguments !== b.function.arguments) {
      if (canonicalJson(a.function.arguments) !== canonicalJson(b.function.arguments)) return fail('tool arguments');
      if (differences) differences.toolArgumentsText++;
    }
  }
  return true;
}
