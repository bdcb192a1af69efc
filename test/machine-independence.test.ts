/**
 * The same command gives the same output on every machine: a time without a zone means UTC
 * everywhere (--since/--until, recorders' timestamps, the browser), and text is ordered by
 * code point, not by the machine's locale. A laptop in Tokyo or Stockholm and CI agree.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { epochSecondsOf } from '../src/time.js';
import { formatLongTime, formatShortTime } from '../src/ui/text.js';
import { FIXTURES, runCli, runCliJson, SAMPLES, tempDir } from './helpers.js';

const ZONES = ['UTC', 'Asia/Tokyo', 'America/New_York'];

describe('times without a zone are UTC, whatever the machine TZ', () => {
  it('--since and --until keep the same records in every TZ, as if the time ended in Z', () => {
    for (const [since, until] of [
      ['2026-07-07T10:00', '2026-07-08T07:10:00.5'],
      ['2026-07-07 10:00', '2026-07-08 07:10'],
    ]) {
      const withZone = runCliJson<{ kept: number }>(['filter', SAMPLES, '--since', `${since.replace(' ', 'T')}Z`, '--until', `${until.replace(' ', 'T')}Z`, '--dry-run'], {
        env: { TZ: 'UTC' },
      });
      assert.ok(withZone.kept > 0 && withZone.kept < 24, `the window selects some records: ${withZone.kept}`);
      for (const TZ of ZONES) {
        const kept = runCliJson<{ kept: number }>(['filter', SAMPLES, '--since', since, '--until', until, '--dry-run'], { env: { TZ } }).kept;
        assert.equal(kept, withZone.kept, `${since}..${until} in ${TZ}`);
      }
    }
  });

  it("a recorder's zone-less timestamp (klieo started_at) is read as UTC in every TZ", () => {
    const dir = tempDir();
    const runs = JSON.parse(readFileSync(path.join(FIXTURES, 'klieo', 'more-runs.json'), 'utf8')) as { started_at: string }[];
    runs[0].started_at = '2026-05-03T12:00:00';
    writeFileSync(path.join(dir, 'runs.json'), JSON.stringify(runs));
    for (const TZ of ZONES) {
      const listed = runCliJson<{ id: string; started_at: string }[]>(['runs', dir], { env: { TZ } });
      assert.equal(listed.find((r) => r.id === '01J9Z5CANC')!.started_at, '2026-05-03T12:00:00.000Z', TZ);
    }
  });

  it('sql works in UTC: a day or an hour of to_timestamp(timestamp) is the same in every TZ', () => {
    const query = "SELECT date_trunc('day', to_timestamp(timestamp)) AS day, hour(to_timestamp(timestamp)) AS hour, count(*) AS calls FROM records GROUP BY ALL ORDER BY 1, 2";
    const results = ZONES.map((TZ) => runCliJson<unknown[]>(['sql', query, SAMPLES], { env: { TZ } }));
    for (const [i, result] of results.entries()) assert.deepEqual(result, results[0], ZONES[i]);
    assert.deepEqual((results[0] as { hour: number }[]).map((r) => r.hour), [8, 12, 7, 14]);
  });

  it('epochSecondsOf: zone-less ISO date-times as UTC; a zone or a date alone as written', () => {
    assert.equal(epochSecondsOf('2026-07-07T10:00'), Date.UTC(2026, 6, 7, 10) / 1000);
    assert.equal(epochSecondsOf('2026-07-07 10:00:30.25'), Date.UTC(2026, 6, 7, 10, 0, 30, 250) / 1000);
    assert.equal(epochSecondsOf('2026-07-07T10:00+02:00'), Date.UTC(2026, 6, 7, 8) / 1000);
    assert.equal(epochSecondsOf('2026-07-07'), Date.UTC(2026, 6, 7) / 1000);
    assert.equal(epochSecondsOf('not a time'), null);
  });

  it('epochSecondsOf: a day the month lacks is no time, where Date.parse rolls it into the next month', () => {
    for (const text of ['2026-02-30', '2026-02-29', '2026-04-31T10:00Z', '2026-06-31 08:00', '2026-00-10', '2026-13-01']) assert.equal(epochSecondsOf(text), null, text);
    assert.equal(epochSecondsOf('2024-02-29'), Date.UTC(2024, 1, 29) / 1000);
    assert.equal(epochSecondsOf('2026-12-31T23:59:59Z'), Date.UTC(2026, 11, 31, 23, 59, 59) / 1000);
    // Year 0 is a leap year (proleptic Gregorian), 1900 is not: years below 100 are no 19xx.
    assert.notEqual(epochSecondsOf('0000-02-29'), null);
    const result = runCli(['filter', SAMPLES, '--since', '2026-02-30', '--dry-run']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--since "2026-02-30": expected an ISO 8601 date/);
  });

  describe('the browser shows UTC', () => {
    const before = process.env.TZ;
    after(() => {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    });

    it('in the list and the record view, in any TZ', () => {
      const t = Date.UTC(2026, 6, 7, 23, 15, 30, 456) / 1000;
      for (const TZ of ZONES) {
        process.env.TZ = TZ;
        assert.equal(formatShortTime(t), '07-07 23:15:30', TZ);
        assert.equal(formatLongTime(t), '2026-07-07 23:15:30.456', TZ);
      }
    });
  });
});

/** A report.json as text without the command line, which names each run's own --out. */
function reportWithoutItsOut(file: string): string {
  const { arguments: _arguments, ...report } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return JSON.stringify(report, null, 2);
}

describe('text is ordered by code point, whatever the machine locale', () => {
  const LOCALES = ['C.UTF-8', 'en_US.UTF-8', 'sv_SE.UTF-8', 'tr_TR.UTF-8'];
  // Orders that en_US, sv_SE and tr_TR collation disagree on.
  const NAMES = ['zeta', 'äpfel', 'Beta', 'ılık', 'Ilık', 'apple'];

  it('stats and the export report list programs in the same order in every locale', () => {
    const tree = tempDir();
    const lines = readFileSync(path.join(SAMPLES, 'my_program', 'generator_cot', 'generator_cot_20260707-101530.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    NAMES.forEach((name, i) => {
      mkdirSync(path.join(tree, name, name), { recursive: true });
      const own = lines.map((l) => l.replaceAll('"my_program"', JSON.stringify(name)).replaceAll('"generator_cot"', JSON.stringify(name)).replace(/"call_id":"[0-9a-f]/, `"call_id":"${i}`));
      writeFileSync(path.join(tree, name, name, `${name}_20260707-101530.jsonl`), own.join('\n') + '\n');
    });
    const outputs = LOCALES.map((locale) => {
      const env = { LC_ALL: locale, LANG: locale };
      const out = path.join(tempDir(), 'out');
      const exported = runCli(['export', tree, '--format', 'nemo', '--group-by', 'module', '--out', out], { env });
      assert.equal(exported.status, 0, exported.stderr);
      return [runCli(['stats', tree], { env }).stdout, runCli(['stats', tree, '--json'], { env }).stdout, reportWithoutItsOut(path.join(out, 'report.json'))];
    });
    for (const [i, output] of outputs.entries()) assert.deepEqual(output, outputs[0], LOCALES[i]);
    const programs = Object.keys((JSON.parse(outputs[0][1]) as { programs: Record<string, unknown> }).programs);
    assert.deepEqual(programs, [...NAMES].sort(), 'code point order');
  });
});
