/** Tool inference and tools files, special-token detection, token counting. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Message } from '../src/record.js';
import {
  completeForCustomizer,
  countExampleTokens,
  customizerGaps,
  findSpecialTokens,
  findSpecialTokensDeep,
  KNOWN_SPECIAL_TOKENS,
  loadTokenCounter,
  loadToolsFile,
  recordedDefinitions,
  summarize,
  ToolInference,
  ToolsFileError,
  toolsFor,
} from '../src/targets/index.js';
import { toolCallFacts } from '../src/tool-calls.js';
import { tempDir } from './helpers.js';

function step(calls: Array<{ id?: string; name: string; arguments: unknown }>): Message {
  return {
    role: 'assistant',
    content: '',
    tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
  };
}

describe('ToolInference', () => {
  it('types arguments from the values seen and requires names present in every call', () => {
    const inference = new ToolInference();
    inference.observe([
      { role: 'user', content: 'x' },
      step([{ id: 'a', name: 'search', arguments: { query: 'x', limit: 5, filters: { lang: 'fr' } } }]),
    ]);
    inference.observe([
      step([{ id: 'b', name: 'search', arguments: '{"query":"y","limit":2.5,"tags":["a"],"exact":true}' }]),
      step([{ id: 'c', name: 'search', arguments: { query: 'z', limit: null } }]),
      step([{ id: 'd', name: 'calculate', arguments: { expression: '1+1' } }]),
      step([{ id: 'e', name: 'calculate', arguments: 'expression=1+1' }]),
    ]);
    assert.deepEqual(inference.definitions(), [
      {
        type: 'function',
        function: {
          name: 'calculate',
          description: 'Inferred by traces from 1 recorded call.',
          parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
        },
      },
      {
        type: 'function',
        function: {
          name: 'search',
          description: 'Inferred by traces from 3 recorded calls.',
          parameters: {
            type: 'object',
            properties: {
              exact: { type: 'boolean' },
              filters: { type: 'object' },
              limit: { type: ['null', 'number'] },
              query: { type: 'string' },
              tags: { type: 'array' },
            },
            required: ['limit', 'query'],
          },
        },
      },
    ]);
  });

  it('counts a call repeated across prefix records once', () => {
    const first = [{ role: 'user', content: 'x' }, step([{ id: 'a', name: 'f', arguments: { x: 1 } }])] as Message[];
    const inference = new ToolInference();
    inference.observe(first);
    inference.observe([...first, { role: 'tool', content: '1', tool_call_id: 'a' }, step([{ id: 'b', name: 'f', arguments: {} }])]);
    const def = inference.definition('f');
    assert.equal(def?.function.description, 'Inferred by traces from 2 recorded calls.');
    assert.deepEqual(def?.function.parameters, { type: 'object', properties: { x: { type: 'integer' } }, required: [] });
  });

  it('counts distinct calls past what it holds in memory (rows on disk by key) as a set of every key would', () => {
    // 150,000 calls of 90,000 keys, over two tools, repeats far apart (past any recent-calls
    // cache) and a key's later calls with other argument types, which its first call decides.
    let seed = 11;
    const next = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const argSets: Record<string, unknown>[] = [{ q: 'x' }, { q: 'x', limit: 3 }, { q: 1.5 }, { limit: 2, flag: true }, {}];
    const reference = new Map<string, { calls: Set<string>; types: Map<string, Set<string>>; presence: Map<string, number> }>();
    const inference = new ToolInference();
    for (let i = 0; i < 150_000; i++) {
      const tool = next(3) === 0 ? 'lookup' : 'search';
      const id = `call_${next(90_000)}`;
      const args = argSets[next(argSets.length)];
      inference.observe([step([{ id, name: tool, arguments: args }])]);
      let r = reference.get(tool);
      if (r === undefined) reference.set(tool, (r = { calls: new Set(), types: new Map(), presence: new Map() }));
      if (r.calls.has(id)) continue;
      r.calls.add(id);
      for (const [arg, value] of Object.entries(args)) {
        const type = typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;
        if (!r.types.has(arg)) r.types.set(arg, new Set());
        r.types.get(arg)!.add(type);
        r.presence.set(arg, (r.presence.get(arg) ?? 0) + 1);
      }
    }
    try {
      for (const [tool, r] of reference) {
        const def = inference.definition(tool)!.function;
        assert.equal(def.description, `Inferred by traces from ${r.calls.size} recorded calls.`, tool);
        const args = [...r.types.keys()].sort();
        assert.deepEqual(Object.keys(def.parameters!.properties as object), args, tool);
        assert.deepEqual(def.parameters!.required, args.filter((a) => r.presence.get(a) === r.calls.size), tool);
        for (const arg of args) {
          const types = [...r.types.get(arg)!].filter((t) => !(t === 'integer' && r.types.get(arg)!.has('number'))).sort();
          assert.deepEqual((def.parameters!.properties as Record<string, { type: unknown }>)[arg].type, types.length === 1 ? types[0] : types, `${tool}.${arg}`);
        }
      }
    } finally {
      inference.dispose();
    }
    assert.deepEqual(inference.names(), ['lookup', 'search']);
  });

  it('calls cross threads as facts: ids, argument names and id-less arguments holding line breaks count as the calls do', () => {
    const messages = [
      step([{ id: 'a\nb', name: 'f', arguments: { 'x\ny': 1 } }]),
      step([{ id: 'a', name: 'f', arguments: { z: 'w' } }]),
      // Same id again: the same call. Two id-less calls differ by their arguments, line breaks included.
      step([{ id: 'a\nb', name: 'f', arguments: { 'x\ny': 2.5 } }]),
      step([{ name: 'g', arguments: { q: 'one\ntwo' } }, { name: 'g', arguments: { q: 'one\nthree' } }, { name: 'g', arguments: { q: 'one\ntwo' } }]),
    ];
    const direct = new ToolInference();
    direct.observe(messages);
    const viaFacts = new ToolInference();
    // As a worker hands them over: one record at a time, in order.
    for (const m of messages) viaFacts.observeFacts(toolCallFacts([m]));
    assert.deepEqual(viaFacts.definitions(), direct.definitions());
    assert.deepEqual(direct.definition('f')?.function, {
      name: 'f',
      description: 'Inferred by traces from 2 recorded calls.',
      parameters: { type: 'object', properties: { 'x\ny': { type: 'integer' }, z: { type: 'string' } }, required: [] },
    });
    assert.equal(direct.definition('g')?.function.description, 'Inferred by traces from 2 recorded calls.');
  });

  it('toolsFor: supplied first, inferred for the rest, nothing when no tool is called', () => {
    const inference = new ToolInference();
    inference.observe([step([{ id: 'a', name: 'f', arguments: {} }, { id: 'b', name: 'g', arguments: {} }])]);
    const supplied = [{ type: 'function' as const, function: { name: 'g', description: 'G.' } }, { type: 'function' as const, function: { name: 'h' } }];
    const result = toolsFor(['f', 'g'], supplied, inference);
    assert.deepEqual(result.definitions.map((d) => d.function.name), ['g', 'h', 'f']);
    assert.deepEqual(result.inferred, ['f']);
    assert.deepEqual(toolsFor([], supplied, inference), { definitions: [], inferred: [], recorded: [] });
    assert.deepEqual(toolsFor(['f'], [], inference.definitions()).definitions, [inference.definition('f')]);
  });

  it('toolsFor: a record\'s own definitions first, all of them; a called tool they lack from the file, else inferred', () => {
    const inference = new ToolInference();
    inference.observe([step([{ id: 'a', name: 'f', arguments: {} }, { id: 'b', name: 'g', arguments: {} }, { id: 'c', name: 'k', arguments: {} }])]);
    const supplied = [{ type: 'function' as const, function: { name: 'g', description: 'G from the file.' } }, { type: 'function' as const, function: { name: 'h' } }];
    const recorded = [{ type: 'function' as const, function: { name: 'z', description: 'Offered, not called.' } }, { type: 'function' as const, function: { name: 'f', description: 'F as recorded.' } }];
    const result = toolsFor(['f', 'g', 'k'], supplied, inference, recorded);
    // Recorded order, then the file's g (h was not offered to this call), then k inferred.
    assert.deepEqual(result.definitions.map((d) => [d.function.name, d.function.description]), [
      ['z', 'Offered, not called.'],
      ['f', 'F as recorded.'],
      ['g', 'G from the file.'],
      ['k', 'Inferred by traces from 1 recorded call.'],
    ]);
    assert.deepEqual([result.recorded, result.inferred], [['z', 'f'], ['k']]);
    // Calling nothing, an example carries nothing, as with a file.
    assert.deepEqual(toolsFor([], supplied, inference, recorded), { definitions: [], inferred: [], recorded: [] });
    // One schema per file: the run's list on every line, a recorded definition in place of its name's.
    const everyLine = toolsFor(['f', 'g', 'h', 'k'], supplied, inference, recorded, true);
    assert.deepEqual(everyLine.definitions.map((d) => [d.function.name, d.function.description ?? null]), [
      ['g', 'G from the file.'],
      ['h', null],
      ['f', 'F as recorded.'],
      ['k', 'Inferred by traces from 1 recorded call.'],
    ]);
    assert.deepEqual([everyLine.recorded, everyLine.inferred], [['f'], ['k']]);
  });

  it('recordedDefinitions: function tools a target can write, in recorded order, the first of a name; the rest left out', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } } };
    assert.deepEqual(
      recordedDefinitions([
        { type: 'function', function: { name: 'get_weather', description: 'Weather.', parameters, strict: true } },
        { type: 'web_search_preview' },
        { type: 'function', function: { name: 'bad name' } },
        { type: 'function', function: { name: 'x', parameters: 'cut {"ty' } },
        'a JSON text cut at a length limit',
        { name: 'bare', description: 'Bare form.' },
        { type: 'function', function: { name: 'get_weather', description: 'Again.' } },
      ]),
      [
        { type: 'function', function: { name: 'get_weather', description: 'Weather.', parameters, strict: true } },
        { type: 'function', function: { name: 'bare', description: 'Bare form.' } },
      ],
    );
    assert.deepEqual(recordedDefinitions(null), []);
    assert.deepEqual(recordedDefinitions(undefined), []);
  });
});

describe('loadToolsFile', () => {
  const dir = tempDir('traces-tools-');
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads OpenAI-style definitions and wraps the bare form', async () => {
    const path = write('tools.json', JSON.stringify([
      { type: 'function', function: { name: 'f', description: 'F.', parameters: { type: 'object', properties: {} } } },
      { name: 'g', parameters: { type: 'object' } },
    ]));
    assert.deepEqual(await loadToolsFile(path), [
      { type: 'function', function: { name: 'f', description: 'F.', parameters: { type: 'object', properties: {} } } },
      { type: 'function', function: { name: 'g', parameters: { type: 'object' } } },
    ]);
  });

  it('names the file in every error', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['broken.json', '[{', /not valid JSON/],
      ['object.json', '{"tools":[]}', /expected a JSON array/],
      ['noname.json', '[{"type":"function","function":{}}]', /entry 0 has no valid name/],
      ['twice.json', '[{"name":"f"},{"name":"f"}]', /defined twice/],
    ];
    for (const [name, text, pattern] of cases) {
      const path = write(name, text);
      await assert.rejects(loadToolsFile(path), (e: Error) => e instanceof ToolsFileError && e.message.includes(path) && pattern.test(e.message));
    }
    await assert.rejects(loadToolsFile(join(dir, 'missing.json')), /cannot read it/);
  });
});

describe('supplied definitions for NeMo Customizer', () => {
  it('says what completing them fills in or replaces; a complete one is left as it is', () => {
    const complete = { type: 'function' as const, function: { name: 'f', description: 'd', parameters: { type: 'object', properties: { a: { type: 'string' } } } } };
    assert.deepEqual(customizerGaps(complete), []);
    assert.deepEqual(completeForCustomizer(complete), complete);
    const partial = { type: 'function' as const, function: { name: 'g', parameters: { type: 'array', properties: [] } } };
    assert.deepEqual(customizerGaps(partial as never), ['a description', 'parameters of type "object" (not "array")', 'properties']);
    assert.deepEqual(customizerGaps({ type: 'function', function: { name: 'h', description: '' } }), ['a description', 'parameters']);
  });
});

describe('special tokens', () => {
  it('finds every known token', () => {
    for (const token of KNOWN_SPECIAL_TOKENS) assert.deepEqual(findSpecialTokens(`a ${token} b`), [token]);
  });

  it('finds the general shape, once each, in order', () => {
    assert.deepEqual(
      findSpecialTokens('<|eot_id|> x <|start_header_id|> <|eot_id|> <|reserved_special_token_0|> <｜end▁of▁sentence｜>'),
      ['<|eot_id|>', '<|start_header_id|>', '<|reserved_special_token_0|>', '<｜end▁of▁sentence｜>'],
    );
  });

  it('ignores lookalikes', () => {
    for (const text of ['a <| b |> c', 'x |> y', '<||>', '<| im_start |>', 'pipe <|> here', 'no tokens']) {
      assert.deepEqual(findSpecialTokens(text), [], text);
    }
  });

  it('searches every string of an example', () => {
    const example = {
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi <|im_end|>' }] },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { q: '<|fim_prefix|>' } } }] },
      ],
    };
    assert.deepEqual(findSpecialTokensDeep(example).sort(), ['<|fim_prefix|>', '<|im_end|>']);
  });
});

describe('tokens', () => {
  it('counts text holding special tokens without throwing', async () => {
    const counter = await loadTokenCounter();
    assert.equal(counter.encoding, 'o200k_base');
    assert.ok(counter.count('what is <|endoftext|>?') > 3);
    assert.equal(counter.count(''), 0);
  });

  it('adds 3 per message plus 3 per example, and counts assistant content, reasoning and calls', async () => {
    const counter = await loadTokenCounter('cl100k_base');
    const c = (s: string) => counter.count(s);
    const example = {
      messages: [
        { role: 'user', content: 'Hello there' },
        { role: 'assistant', content: 'Hi', reasoning_content: 'greet', tool_calls: [{ function: { name: 'f', arguments: { a: 1 } } }] },
      ],
    };
    const assistant = c('Hi') + c('greet') + c('f') + c('{"a":1}');
    assert.deepEqual(countExampleTokens(counter, example), {
      total: 3 + (3 + c('user') + c('Hello there')) + (3 + c('assistant') + assistant),
      assistant,
    });
    assert.deepEqual(countExampleTokens(counter, 'not an example'), { total: 0, assistant: 0 });
  });

  it('counts as trained only the assistant turns without weight 0 (what --train-on last writes before the last)', async () => {
    const counter = await loadTokenCounter('o200k_base');
    const c = (s: string) => counter.count(s);
    const earlier = 'a long earlier answer with many words in it';
    const example = {
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: earlier, weight: 0 },
        { role: 'user', content: 'and?' },
        { role: 'assistant', content: 'ok', weight: 1 },
      ],
    };
    const counts = countExampleTokens(counter, example);
    assert.equal(counts.assistant, c('ok'));
    // The untrained turn is still part of the example's length.
    assert.equal(counts.total, 3 + 4 * 3 + 2 * c('user') + 2 * c('assistant') + c('hello') + c(earlier) + c('and?') + c('ok'));
  });

  it('summarize: min, median, p95, max, total', () => {
    assert.deepEqual(summarize([]), { count: 0, min: 0, median: 0, p95: 0, max: 0, total: 0 });
    const values = Array.from({ length: 21 }, (_, i) => 20 - i);
    assert.deepEqual(summarize(values), { count: 21, min: 0, median: 10, p95: 19, max: 20, total: 210 });
    assert.equal(summarize([1, 2, 3, 4]).median, 2.5);
  });

  it('summarize counts by value: the median and p95 of lists with many repeats are those of the sorted list', () => {
    // numpy's linear interpolation over the list itself, sorted: what the histogram must reproduce.
    const reference = (values: number[], q: number): number => {
      const sorted = [...values].sort((a, b) => a - b);
      const pos = (sorted.length - 1) * q;
      const lo = Math.floor(pos);
      return Math.round((sorted[lo] + (sorted[Math.ceil(pos)] - sorted[lo]) * (pos - lo)) * 10) / 10;
    };
    let seed = 7;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (const [length, spread] of [[1, 5], [2, 3], [19, 4], [1000, 40], [4001, 2000], [777, 1]]) {
      const values = Array.from({ length }, () => Math.floor(next() * spread) * 3 + 1);
      const got = summarize(values);
      const what = `${length} values in ${spread} lengths`;
      assert.equal(got.median, reference(values, 0.5), what);
      assert.equal(got.p95, reference(values, 0.95), what);
      assert.equal(got.total, values.reduce((a, b) => a + b, 0), what);
      assert.equal(got.min, Math.min(...values), what);
      assert.equal(got.max, Math.max(...values), what);
      assert.equal(got.count, length, what);
    }
  });
});
