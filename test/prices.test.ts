import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Usage } from '../src/record.js';
import { defaultPriceTable, estimateUsd, familyOf, loadPriceTable, PriceTable, withoutDateSuffix } from '../src/pricing/table.js';
import { FIXTURES, runCli, tempDir } from './helpers.js';

const TABLE = new PriceTable(
  {
    written: '2026-11-29',
    aliases: { 'claude-3-5-sonnet-latest': 'claude-3-5-sonnet' },
    prices: {
      openai: {
        'gpt-4o': { input: 2.5, output: 10, cached_input: 1.25 },
        'gpt-4.x': { input: 2, output: 8 },
        o3: { input: 2, output: 8, cached_input: 0.5, reasoning: 4 },
      },
      anthropic: {
        'claude-3-5-sonnet': { input: 3, output: 15, cached_input: 0.3 },
        'claude-sonnet-4-x': { input: 3, output: 15 },
      },
      ollama: { '*': { input: 0, output: 0 } },
    },
  },
  'test',
);

function usage(prompt: number, completion: number, cached = 0, reasoning = 0): Usage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    cached_tokens: cached,
    cache_creation_tokens: 0,
    reasoning_tokens: reasoning,
  };
}

describe('price lookup rules', () => {
  it('1. exact model', () => {
    assert.deepEqual(TABLE.lookup('openai', 'gpt-4o'), { provider: 'openai', entry: 'gpt-4o', rule: 'exact', price: { input: 2.5, output: 10, cached_input: 1.25 } });
  });

  it('2. the date suffix removed, both forms', () => {
    assert.equal(withoutDateSuffix('gpt-4o-2024-08-06'), 'gpt-4o');
    assert.equal(withoutDateSuffix('claude-3-5-sonnet-20241022'), 'claude-3-5-sonnet');
    assert.equal(withoutDateSuffix('gpt-4o'), null);
    const dashed = TABLE.lookup('openai', 'gpt-4o-2024-08-06');
    assert.deepEqual([dashed?.entry, dashed?.rule], ['gpt-4o', 'date_suffix']);
    const compact = TABLE.lookup('anthropic', 'claude-3-5-sonnet-20241022');
    assert.deepEqual([compact?.entry, compact?.rule], ['claude-3-5-sonnet', 'date_suffix']);
  });

  it('3. a family alias: from the table, else the last version number made x', () => {
    assert.equal(familyOf('claude-sonnet-4-6'), 'claude-sonnet-4-x');
    assert.equal(familyOf('gpt-4.1'), 'gpt-4.x');
    assert.equal(familyOf('gpt-4o'), null);
    const explicit = TABLE.lookup('anthropic', 'claude-3-5-sonnet-latest');
    assert.deepEqual([explicit?.entry, explicit?.rule], ['claude-3-5-sonnet', 'family']);
    const derived = TABLE.lookup('anthropic', 'claude-sonnet-4-6');
    assert.deepEqual([derived?.entry, derived?.rule], ['claude-sonnet-4-x', 'family']);
    const afterDate = TABLE.lookup('anthropic', 'claude-sonnet-4-6-20260115');
    assert.deepEqual([afterDate?.entry, afterDate?.rule], ['claude-sonnet-4-x', 'family']);
    const dotted = TABLE.lookup('openai', 'gpt-4.1');
    assert.deepEqual([dotted?.entry, dotted?.rule], ['gpt-4.x', 'family']);
  });

  it('4. the provider wildcard', () => {
    const match = TABLE.lookup('ollama', 'llama3.1:8b');
    assert.deepEqual([match?.provider, match?.entry, match?.rule], ['ollama', '*', 'provider_wildcard']);
  });

  it('a miss stays unpriced: no match, no cost, never zero', () => {
    assert.equal(TABLE.lookup('openai', 'gpt-9-turbo'), null);
    assert.equal(TABLE.lookup('groq', 'gpt-4o'), null, 'a known provider is searched alone');
    assert.equal(TABLE.lookup(null, 'deepseek-v4-flash'), null);
    assert.equal(TABLE.lookup(null, null), null);
    const cost = TABLE.costOf({ cost: null, usage: usage(100, 10), model: 'gpt-9-turbo', provider: 'openai' });
    assert.deepEqual(cost, { kind: 'unpriced', usd: null, match: null });
  });

  it('without a provider: provider/model names give one, else every provider is searched (no wildcard)', () => {
    const slashed = TABLE.lookup(null, 'openai/gpt-4o-2024-08-06');
    assert.deepEqual([slashed?.provider, slashed?.entry, slashed?.rule], ['openai', 'gpt-4o', 'date_suffix']);
    assert.equal(TABLE.lookup(null, 'ollama/mistral')?.rule, 'provider_wildcard');
    const anywhere = TABLE.lookup(null, 'claude-sonnet-4-6');
    assert.deepEqual([anywhere?.provider, anywhere?.rule], ['anthropic', 'family']);
    assert.equal(TABLE.lookup(null, 'mistral'), null, 'no provider, no wildcard');
  });

  it('costs: reported wins, then an estimate from usage, else unpriced (also without usage)', () => {
    assert.deepEqual(TABLE.costOf({ cost: 0.5, usage: usage(1, 1), model: 'gpt-4o', provider: 'openai' }), { kind: 'reported', usd: 0.5, match: null });
    const estimated = TABLE.costOf({ cost: null, usage: usage(1_000_000, 100_000), model: 'gpt-4o', provider: 'openai' });
    assert.equal(estimated.kind, 'estimated');
    assert.ok(Math.abs(estimated.usd! - 3.5) < 1e-12);
    assert.equal(TABLE.costOf({ cost: null, usage: null, model: 'gpt-4o', provider: 'openai' }).kind, 'unpriced');
  });

  it('prices cached input and reasoning tokens at their own rates, defaulting to input and output', () => {
    // 1M prompt of which 400k cached; 100k completion of which 60k reasoning.
    const o3 = { input: 2, output: 8, cached_input: 0.5, reasoning: 4 };
    assert.ok(Math.abs(estimateUsd(usage(1_000_000, 100_000, 400_000, 60_000), o3) - (0.6 * 2 + 0.4 * 0.5 + 0.04 * 8 + 0.06 * 4)) < 1e-12);
    assert.ok(Math.abs(estimateUsd(usage(1_000_000, 100_000, 400_000, 60_000), { input: 2, output: 8 }) - (2 + 0.8)) < 1e-12);
  });
});

