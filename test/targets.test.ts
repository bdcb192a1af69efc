/**
 * Golden lines per target: each input under fixtures/targets/input is projected
 * by every target and compared byte for byte with expected/<target>/<case>.jsonl,
 * or its failure reason with expected/<target>/<case>.reason.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseJsonText, writeJson } from '../src/canonical/json-value.js';
import type { Message } from '../src/record.js';
import { TARGETS, ToolInference, toolsFor, getTarget, type Target } from '../src/targets/index.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/targets/', import.meta.url));
const CASES = readdirSync(`${FIXTURES}input`).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();

function input(name: string): Message[] {
  // Read as records are read: numbers keep their recorded text.
  return parseJsonText(readFileSync(`${FIXTURES}input/${name}.json`, 'utf8')) as Message[];
}

/** What `traces export` does per record: project, attach supplied-or-inferred tools, write the row as the target writes it. */
function exportLine(target: Target, messages: Message[]): string | { reason: string } {
  const projection = target.project(messages);
  if (!projection.ok) return { reason: projection.reason };
  const inference = new ToolInference();
  inference.observe(messages);
  const tools = toolsFor(projection.toolNames, [], inference);
  const example = target.attachTools(projection.example, tools.definitions);
  return writeJson(target.written?.(example) ?? example) + '\n';
}

// A preference format writes pairs, not one record's example: test/preference.test.ts checks its rows.
for (const target of Object.values(TARGETS).filter((t) => t.preference === undefined)) {
  describe(`${target.name} golden lines`, () => {
    for (const name of CASES) {
      it(name, () => {
        const base = `${FIXTURES}expected/${target.name}/${name}`;
        const got = exportLine(target, input(name));
        if (existsSync(`${base}.jsonl`)) {
          assert.equal(got, readFileSync(`${base}.jsonl`, 'utf8'));
          // What we write must pass our own validator (special tokens are only warnings outside openai).
          const errors = target.validateLine(JSON.parse(got as string), 1).filter((e) => e.severity === 'error');
          assert.deepEqual(errors, []);
        } else {
          assert.deepEqual(got, { reason: readFileSync(`${base}.reason`, 'utf8').trim() });
        }
      });
    }
  });
}

