/**
 * Issue 15, item 12: the package a user installs. `npm pack` builds dist/ (prepack) and ships
 * only the built code, bin/, README, docs, LICENSE and the samples; the tarball installs with no
 * build and no install script, and the installed `traces` runs.
 *
 * The pack runs in a copy of the repository (node_modules linked), so the suite's own dist/
 * is never rebuilt under the tests running beside this one. The install is offline when the
 * npm cache can serve it, else from the registry (CI); with neither, the test says so and skips.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FIXTURES, REPO, tempDir } from './helpers.js';

const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', CI: '' };

function npm(args: string[], cwd: string): { status: number; stdout: string; stderr: string } {
  const result = spawnSync('npm', args, { cwd, env: NPM_ENV, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** What a clone holds that packing needs (no dist/, no tests). */
function cloneLike(): string {
  const dir = path.join(tempDir('traces-pack-'), 'traces');
  mkdirSync(dir);
  for (const entry of ['src', 'bin', 'samples', 'templates', 'tools', 'README.md', 'docs', 'LICENSE', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(path.join(REPO, entry), path.join(dir, entry), { recursive: true });
  }
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/**
 * The package's name: `traces` on npm is an unrelated package, so this one is published as
 * its own name; the command it installs is still `traces` (bin).
 */
const PACKAGE = 'llm-traces-to-dataset';

const NO_NETWORK = /ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH/;

describe('the npm package', { skip: spawnSync('npm', ['--version']).status === 0 ? false : 'npm is not on PATH' }, () => {
  it('packs built code without tests, installs from the tarball with no build or install script, and runs', (t) => {
    const clone = cloneLike();
    const packed = npm(['pack', '--json'], clone);
    assert.equal(packed.status, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
    const files = info.files.map((f) => f.path);
    assert.ok(files.includes('dist/src/cli.js'), 'the built CLI ships');
    assert.ok(files.includes('bin/traces.js'));
    for (const name of ['README.md', 'docs/engine.md', 'LICENSE', 'package.json']) assert.ok(files.includes(name), name);
    assert.ok(files.some((f) => f.startsWith('samples/synalinks/') && f.endsWith('.jsonl')), 'the samples ship');
    for (const encoding of ['o200k_base', 'cl100k_base']) assert.ok(files.includes(`dist/src/targets/token-ranks/${encoding}.v8`), `the prebuilt ${encoding} table ships`);
    assert.ok(files.includes('templates/qwen3-training.jinja'), 'the shipped chat templates ship');
    const unexpected = files.filter((f) => !/^(dist\/src\/|bin\/|samples\/synalinks\/|templates\/[^/]+\.jinja$|README\.md$|docs\/[^/]+\.md$|LICENSE$|package\.json$)/.test(f) || f.endsWith('.map'));
    assert.deepEqual(unexpected, [], 'nothing else ships: no tests, sources, maps or tooling');

    // The tarball's package.json has no script npm would run (or warn about) on install.
    const tarball = path.join(clone, info.filename);
    assert.equal(info.filename, `${PACKAGE}-${JSON.parse(readFileSync(path.join(clone, 'package.json'), 'utf8')).version}.tgz`);
    const manifest = JSON.parse(spawnSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' }).stdout);
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) assert.equal(manifest.scripts?.[script], undefined, script);
    // The clone's own package.json keeps `prepare` (npm ci builds there) once packing is over.
    assert.equal(JSON.parse(readFileSync(path.join(clone, 'package.json'), 'utf8')).scripts.prepare, 'tsc -p tsconfig.json && node tools/token-ranks.mjs');
    assert.ok(!existsSync(path.join(clone, 'package.json.before-pack')));

    const prefix = path.join(path.dirname(clone), 'prefix');
    let install = npm(['install', '--global', '--prefix', prefix, '--offline', tarball], path.dirname(clone));
    if (install.status !== 0 && /ENOTCACHED/.test(install.stderr)) {
      install = npm(['install', '--global', '--prefix', prefix, '--prefer-offline', tarball], path.dirname(clone));
    }
    if (install.status !== 0 && NO_NETWORK.test(install.stderr)) {
      t.skip(`the dependencies are neither in the npm cache nor reachable: ${install.stderr.split('\n').find((l) => NO_NETWORK.test(l))}`);
      return;
    }
    assert.equal(install.status, 0, install.stderr);
    assert.doesNotMatch(install.stderr, /install-scripts|install script/i);

    // Where the installed code looks for its shipped templates (src/targets/model/shipped-templates.ts).
    assert.ok(existsSync(path.join(prefix, 'lib', 'node_modules', PACKAGE, 'templates', 'qwen3-training.jinja')));
    const traces = path.join(prefix, 'bin', 'traces');
    const version = spawnSync(traces, ['--version'], { encoding: 'utf8', cwd: prefix });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), manifest.version);
    const installed = path.join(prefix, 'lib', 'node_modules', PACKAGE);
    assert.ok(!readdirSync(installed).includes('test'));
    const stats = spawnSync(traces, ['stats', path.join(installed, 'samples', 'synalinks'), '--json'], { encoding: 'utf8', cwd: prefix });
    assert.equal(stats.status, 0, stats.stderr);
    const counts = JSON.parse(stats.stdout);
    const expected = JSON.parse(readFileSync(path.join(FIXTURES, 'samples-expected.json'), 'utf8'));
    for (const key of ['records', 'ok', 'damaged_lines', 'unique_ok_keys'] as const) assert.equal(counts[key], expected[key], key);
  });
});
