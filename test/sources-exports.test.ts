/**
 * Langfuse and LangSmith exports (issue 50), on the fixtures their own code made
 * (tools/export-fixtures): every format of one platform gives the same records, only model
 * calls are records, and what each export loses is said, never invented.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { DamagedLine, TraceRecord } from '../src/record.js';
import { discover } from '../src/sources/discover.js';
import { readFiles } from '../src/sources/read.js';
import { FIXTURES, tempDir } from './helpers.js';

const LANGFUSE = path.join(FIXTURES, 'langfuse');
const LANGSMITH = path.join(FIXTURES, 'langsmith');

async function read(root: string): Promise<{ records: TraceRecord[]; damaged: DamagedLine[]; sources: string[] }> {
  const discovery = await discover([root]);
  const out = { records: [] as TraceRecord[], damaged: [] as DamagedLine[], sources: discovery.files.map((f) => f.source) };
  for await (const batch of readFiles(discovery.files)) {
    out.records.push(...batch.records);
    out.damaged.push(...batch.damaged);
  }
  return out;
}

/** What a record says, less where it came from: the same call read from two formats says the same. */
function gist(record: TraceRecord): unknown {
  return {
    status: record.status,
    model: record.model,
    inputs: record.inputsHash,
    completion: record.completion(),
    // A failed call's usage: v1 of the API gives zeros where the export gives none.
    usage: record.status === 'ok' ? record.usage : null,
    exception: record.exception,
    cut: record.cutValue ?? null,
    stop: record.stopReason,
  };
}

describe('Langfuse observations exports', () => {
  const formats = ['blob-export/observations.jsonl', 'blob-export/observations.csv', 'blob-export/observations.parquet', 'ui-export/observations.json', 'ui-export/observations.jsonl', 'api/observations-v1.json', 'api/observations-v2.json'];

  it('reads every format as langfuse records, the same calls from each', async () => {
    const all = await Promise.all(formats.map((f) => read(path.join(LANGFUSE, f))));
    for (const [i, result] of all.entries()) {
      assert.deepEqual(result.sources, ['langfuse'], formats[i]);
      assert.equal(result.damaged.length, 0, formats[i]);
      // GENERATIONs only: the span, the tool and the event are no calls.
      assert.equal(result.records.length, 5, formats[i]);
      assert.deepEqual(result.records.map(gist), all[0]!.records.map(gist), `${formats[i]} differs from ${formats[0]}`);
    }
  });

  it('takes a tool call name from tool_call_names when the entry lacks it, and the tools from tool_definitions', async () => {
    const { records } = await read(path.join(LANGFUSE, 'blob-export/observations.csv'));
    const asked = records.find((r) => r.completion()?.tool_calls !== undefined)!;
    assert.equal(asked.completion()!.tool_calls![0]!.function.name, 'get_weather');
    // The same row with the call only in the tool columns, as a streamed answer leaves it.
    const dir = tempDir();
    const row = {
      id: 'o1', trace_id: 't1', type: 'GENERATION', parent_observation_id: null, input: '[{"role":"user","content":"Weather in Paris?"}]', output: '',
      provided_model_name: 'gpt-4o-mini', tool_calls: ['{"id":"call_1","arguments":"{\\"city\\":\\"Paris\\"}","type":"function","index":0}'], tool_call_names: ['get_weather'],
      tool_definitions: { get_weather: '{"description":"Weather","parameters":"{\\"type\\":\\"object\\"}"}' }, usage_details: { input: 5, output: 3 }, model_parameters: '{"max_tokens":"256"}',
    };
    writeFileSync(path.join(dir, 'observations.jsonl'), JSON.stringify(row) + '\n');
    const [record] = (await read(dir)).records;
    assert.deepEqual(record!.completion()!.tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }]);
    assert.deepEqual(record!.offeredTools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } }]);
    assert.equal(record!.cutValue, null);
  });

  it('marks an answer whose output tokens equal max_tokens as cut, since Langfuse keeps no finish reason', async () => {
    const { records } = await read(path.join(LANGFUSE, 'blob-export/observations.parquet'));
    const cut = records.filter((r) => r.cutValue);
    assert.equal(cut.length, 1);
    assert.equal(cut[0]!.usage!.completion_tokens, 5);
    assert.ok(records.every((r) => r.stopReason === null));
  });

  it('reads a streamed answer kept as plain text, and level ERROR as a failed call', async () => {
    const { records } = await read(path.join(LANGFUSE, 'blob-export/observations.jsonl'));
    assert.ok(records.some((r) => r.completion()?.content === 'Owls can turn their heads about 270 degrees.'));
    const failed = records.filter((r) => r.status === 'exception');
    assert.deepEqual(failed.map((r) => r.exception), ['400 Invalid request: the model refused the context']);
  });
});

describe('LangSmith runs exports', () => {
  it('reads the bulk export and the runs JSON as the same llm runs; chain, prompt and tool runs are no calls', async () => {
    const bulk = await read(path.join(LANGSMITH, 'bulk-export'));
    const listed = await read(path.join(LANGSMITH, 'runs.jsonl'));
    assert.deepEqual(bulk.sources, ['langsmith']);
    assert.deepEqual(listed.sources, ['langsmith']);
    assert.equal(listed.records.length, 6);
    assert.deepEqual(bulk.records.map(gist), listed.records.map(gist));
  });

  it('keeps the recorded finish reason, the tool loop and the error', async () => {
    const { records } = await read(path.join(LANGSMITH, 'runs.jsonl'));
    assert.deepEqual(records.map((r) => r.stopReason), ['stop', 'tool_calls', 'stop', 'stop', 'length', null]);
    const answered = records[2]!.messages();
    assert.deepEqual(answered.map((m) => m.role), ['system', 'user', 'assistant', 'tool', 'assistant']);
    assert.equal(records[1]!.completion()!.tool_calls![0]!.function.name, 'get_weather');
    assert.match(records[5]!.exception!, /^400 Invalid request/);
    assert.equal(records[0]!.provider, 'openai');
  });
});
