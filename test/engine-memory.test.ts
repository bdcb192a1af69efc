/**
 * The engine under a memory limit: wherever the openai export succeeds under `ulimit -v`, the
 * hf export (its Parquet written by DuckDB in a child process, engine/child.ts) succeeds too,
 * or says in one line that the engine ran out of memory, what it needs and how to give it,
 * and leaves nothing behind: never std::bad_alloc (134), a fault (139), exit 70 or "reinstall".
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO, SAMPLES, tempDir } from './helpers.js';

const BIN = path.join(REPO, 'bin', 'traces.js');

/** The export under a limit of address space (KB), in a shell that sets it. */
function exportUnder(limitKb: number, format: string, out: string): { status: number | null; stderr: string } {
  const command = `ulimit -v ${limitKb} && exec "$0" "$@"`;
  const result = spawnSync('bash', ['-c', command, process.execPath, BIN, 'export', SAMPLES, '--format', format, '--out', out], { encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr };
}

describe('the engine under ulimit -v', () => {
  it('where the openai export succeeds, the hf export succeeds or says in one line that the engine needs more memory', { skip: process.platform !== 'linux' && 'ulimit -v is Linux' }, () => {
    const base = tempDir('traces-engine-memory-');
    let compared = 0;
    let nodeHeapOnly = 0;
    for (const gb of [0.9, 1.0, 1.1, 1.2, 1.3, 1.5]) {
      const limit = Math.round(gb * 1_000_000);
      const openai = exportUnder(limit, 'openai', path.join(base, `openai-${limit}`));
      if (openai.status !== 0) continue;
      compared++;
      const out = path.join(base, `hf-${limit}`);
      const hf = exportUnder(limit, 'hf', out);
      if (hf.status === 0) continue;
      // Node's own heap giving out before the engine starts is not the engine's failure (the
      // openai export dies the same way a little lower): counted, and said if it is all we saw.
      if (hf.status === null && /Last few GCs|JavaScript heap out of memory/.test(hf.stderr)) {
        nodeHeapOnly++;
        continue;
      }
      assert.equal(hf.status, 2, `ulimit -v ${limit}: exit ${hf.status}: ${hf.stderr.slice(0, 400)}`);
      assert.match(hf.stderr, /the SQL engine ran out of memory.*raise the memory limit \(ulimit -v\)/);
      assert.doesNotMatch(hf.stderr, /reinstall|bad_alloc\n|\n\s+at |Native stack trace/);
      assert.equal(hf.stderr.trimEnd().split('\n').length, 1, hf.stderr);
      assert.ok(!existsSync(out) || readdirSync(out).length === 0, `ulimit -v ${limit}: ${out} is left half-written`);
    }
    assert.ok(compared > 0, 'the openai export succeeded under none of the limits: raise them');
    assert.ok(nodeHeapOnly < compared, 'at every limit compared the hf export ran out of Node heap before its engine ran: nothing of the engine was tested');
  });

  it('an engine task that cannot get memory is one line saying what it wanted and how to give it', { skip: process.platform !== 'linux' && 'ulimit -v is Linux' }, () => {
    const base = tempDir('traces-engine-memory-');
    const jsonl = path.join(base, 'rows.jsonl');
    writeFileSync(jsonl, '{"a":"x"}\n{"a":"y"}\n');
    const script = path.join(base, 'task.mjs');
    writeFileSync(
      script,
      `import { runEngineTask } from ${JSON.stringify(path.join(REPO, 'dist', 'src', 'engine', 'child.js'))};\n` +
        `try { console.log(JSON.stringify(await runEngineTask({ kind: 'jsonl-to-parquet', jsonl: process.argv[2], parquet: process.argv[2] + '.parquet', columns: { a: 'VARCHAR' }, longestLine: 10 }, 'writing rows.parquet'))); }\n` +
        `catch (error) { console.log(error.constructor.name + ': ' + error.message); }\n`,
    );
    const seen = { rows: 0, outOfMemory: 0 };
    // The task's parent is small: between what it needs and what the engine's child needs, the child runs out.
    for (let limit = 700_000; limit <= 1_400_000; limit += 25_000) {
      const result = spawnSync('bash', ['-c', `ulimit -v ${limit} && exec "$0" "$@"`, process.execPath, script, jsonl], { encoding: 'utf8' });
      if (result.status !== 0) continue; // the parent itself could not start under this limit
      const said = result.stdout.trim();
      if (said === '{"rows":2}') seen.rows++;
      else {
        assert.match(said, /^UserError: writing rows\.parquet: the SQL engine ran out of memory.*it needs .*raise the memory limit \(ulimit -v\)/, `ulimit -v ${limit}`);
        assert.equal(said.split('\n').length, 1);
        seen.outOfMemory++;
      }
    }
    assert.ok(seen.rows > 0 && seen.outOfMemory > 0, `no limit between the parent's and the child's needs: ${JSON.stringify(seen)}`);
  });
});
