/**
 * Cut answers from recorders that keep no stop reason (issue 52). Synalinks records none: the
 * request's token limit, where the record holds it (a LanguageModel's `max_tokens`, which its
 * get_config spreads into the recorded config with its other default generation arguments,
 * SynaLinks/synalinks a4c02f9 language_model.py), is compared with the completion tokens; an
 * OTLP span's `max_tokens` the same. Where nothing tells, the summary says how many records were
 * not checked, never that the stage found nothing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalValueHash } from '../src/canonical/canonical.js';
import { FIXTURES, runCli, runCliJson, tempDir, flat } from './helpers.js';

type Drop = { call_id?: string; reason: string; detail?: string; flagged?: true };
type DryRun = { dropped: Record<string, number>; drops: Drop[]; quality: { truncated_not_checked: number } };

/** A Synalinks line whose LanguageModel config records `maxTokens` (null: none) and whose usage counts `completionTokens`. */
function line(n: number, answer: string, completionTokens: number, maxTokens: number | null): string {
  const config = {
    module: 'synalinks',
    class_name: 'LanguageModel',
    config: { model: 'openai/gpt-4o-mini', api_base: null, timeout: 600, retry: 1, retry_max_wait: 60, caching: false, cache_dir: null, name: 'main_lm', description: 'A language model API wrapper.', ...(maxTokens === null ? {} : { max_tokens: maxTokens }) },
    registered_name: null,
  };
  const inputs = [{ role: 'user', content: `Raconte une histoire numéro ${n}.` }];
  const completion = { role: 'assistant', content: answer };
  return JSON.stringify({
    synalinks_version: '0.9.014',
    call_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    parent_call_id: null,
    program: 'conte',
    module: 'generator',
    timestamp: 1783412130 + n,
    duration: 1.5,
    usage: { prompt_tokens: 30, completion_tokens: completionTokens, total_tokens: 30 + completionTokens, cached_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0 },
    cost: 0.001,
    messages: [...inputs, completion],
    inputs_hash: canonicalValueHash(inputs),
    outputs: completion,
    config,
    config_hash: canonicalValueHash(config),
  });
}

function tree(lines: string[]): string {
  const root = path.join(tempDir('traces-stop-'), 'tree');
  mkdirSync(path.join(root, 'conte', 'generator'), { recursive: true });
  writeFileSync(path.join(root, 'conte', 'generator', 'generator_20261201-215712.jsonl'), `${lines.join('\n')}\n`);
  return root;
}

describe('truncated, where the recorder keeps no stop reason', () => {
  it('a Synalinks record cut at the max_tokens its LanguageModel config records is dropped; one that ends before is kept', () => {
    const root = tree([line(0, 'Il était une fois une princesse qui', 64, 64), line(1, 'Il était une fois un roi. Fin.', 12, 64)]);
    const run = runCliJson<DryRun>(['export', root, '--format', 'openai', '--dry-run', '--json']);
    const cut = run.drops.filter((d) => d.reason === 'truncated');
    assert.deepEqual(cut.map((d) => [d.call_id, d.detail]), [['00000000-0000-4000-8000-000000000000', '64 completion tokens >= the recorded max_tokens 64']]);
    assert.equal(run.quality.truncated_not_checked, 0);
  });

  it('records that hold no limit are counted as not checked, in one line, never "found nothing"', () => {
    const root = tree([line(0, 'Il était une fois une princesse qui', 64, null), line(1, 'Il était une fois un roi. Fin.', 12, null), line(2, 'Un conte court.', 5, 100)]);
    const run = runCliJson<DryRun>(['export', root, '--format', 'openai', '--dry-run', '--json']);
    assert.equal(run.quality.truncated_not_checked, 2);
    const text = runCli(['export', root, '--format', 'openai', '--dry-run']);
    assert.match(flat(text.stderr), /truncated: not checked for 2 records that record no stop reason; --max-completion-tokens N checks them/);
    assert.doesNotMatch(text.stderr, /truncated[^\n]*dropped none/);
    // The option checks them: none is left unchecked.
    const checked = runCliJson<DryRun>(['export', root, '--format', 'openai', '--dry-run', '--json', '--max-completion-tokens', '64']);
    assert.equal(checked.quality.truncated_not_checked, 0);
    assert.equal(checked.dropped.truncated, 1);
  });

  it("an OTLP span with no finish reason is checked against its request's max_tokens", () => {
    // OpenLLMetry's genuine spans (test/fixtures/otel), their finish reasons taken out: an instrumentation that keeps none.
    const spans = readFileSync(path.join(FIXTURES, 'otel', 'openllmetry.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        type Attribute = { key: string; value: { stringValue?: string } };
        const document = JSON.parse(l) as { resourceSpans: { scopeSpans: { spans: { attributes?: Attribute[] }[] }[] }[] };
        for (const rs of document.resourceSpans) {
          for (const ss of rs.scopeSpans) {
            for (const span of ss.spans) {
              span.attributes = span.attributes?.filter((a) => a.key !== 'gen_ai.response.finish_reasons');
              for (const a of span.attributes ?? []) {
                if (a.key !== 'gen_ai.output.messages' || a.value.stringValue === undefined) continue;
                const messages = JSON.parse(a.value.stringValue) as Record<string, unknown>[];
                for (const m of messages) delete m.finish_reason;
                a.value.stringValue = JSON.stringify(messages);
              }
            }
          }
        }
        return JSON.stringify(document);
      });
    const file = path.join(tempDir('traces-stop-otlp-'), 'spans.jsonl');
    writeFileSync(file, `${spans.join('\n')}\n`);
    const run = runCliJson<DryRun>(['export', file, '--format', 'openai', '--dry-run', '--json']);
    const cut = run.drops.filter((d) => d.reason === 'truncated');
    assert.equal(cut.length, 1, JSON.stringify(run.drops));
    // The OTLP reader already infers the cut from the span's own max_tokens (stop_reason_inferred);
    // either way the answer is dropped as truncated, never exported.
    assert.match(cut[0].detail!, /completion tokens >= the recorded max_tokens \d+|stop reason "length"/);
    assert.match(cut[0].call_id!, /^[0-9a-f]{32}:[0-9a-f]{16}$/);
    assert.ok(run.quality.truncated_not_checked > 0);
  });
});