describe('price tables', () => {
  it('the default table says when it was written and prices common models', () => {
    const table = defaultPriceTable();
    assert.match(table.written ?? '', /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(table.lookup('openai', 'gpt-4o-mini')?.rule, 'exact');
    assert.equal(table.lookup(null, 'gpt-4o-mini-2024-07-18')?.rule, 'date_suffix');
    assert.equal(table.lookup(null, 'claude-sonnet-4-6')?.rule, 'family');
    assert.equal(table.lookup(null, 'ollama_chat/qwen3:8b')?.rule, 'provider_wildcard');
  });

  it('--prices FILE: read and checked, with clear errors', () => {
    const dir = tempDir();
    const good = path.join(dir, 'prices.json');
    writeFileSync(good, JSON.stringify({ written: '2026-01-01', prices: { openai: { 'gpt-4o': { input: 1, output: 2 } } } }));
    assert.equal(loadPriceTable(good).lookup('openai', 'gpt-4o')?.price.input, 1);
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ prices: { openai: { 'gpt-4o': { input: -1, output: 2 } } } }));
    assert.throws(() => loadPriceTable(bad), /prices\.openai\.gpt-4o: expected \{input, output/);
    assert.throws(() => loadPriceTable(path.join(dir, 'missing.json')), /no such file/);
    const result = runCli(['stats', path.join(FIXTURES, 'klieo'), '--prices', bad]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--prices/);
  });

  it('stats keeps reported, estimated and unpriced costs apart and never shows unknown as $0', () => {
    const dir = tempDir();
    const prices = path.join(dir, 'prices.json');
    writeFileSync(prices, JSON.stringify({ written: '2026-01-01', prices: { anthropic: { 'claude-sonnet-4-x': { input: 3, output: 15 } } } }));
    const klieo = path.join(FIXTURES, 'klieo', 'writer-completed.json');
    const stats = JSON.parse(runCli(['stats', klieo, '--json', '--prices', prices]).stdout);
    assert.equal(stats.totals.cost_usd, 0.0081, 'reported cost only');
    assert.equal(stats.totals.ok_records_with_estimated_cost, 1);
    assert.ok(Math.abs(stats.totals.estimated_cost_usd - (1500 * 3 + 120 * 15) / 1e6) < 1e-12);
    assert.equal(stats.totals.ok_records_unpriced, 0);
    assert.deepEqual(stats.prices, { table: prices, written: '2026-01-01' });

    const empty = path.join(dir, 'empty.json');
    writeFileSync(empty, JSON.stringify({ prices: {} }));
    const ask = path.join(FIXTURES, 'ask', 'first-agent-1');
    const unpriced = JSON.parse(runCli(['stats', ask, '--json', '--prices', empty]).stdout);
    assert.equal(unpriced.totals.ok_records_unpriced, 2);
    assert.equal(unpriced.totals.ok_records_with_estimated_cost, 0);
    const text = runCli(['stats', ask, '--prices', empty]).stdout;
    assert.match(text, /cost \(ok\)\s+none reported, 2 unpriced \(unknown, not \$0\)/);
    assert.match(text, /first-agent-1\/deepseek-v4-flash .* unknown/);
    assert.doesNotMatch(text, /\s\$0(\s|$)/m, 'no cost cell reads $0');
    assert.match(text, /first-agent-1\s+2\s+2\s+0\s+0\s+0\s+unknown\s+unknown/, 'tokens unknown too, not 0');
  });
});
