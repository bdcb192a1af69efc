/**
 * OTLP spans of the emitters of sets 6, 8 and 9 (tools/otel-fixtures/generate.cjs): Langfuse's
 * OTel SDK 5 and 4 around the openai client, a Mastra agent with its OTel exporter, and
 * OpenInference's span processor over the AI SDK. Each record is compared with what the fake
 * server logged (server-log-6/8/9.jsonl), message for message; the calls that failed, were cut
 * or streamed are checked against the log too.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalValueText } from '../src/canonical/canonical.js';
import type { TraceRecord } from '../src/record.js';
import { FIXTURES } from './helpers.js';
import { readOtlp } from './otlp-helpers.js';
import { finishClass, recordShape, serverLog, wireAnswer, wireFinish, wireInputs, wireUsage } from './otlp-wire.js';

const OTEL = path.join(FIXTURES, 'otel');
const LOG = serverLog(['server-log-6.jsonl', 'server-log-8.jsonl', 'server-log-9.jsonl']);
const EMITTERS = ['langfuse-5', 'langfuse-4', 'mastra', 'openinference-vercel'];

function asWire(r: TraceRecord): string {
  const all = r.messages();
  return canonicalValueText([all.slice(0, -1).map(recordShape), recordShape(all[all.length - 1])]);
}

describe('OTLP spans of Langfuse, Mastra and OpenInference over the AI SDK, against the fake server log', () => {
  for (const emitter of EMITTERS) {
    it(`${emitter}: every answered call is one record holding what went over the wire, with its usage and finish`, async () => {
      const { records, damaged } = await readOtlp(path.join(OTEL, `${emitter}.jsonl`));
      assert.equal(damaged, 0);
      const calls = LOG.filter((e) => e.emitter === emitter);
      assert.equal(records.length, calls.length);
      const answered = calls.filter((e) => e.status === 200);
      const ok = records.filter((r) => r.status === 'ok');
      const wire = (e: (typeof LOG)[number]) => canonicalValueText([wireInputs(e), wireAnswer(e)]);
      assert.deepEqual(ok.map(asWire).sort(), answered.map(wire).sort());
      for (const r of ok) {
        const entry = answered.find((e) => wire(e) === asWire(r))!;
        assert.equal(r.notExportable, null, entry.scenario);
        assert.equal(r.model, entry.request.model, entry.scenario);
        // Usage of a stream is what the last chunk said, when the client asked for it.
        const usage = wireUsage(entry);
        if (usage !== null) assert.deepEqual(r.usage === null ? null : [r.usage.prompt_tokens, r.usage.completion_tokens], usage, entry.scenario);
        // Langfuse records no finish reason: a cut answer is inferred from its tokens, the others have none.
        if (emitter.startsWith('langfuse')) assert.equal(r.stopReason, entry.scenario === 'cut' ? 'length' : null, entry.scenario);
        else assert.equal(finishClass(r.stopReason), wireFinish(entry), entry.scenario);
      }
      const loop = ok.filter((r) => r.messages().some((m) => m.role === 'tool'));
      assert.equal(loop.length, 1);
      assert.deepEqual(loop[0].messages().filter((m) => m.role === 'tool').map((m) => m.tool_call_id), ['call_paris_0', 'call_oslo_1']);
      const failed = records.filter((r) => r.status === 'exception');
      assert.equal(failed.length, 1);
      assert.equal(failed[0].model, 'gpt-fake-broken');
      const cut = records.filter((r) => finishClass(r.stopReason) === 'length');
      assert.equal(cut.length, 1);
      assert.equal(cut[0].completion()!.content, 'Answer to "Tell me everything about');
    });
  }

  it('content capture off (Mastra hideInput/hideOutput, the AI SDK recordInputs/recordOutputs false): one no_content record', async () => {
    for (const emitter of ['mastra', 'openinference-vercel']) {
      const { records } = await readOtlp(path.join(OTEL, `${emitter}-content-off.jsonl`));
      assert.equal(records.length, 1, emitter);
      assert.match(records[0].notExportable ?? '', /^no_content: /, emitter);
    }
  });
});
