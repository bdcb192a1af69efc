/**
 * A time without a zone means UTC everywhere: in --since/--until, in recorders' timestamps,
 * in the browser. The same command keeps the same records on a laptop in Tokyo and in CI.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { epochSecondsOf } from '../src/time.js';
import { formatLongTime, formatShortTime } from '../src/ui/text.js';
import { FIXTURES, runCliJson, SAMPLES, tempDir } from './helpers.js';

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

  it('epochSecondsOf: zone-less ISO date-times as UTC; a zone or a date alone as written', () => {
    assert.equal(epochSecondsOf('2026-07-07T10:00'), Date.UTC(2026, 6, 7, 10) / 1000);
    assert.equal(epochSecondsOf('2026-07-07 10:00:30.25'), Date.UTC(2026, 6, 7, 10, 0, 30, 250) / 1000);
    assert.equal(epochSecondsOf('2026-07-07T10:00+02:00'), Date.UTC(2026, 6, 7, 8) / 1000);
    assert.equal(epochSecondsOf('2026-07-07'), Date.UTC(2026, 6, 7) / 1000);
    assert.equal(epochSecondsOf('not a time'), null);
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
