/**
 * The layer check CI runs (`npm run layers`: dependency-cruiser with .dependency-cruiser.cjs)
 * fails on an upward import, an import cycle (type imports included) and a target module
 * that looks the registry up, and passes a tree without them: run with the project's own
 * rules on small trees laid out as src/ is.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO, tempDir } from './helpers.js';

const CRUISER = path.join(REPO, 'tools', 'layers', 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const skip = existsSync(CRUISER) ? false : 'dependency-cruiser is not installed (npm ci --prefix tools/layers): CI installs it before `npm run layers`';

/** A tree of `files` (path under the tree → text) checked as `npm run layers` checks src/. */
function layerCheck(files: Record<string, string>): { status: number | null; output: string } {
  const dir = tempDir('traces-layers-');
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src/**/*'] }));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  const run = spawnSync(process.execPath, [CRUISER, 'src', '--config', path.join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'err'], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const DOWNWARD = {
  'src/record.ts': 'export interface TraceRecord { id: string }\n',
  'src/sources/read.ts': "import type { TraceRecord } from '../record.js';\nexport const read = (): TraceRecord[] => [];\n",
  'src/pipeline/select.ts': "import { read } from '../sources/read.js';\nexport const selected = () => read();\n",
};

describe('npm run layers', { skip }, () => {
  it('passes a tree whose imports all go down', () => {
    const { status, output } = layerCheck(DOWNWARD);
    assert.equal(status, 0, output);
  });

  it('fails on an import from a lower layer to a higher one', () => {
    const { status, output } = layerCheck({ ...DOWNWARD, 'src/sources/detect.ts': "import { selected } from '../pipeline/select.js';\nexport const detect = () => selected();\n" });
    assert.notEqual(status, 0, output);
    assert.match(output, /sources-imports-upward: src\/sources\/detect\.ts → src\/pipeline\/select\.ts/);
  });

  it('fails on an import cycle, even of types within one folder', () => {
    const { status, output } = layerCheck({
      ...DOWNWARD,
      'src/pipeline/a.ts': "import type { B } from './b.js';\nexport interface A { b: B }\n",
      'src/pipeline/b.ts': "import type { A } from './a.js';\nexport interface B { a: A | null }\n",
    });
    assert.notEqual(status, 0, output);
    assert.match(output, /no-cycle: src\/pipeline\/a\.ts/);
  });

  it('fails on a target module that looks the registry up', () => {
    const { status, output } = layerCheck({
      ...DOWNWARD,
      'src/targets/index.ts': "export const TARGETS = { openai: 'openai' };\n",
      'src/targets/model/trainer.ts': "import { TARGETS } from '../index.js';\nexport const trainer = () => TARGETS.openai;\n",
    });
    assert.notEqual(status, 0, output);
    assert.match(output, /targets-registry-on-top: src\/targets\/model\/trainer\.ts → src\/targets\/index\.ts/);
  });
});
