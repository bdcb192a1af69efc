/**
 * One definition of each number: the browser and `stats` show the same bytes, counts,
 * durations and costs, in the same units, with `≈` on what is estimated; the stale-usage
 * rule applies to Synalinks no_output records only.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { cleanup, render } from 'ink-testing-library';
import { formatBytes, formatDuration, formatTokens, formatUsd } from '../src/format.js';
import { QuantileSketch } from '../src/stats/quantiles.js';
import { App } from '../src/ui/App.js';
import { chatRows, metaRows, rowText } from '../src/ui/chat-lines.js';
import { IndexStore } from '../src/ui/index-store.js';
import { FIXTURES, runCli, runCliJson, SAMPLES } from './helpers.js';
import { driver } from './ink-driver.js';

const stores: IndexStore[] = [];
afterEach(() => {
  cleanup();
  for (const store of stores.splice(0)) store.close();
});

async function open(roots: string[]): Promise<IndexStore> {
  const store = await IndexStore.open(roots, { otherSources: true });
  stores.push(store);
  await store.whenDone();
  return store;
}

async function startApp(roots: string[], width = 120) {
  const store = await open(roots);
  const ui = render(<App store={store} roots="t" width={width} height={30} onQuit={() => {}} />);
  const d = driver(ui);
  await d.waitFor('all records');
  return { store, ...d };
}

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => path.join(dir, f));
}

describe('number formats', () => {
  it('bytes in decimal units, tokens, USD and durations, with ≈ only when asked', () => {
    assert.equal(formatBytes(999), '999 B');
    assert.equal(formatBytes(40_448), '40.4 KB');
    assert.equal(formatBytes(999_960), '1.0 MB', 'rounding carries into the next unit');
    assert.equal(formatBytes(6_800_000), '6.8 MB');
    assert.equal(formatBytes(1_073_741_824), '1.07 GB');
    assert.equal(formatTokens(9_999), '9,999');
    assert.equal(formatTokens(12_345), '12.3k');
    assert.equal(formatTokens(999_999), '1.0M');
    assert.equal(formatUsd(0), '$0');
    assert.equal(formatUsd(0.002979), '$0.0030');
    assert.equal(formatUsd(0.0029790000000000003, true), '≈$0.0030');
    assert.equal(formatUsd(12.345), '$12.35');
    assert.equal(formatUsd(Number.NaN), '');
    assert.equal(formatDuration(19.82), '19.8s');
    assert.equal(formatDuration(19.69, true), '≈19.7s');
    assert.equal(formatDuration(0.4), '400ms');
    assert.equal(formatDuration(null), '-');
  });

  it('quantiles are exact for small sets and marked approximate once they come from the histogram', () => {
    const small = new QuantileSketch();
    for (const v of [19.82, 3, 40.5, 19.69, 7]) small.add(v);
    assert.equal(small.approximate, false);
    assert.equal(small.quantile(0.5), 19.69);
    const merged = QuantileSketch.fromJSON(JSON.parse(JSON.stringify(small.toJSON())));
    merged.merge(small);
    assert.equal(merged.approximate, false);
    assert.equal(merged.quantile(0.5), 19.69);
    const big = new QuantileSketch();
    for (let i = 1; i <= 5000; i++) big.add(i / 100);
    assert.equal(big.approximate, true);
    const p50 = big.quantile(0.5)!;
    assert.ok(Math.abs(p50 - 25) / 25 <= 0.01, String(p50));
  });
});

describe('stats and the browser agree', () => {
  it('on the tree size, in the same units', async () => {
    const { bytes } = runCliJson<{ bytes: number }>(['stats', SAMPLES]);
    const stats = runCli(['stats', SAMPLES]).stdout;
    const files = /^files\s+(\d+) \(([^)]+)\)/m.exec(stats);
    assert.ok(files, stats);
    assert.equal(files[2], formatBytes(bytes));
    assert.doesNotMatch(stats, /0\.0 MB/);
    const { frame } = await startApp([SAMPLES]);
    assert.ok(frame().includes(`${files[1]} files, ${files[2]}`), frame());
  });

  it('on records: damaged lines are counted apart, in the title and in the list pane', async () => {
    const json = runCliJson<{ records: number; damaged_lines: number }>(['stats', SAMPLES]);
    const { frame } = await startApp([SAMPLES]);
    const f = frame();
    assert.match(f, new RegExp(`traces browse .* ${json.records} records`));
    assert.match(f, new RegExp(`│ all records {2}${json.records} records \\+ ${json.damaged_lines} damaged line\\b`));
  });

  it('on the median duration: exact (no ≈) when computed from every value', () => {
    const durations: number[] = [];
    for (const file of jsonlFiles(SAMPLES)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        let r: { outputs?: unknown; exception?: unknown; duration?: unknown };
        try {
          r = JSON.parse(line);
        } catch {
          continue;
        }
        if (r.outputs !== null && r.outputs !== undefined && r.exception === undefined && typeof r.duration === 'number') durations.push(r.duration);
      }
    }
    durations.sort((a, b) => a - b);
    const exact = durations[Math.ceil(durations.length / 2) - 1];
    const json = runCliJson<{ totals: { duration_s: { p50: number } } }>(['stats', SAMPLES]);
    assert.equal(json.totals.duration_s.p50, exact);
    assert.match(runCli(['stats', SAMPLES]).stdout, new RegExp(`duration \\(ok\\)\\s+p50 ${formatDuration(exact).replace('.', '\\.')},`));
  });

  it('on estimated costs: klieo and Ask records show the estimate stats makes, marked ≈', async () => {
    const roots = [path.join(FIXTURES, 'klieo'), path.join(FIXTURES, 'ask')];
    const json = runCliJson<{ totals: { estimated_cost_usd: number } }>(['stats', ...roots]);
    assert.ok(json.totals.estimated_cost_usd > 0);
    const { store, frame, press } = await startApp(roots, 140);
    assert.ok(store.stats(0).estimatedCost > 0);
    assert.ok(Math.abs(store.stats(0).estimatedCost - json.totals.estimated_cost_usd) < 1e-6, `${store.stats(0).estimatedCost} vs ${json.totals.estimated_cost_usd}`);
    assert.match(frame(), /≈\$\d/, 'the cost column shows estimates with ≈');
    const panel = await press('s');
    assert.ok(panel.includes(`${formatUsd(json.totals.estimated_cost_usd, true)} estimated`), panel);
  });
});

describe('stale usage belongs to Synalinks no_output records', () => {
  it('is shown for a Synalinks no_output record, never for klieo records', async () => {
    const store = await open([SAMPLES, path.join(FIXTURES, 'klieo')]);
    const metaText = (entry: number): string => metaRows(store.record(entry), store.info(entry), { groupSize: 1, marked: false }, 100).map(rowText).join('\n');
    const synalinks = Array.from(store.list(0, 'no_output', false)).find((i) => store.info(i).file.source === 'synalinks')!;
    assert.match(metaText(synalinks), /stale/);
    const klieo = Array.from(store.list(0, 'all', false)).filter((i) => store.info(i).file.source === 'klieo');
    assert.ok(klieo.some((i) => store.info(i).status !== 'ok'), 'the fixtures hold failed and empty klieo steps');
    for (const entry of klieo) {
      assert.doesNotMatch(metaText(entry), /stale/);
      const chat = chatRows(store.record(entry)!, { width: 100, source: 'klieo', isOpen: () => false }).map(rowText).join('\n');
      assert.doesNotMatch(chat, /stale/);
    }
  });
});