describe('projection details', () => {
  it('covers the cases the brief names', () => {
    for (const name of ['plain-chat', 'structured', 'chain-of-thought', 'agent-tool-call', 'agent-final', 'developer-role', 'list-of-parts']) {
      assert.ok(CASES.includes(name), name);
    }
  });

  it('openai drops reasoning, stringifies dict tool results, keeps string arguments verbatim', () => {
    const p = TARGETS.openai.project(input('agent-final'));
    assert.ok(p.ok);
    const messages = p.example.messages as Array<Record<string, unknown>>;
    assert.ok(messages.every((m) => !('reasoning_content' in m)));
    assert.equal(messages[3].content, '{"result":153133.0,"log":"Successfully executed"}');
    const calls = messages[2].tool_calls as Array<{ function: { arguments: unknown } }>;
    assert.equal(calls[0].function.arguments, '{"expression":"1234*124+117","precision":2.5}');
    assert.equal(calls[1].function.arguments, '{"query": "ISAE-SUPAERO location"}');
    assert.deepEqual(p.toolNames, ['calculate', 'search']);
    assert.ok(!('parallel_tool_calls' in p.example));
  });

  it('nemo reasoning modes: keep (default), drop, inline', () => {
    const messages = input('chain-of-thought');
    const last = (mode?: 'keep' | 'drop' | 'inline') => {
      const p = TARGETS.nemo.project(messages, mode ? { reasoning: mode } : {});
      assert.ok(p.ok);
      return (p.example.messages as Array<Record<string, unknown>>).at(-1);
    };
    assert.deepEqual(last(), { role: 'assistant', content: '{"answer":132}', reasoning_content: '12*11 = 12*10 + 12 = 132.' });
    assert.deepEqual(last('drop'), { role: 'assistant', content: '{"answer":132}' });
    assert.deepEqual(last('inline'), { role: 'assistant', content: '<think>12*11 = 12*10 + 12 = 132.</think>{"answer":132}' });
  });

  it('reasoning of white space only is none: no blank reasoning_content, no empty <think> block', () => {
    for (const blank of ['', '  ', '\n\t']) {
      const messages = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello', reasoning_content: blank }] as Message[];
      for (const [target, mode] of [['nemo', 'keep'], ['nemo', 'inline'], ['nemo-customizer', 'inline']] as const) {
        const p = TARGETS[target].project(messages, { reasoning: mode });
        assert.ok(p.ok);
        assert.deepEqual((p.example.messages as unknown[]).at(-1), { role: 'assistant', content: 'Hello' }, `${target} ${mode} ${JSON.stringify(blank)}`);
      }
    }
  });

  it('customizer can drop reasoning and refuses keep', () => {
    const p = TARGETS['nemo-customizer'].project(input('chain-of-thought'), { reasoning: 'drop' });
    assert.ok(p.ok);
    assert.deepEqual((p.example.messages as unknown[]).at(-1), { role: 'assistant', content: '{"answer":132}' });
    assert.throws(() => TARGETS['nemo-customizer'].project(input('chain-of-thought'), { reasoning: 'keep' }), /cannot keep/);
    assert.throws(() => TARGETS.openai.project(input('chain-of-thought'), { reasoning: 'inline' }), /cannot inline/);
  });

  it('rejects unknown roles, unparseable arguments and images outside user messages', () => {
    const reason = (t: Target, m: unknown[]) => {
      const p = t.project(m as Message[]);
      return p.ok ? 'ok' : p.reason;
    };
    const A = { role: 'assistant', content: 'ok' };
    assert.equal(reason(TARGETS.openai, [{ role: 'critic', content: 'x' }, A]), 'not_representable');
    const badArgs = { role: 'assistant', content: '', tool_calls: [{ id: 'c', function: { name: 'f', arguments: 'not json' } }] };
    assert.equal(reason(TARGETS.nemo, [{ role: 'user', content: 'x' }, badArgs]), 'not_representable');
    const arrayArgs = { role: 'assistant', content: '', tool_calls: [{ id: 'c', function: { name: 'f', arguments: '[1]' } }] };
    assert.equal(reason(TARGETS.openai, [{ role: 'user', content: 'x' }, arrayArgs]), 'not_representable');
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } };
    assert.equal(reason(TARGETS.openai, [{ role: 'system', content: [image] }, { role: 'user', content: 'x' }, A]), 'not_representable');
    const badName = { role: 'assistant', content: '', tool_calls: [{ id: 'c', function: { name: 'a.b', arguments: {} } }] };
    assert.equal(reason(TARGETS.openai, [{ role: 'user', content: 'x' }, badName]), 'not_representable');
    // Every target declares tools in OpenAI's shape, so every validator checks the name.
    assert.equal(reason(TARGETS.nemo, [{ role: 'user', content: 'x' }, badName]), 'not_representable');
  });

  it('absent, null and empty-string arguments mean a call without arguments', () => {
    const msgs = [
      { role: 'user', content: 'time?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'now', arguments: '' } }] },
    ] as Message[];
    const o = TARGETS.openai.project(msgs);
    assert.ok(o.ok);
    const call = ((o.example.messages as Array<Record<string, unknown>>)[1].tool_calls as Array<{ function: unknown }>)[0];
    assert.deepEqual(call.function, { name: 'now', arguments: '{}' });
  });

  it('openai leaves out empty system messages; other dict/list content becomes JSON text', () => {
    const p = TARGETS.openai.project([
      { role: 'system', content: '' },
      { role: 'user', content: { question: 'x', n: 2 } },
      { role: 'assistant', content: ['a', 'b'] },
    ] as Message[]);
    assert.ok(p.ok);
    assert.deepEqual(p.example.messages, [
      { role: 'user', content: '{"question":"x","n":2}' },
      { role: 'assistant', content: '["a","b"]' },
    ]);
  });

  it('customizer supplements incomplete supplied tool definitions', () => {
    const p = TARGETS['nemo-customizer'].project(input('agent-tool-call'));
    assert.ok(p.ok);
    const supplied = [{ type: 'function' as const, function: { name: 'calculate' } }];
    const { definitions, inferred } = toolsFor(p.toolNames, supplied, new ToolInference());
    assert.deepEqual(inferred, ['search']);
    const line = TARGETS['nemo-customizer'].attachTools(p.example, definitions);
    const tools = line.tools as Array<{ function: Record<string, unknown> }>;
    assert.deepEqual(tools[0].function, {
      name: 'calculate',
      description: 'Tool calculate.',
      parameters: { type: 'object', properties: {} },
    });
    assert.deepEqual(TARGETS['nemo-customizer'].validateLine(line, 1), []);
  });

  it('getTarget knows the three names and nothing else', () => {
    assert.equal(getTarget('nemo').name, 'nemo');
    assert.throws(() => getTarget('alpaca'), /unknown target "alpaca"/);
  });
});

