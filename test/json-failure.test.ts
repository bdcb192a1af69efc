/**
 * `--json` on a run that fails: standard output still holds one JSON value, so a script piping
 * it to a JSON reader reads the failure (`{"error", "exit_code"}`) instead of empty input; the
 * line on stderr is unchanged. A run that printed its own JSON before failing keeps it alone.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildProgram } from '../src/cli.js';
import { runCli, SAMPLES, tempDir } from './helpers.js';

const MISSING = path.join(SAMPLES, 'no-such-folder');

/** A failing run of each command that takes --json: a missing input, a missing output, a usage error. */
const FAILING: Record<string, string[][]> = {
  stats: [[MISSING], [SAMPLES, '--by', 'colour']],
  verify: [[MISSING]],
  dedupe: [[SAMPLES], [MISSING, '--dry-run']],
  filter: [[SAMPLES, '--since', 'yesterday', '--dry-run']],
  export: [[SAMPLES, '--format', 'openai', '--out', SAMPLES], [SAMPLES, '--format', 'jsonl', '--dry-run']],
  validate: [[path.join(SAMPLES, 'no-such-file.jsonl'), '--format', 'openai']],
  scan: [[MISSING]],
  runs: [[MISSING], [SAMPLES, '--sort', 'size']],
  index: [[SAMPLES, '--out', SAMPLES]],
  sql: [['SELEC 1', SAMPLES]],
  'keep-list': [[MISSING, '--out', path.join(SAMPLES, 'no-such-folder', 'keep.parquet')], [MISSING]],
  map: [['--format', 'openai', '--keep-list', MISSING]],
};

describe('--json when the run fails', () => {
  it('every command that takes --json is tried', async () => {
    const program = await buildProgram(['node', 'traces']);
    const withJson = program.commands.filter((c) => c.options.some((o) => o.long === '--json')).map((c) => c.name());
    assert.deepEqual(withJson.sort(), Object.keys(FAILING).sort());
  });

  for (const [command, runs] of Object.entries(FAILING)) {
    it(`${command}: one JSON object on stdout naming the error and the exit code, the same line on stderr`, () => {
      for (const args of runs) {
        const result = runCli([command, ...args, '--json']);
        assert.equal(result.status, 2, `${command} ${args.join(' ')}: ${result.stderr}`);
        const failure = JSON.parse(result.stdout) as { error: string; exit_code: number };
        assert.deepEqual(Object.keys(failure), ['error', 'exit_code']);
        assert.equal(failure.exit_code, result.status);
        assert.ok(failure.error.length > 0 && result.stderr.includes(failure.error), `${failure.error} in ${result.stderr}`);
        // Without --json, stdout stays empty: the JSON is only for whoever asked for it.
        assert.equal(runCli([command, ...args]).stdout, '', `${command} ${args.join(' ')}`);
      }
    });
  }

  it('a run that printed its report before failing prints it alone', () => {
    const dir = tempDir();
    const result = runCli(['stats', path.join(SAMPLES, 'notes.jsonl'), '--json'], { cwd: dir });
    assert.equal(result.status, 2, result.stderr);
    const report = JSON.parse(result.stdout) as { records: number; damaged_lines: number };
    assert.equal(report.records, 0);
    assert.ok(report.damaged_lines > 0);
  });
});
