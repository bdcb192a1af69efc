/**
 * Numbers a person reads: money as money (never `$2.4e-5`), counts grouped by thousands and
 * said with their noun in the singular for one, by one formatter that every command and the
 * browser share; `--json` keeps full precision.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatCount, formatUsd, plural } from '../src/format.js';
import * as uiText from '../src/ui/text.js';
import path from 'node:path';
import { SAMPLES, runCli, runCliJson, tempDir, flat, UNWRAPPED } from './helpers.js';

/** Scientific notation, as `toExponential` and small `toPrecision` print it. */
const SCIENTIFIC = /\$\d(?:\.\d+)?e[-+]?\d/;
/** A count of four digits or more printed without its separator. */
const UNGROUPED = /(?<![\d.,:T-])\d{4,}(?![\d.,:])/;

describe('formatUsd', () => {
  it('writes small costs in fixed notation with two significant digits', () => {
    assert.equal(formatUsd(0.000024), '$0.000024');
    assert.equal(formatUsd(2.4e-5), '$0.000024');
    assert.equal(formatUsd(6.4e-5, true), '≈$0.000064');
    assert.equal(formatUsd(3.4e-9), '$0.0000000034');
    assert.equal(formatUsd(0.000995), '$0.0010', 'rounding carries into one more digit');
    assert.equal(formatUsd(0.002979), '$0.0030');
    assert.equal(formatUsd(0.5), '$0.50');
    assert.equal(formatUsd(12.345), '$12.35');
    assert.equal(formatUsd(1234.5), '$1,235');
    assert.equal(formatUsd(0), '$0');
    assert.equal(formatUsd(Number.NaN), '');
    for (let exponent = -12; exponent <= 6; exponent++) {
      for (const mantissa of [1, 2.4, 9.96]) assert.doesNotMatch(formatUsd(mantissa * 10 ** exponent), /e/, `${mantissa}e${exponent}`);
    }
  });

  it('short: below a hundredth of a cent, <$0.0001', () => {
    assert.equal(formatUsd(0.000024, false, true), '<$0.0001');
    assert.equal(formatUsd(0.000024, true, true), '≈<$0.0001');
    assert.equal(formatUsd(0.00012, false, true), '$0.00012');
    assert.equal(formatUsd(0, false, true), '$0');
  });
});

describe('plural', () => {
  it('says one in the singular, others in the plural, the count grouped', () => {
    assert.equal(plural(1, 'file'), '1 file');
    assert.equal(plural(0, 'file'), '0 files');
    assert.equal(plural(2, 'example'), '2 examples');
    assert.equal(plural(14042, 'training example'), '14,042 training examples');
    assert.equal(plural(1, 'mismatch', 'mismatches'), '1 mismatch');
    assert.equal(plural(3, 'mismatch', 'mismatches'), '3 mismatches');
    assert.equal(formatCount(28657), '28,657');
  });

  it('the browser formats with the same functions', () => {
    assert.equal(uiText.formatUsd, formatUsd);
    assert.equal(uiText.formatCount, formatCount);
  });
});

describe('what commands print', () => {
  it('runs: costs as money; --json keeps the full value', () => {
    const result = runCli(['runs', SAMPLES]);
    assert.equal(result.status, 0, result.stderr);
    assert.doesNotMatch(result.stdout, SCIENTIFIC);
    assert.match(result.stdout, / \$0\.000024 /);
    const runs = runCliJson<{ cost: { reported_usd: number | null } }[]>(['runs', SAMPLES, '--json']);
    assert.ok(runs.some((run) => run.cost.reported_usd !== null && run.cost.reported_usd < 0.0001 && run.cost.reported_usd > 0));
  });

  it('stats tokens say they are recorded usage, export tokens that they are of the written text, by which encoding', () => {
    assert.match(runCli(['stats', SAMPLES], UNWRAPPED).stdout, /^tokens \(ok\) .*, as recorded \(usage\)$/m);
    const exported = runCli(['export', SAMPLES, '--format', 'openai', '--out', path.join(tempDir(), 'ft')]);
    assert.match(flat(exported.stderr), / wrote \d+ examples \([\d,]+ tokens of written text by o200k_base\) to /);
  });

  it('stats: costs as money, counts grouped, nouns singular for one', () => {
    const result = runCli(['stats', SAMPLES]);
    assert.equal(result.status, 0, result.stderr);
    assert.doesNotMatch(result.stdout, SCIENTIFIC);
    assert.match(result.stdout, /^unique ok keys +21 \(1 duplicate ok record\)$/m);
    // Every figure of the summary lines in one style: 10,583, not 10.6k beside 1,169.
    assert.match(flat(result.stdout), / tokens \(ok\) prompt 10,583, completion 1,169, reasoning 285, cached 6,784, as recorded \(usage\) /);
    for (const line of result.stdout.split('\n').filter((l) => !/^\s*samples\//.test(l) && !/→/.test(l))) {
      assert.doesNotMatch(line, UNGROUPED, line);
    }
  });

  it('export, dedupe and scan: nouns singular for one, counts grouped', () => {
    const dry = runCli(['dedupe', SAMPLES, '--dry-run']);
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stderr, /^read 24 records from 8 files \(1 damaged line, see above\)$/m);
    assert.match(dry.stdout, /^would drop 1 record as duplicate:$/m);
    const scan = runCli(['scan', SAMPLES]);
    assert.match(scan.stdout, /^24 records scanned, 1 finding, 1 damaged line not scanned/m);
    assert.doesNotMatch(`${dry.stderr}${dry.stdout}${scan.stdout}`, /\b1 (?:records|files|lines|examples|findings)\b/);
  });
});