describe('nemo tool-call arguments reach the chat template unchanged', () => {
  const recorded = '{"city": "Zürich", "n": 1e16, "big": 18446744073709551615}';
  const messages = parseJsonText(JSON.stringify([
    { role: 'user', content: 'Weather in Zürich?' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'as_string', arguments: recorded } },
        { id: 'b', type: 'function', function: { name: 'as_object', arguments: '@OBJ@' } },
      ],
    },
  ]).replace('"@OBJ@"', '{"city":"Zürich","n":1e16,"big":18446744073709551615}')) as Message[];

  it('writes arguments as the JSON string: recorded strings verbatim, objects compact with their recorded numbers, non-ASCII unescaped', () => {
    const projection = TARGETS.nemo.project(messages);
    assert.ok(projection.ok);
    const calls = (projection.example.messages as Array<{ tool_calls?: Array<{ function: { arguments: unknown } }> }>)[1].tool_calls!;
    assert.deepEqual(calls.map((c) => c.function.arguments), [recorded, '{"city":"Zürich","n":1e16,"big":18446744073709551615}']);
    assert.deepEqual(TARGETS.nemo.validateLine(parseJsonText(writeJson(projection.example)), 1), []);
  });

  it("AutoModel's normalization (json.dumps of non-strings) leaves the written arguments as they are", (t) => {
    const probe = spawnSync('python3', ['-c', 'print(1)'], { encoding: 'utf8' });
    if (probe.status !== 0) return t.skip('python3 is not installed');
    const projection = TARGETS.nemo.project(messages);
    assert.ok(projection.ok);
    const line = writeJson(projection.example);
    // chat_dataset.py `_normalize_tool_calls`: a string passes, anything else becomes json.dumps(value).
    const script = String.raw`
import json, sys
row = json.loads(sys.stdin.read())
out = []
for m in row['messages']:
    for c in m.get('tool_calls') or []:
        a = c['function']['arguments']
        out.append(a if isinstance(a, str) else json.dumps(a))
print(json.dumps(out, ensure_ascii=False))`;
    const reached = spawnSync('python3', ['-c', script], { input: line, encoding: 'utf8' });
    assert.equal(reached.status, 0, reached.stderr);
    assert.deepEqual(JSON.parse(reached.stdout), [recorded, '{"city":"Zürich","n":1e16,"big":18446744073709551615}']);
    // The object form would have reached the template rewritten: what the model must not learn.
    const asObject = spawnSync('python3', ['-c', script], { input: line.replace(JSON.stringify(recorded), recorded), encoding: 'utf8' });
    assert.equal(asObject.status, 0, asObject.stderr);
    assert.equal((JSON.parse(asObject.stdout) as string[])[0], '{"city": "Z\\u00fcrich", "n": 1e+16, "big": 18446744073709551615}');
  });

  it('validate --format nemo accepts object arguments in files it did not write, with a warning', () => {
    const line = { messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: '', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: { x: 1 } } }] }] };
    const found = TARGETS.nemo.validateLine(line, 1);
    assert.deepEqual(found.map((e) => [e.code, e.severity]), [['arguments_type', 'warning']]);
  });
});
