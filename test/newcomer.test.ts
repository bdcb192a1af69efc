/**
 * What a newcomer met (issue 52): a typo in a required option, a trainer's name given as the
 * format, `validate DIR` on an export folder of any format, a dry run that accepted what the
 * real run refuses, the help's defaults against the option's, and the package's name.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildProgram } from '../src/cli.js';
import { KEY_KINDS, KEY_MEANING, type KeyKind } from '../src/pipeline/keys.js';
import { flat, REPO, runCli, SAMPLES, tempDir } from './helpers.js';

describe('the everyday path', () => {
  it('a typo in a required option names the unknown option and the suggestion', () => {
    const result = runCli(['export', SAMPLES, '--fromat', 'hf', '--out', path.join(tempDir(), 'out')]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /unknown option '--fromat'/);
    assert.match(result.stderr, /Did you mean --format\?/);
    // A value given as --opt=value is the option's name too.
    const map = runCli(['map', '--fromat=openai'], { input: '' });
    assert.match(map.stderr, /unknown option '--fromat'/);
  });

  it("a trainer's name as --format says which format it reads", () => {
    for (const trainer of ['trl', 'axolotl', 'unsloth', 'huggingface']) {
      const result = runCli(['export', SAMPLES, '--format', trainer, '--dry-run']);
      assert.equal(result.status, 2, trainer);
      assert.match(result.stderr, new RegExp(`${trainer} names no format: --format hf writes what ${trainer} reads`), trainer);
    }
    assert.match(runCli(['export', SAMPLES, '--format', 'automodel', '--dry-run']).stderr, /--format nemo writes what automodel reads/);
    assert.match(runCli(['export', SAMPLES, '--format', 'nothing-known', '--dry-run']).stderr, /Allowed choices are openai, nemo/);
  });

  it('validate DIR validates the files of an export folder of any format', () => {
    for (const format of ['openai', 'nemo']) {
      const out = path.join(tempDir(), format);
      assert.equal(runCli(['export', SAMPLES, '--format', format, '--out', out]).status, 0);
      const result = runCli(['validate', out]);
      assert.equal(result.status, 0, result.stderr);
      assert.match(flat(result.stdout), new RegExp(`training\\.jsonl: \\d+ examples, valid for ${format}`));
      assert.match(flat(result.stdout), new RegExp(`validation\\.jsonl: \\d+ examples?, valid for ${format}`));
    }
    const bare = runCli(['validate', tempDir(), '--format', 'openai']);
    assert.equal(bare.status, 2);
    assert.match(bare.stderr, /no export's report\.json to list its files/);
  });

  it('a dry run refuses every option the real run refuses', () => {
    const out = path.join(tempDir(), 'out');
    for (const [args, said] of [
      [['--format', 'openai', '--validation-fraction', '20'], /--validation-fraction "20": expected a number from 0 to below 1/],
      [['--format', 'openai', '--seed', '-1'], /--seed/],
      [['--format', 'openai', '--reasoning', 'keep'], /--reasoning keep: openai supports drop/],
      [['--format', 'nemo-customizer', '--train-on', 'last'], /--train-on last/],
      [['--format', 'openai', '--max-file-mb', '0'], /--max-file-mb/],
    ] as [string[], RegExp][]) {
      const real = runCli(['export', SAMPLES, ...args, '--out', out]);
      const dry = runCli(['export', SAMPLES, ...args, '--dry-run']);
      assert.equal(real.status, 2, `${args.join(' ')}: ${real.stderr}`);
      assert.equal(dry.status, 2, `${args.join(' ')} --dry-run: ${dry.stderr}`);
      assert.match(dry.stderr, said);
    }
  });

  it("export --help's defaults paragraph names the --key default the option definition holds, and what it means", async () => {
    const program = await buildProgram(['node', 'traces', 'export']);
    const key = program.commands.find((c) => c.name() === 'export')?.options.find((o) => o.long === '--key');
    assert.ok(key !== undefined, 'export has a --key option');
    const defaultKey = key.defaultValue as KeyKind;
    assert.ok((KEY_KINDS as readonly string[]).includes(defaultKey), String(defaultKey));
    const help = runCli(['export', '--help']).stdout;
    const paragraph = help.slice(help.indexOf('Defaults for export'), help.indexOf('Secrets found')).replace(/\s+/g, ' ');
    assert.ok(paragraph.includes(`one record per --key ${defaultKey} (${KEY_MEANING[defaultKey]})`), paragraph);
    const preference = help.slice(help.indexOf('Preference formats'), help.indexOf('--format ask-recording')).replace(/\s+/g, ' ');
    assert.ok(preference.includes(`one --key, by default ${defaultKey}`), preference);
    assert.ok(help.replace(/\s+/g, ' ').includes(`default: "${defaultKey}"`));
    const prose = help.slice(help.indexOf('Defaults for export'), help.indexOf('Examples:'));
    for (const line of prose.split('\n')) assert.ok(line.length <= 80, `over 80 columns: ${line}`);
  });

  it('the package is not published as npm\'s unrelated traces, keeps the traces command, and the card links to it', () => {
    const manifest = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string> };
    assert.notEqual(manifest.name, 'traces');
    assert.deepEqual(Object.keys(manifest.bin), ['traces']);
    const lock = JSON.parse(readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as { name: string; packages: Record<string, { name?: string }> };
    assert.equal(lock.name, manifest.name);
    assert.equal(lock.packages[''].name, manifest.name);
    const out = path.join(tempDir(), 'hf');
    assert.equal(runCli(['export', SAMPLES, '--format', 'hf', '--out', out]).status, 0);
    const card = readFileSync(path.join(out, 'README.md'), 'utf8');
    assert.ok(card.includes(`https://www.npmjs.com/package/${manifest.name}`), 'the card links to the project');
    assert.ok(!card.includes('npmjs.com/package/traces)'));
    // In a clone the README says ./bin/traces.js, not npx traces (which fetches the other package).
    const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
    assert.doesNotMatch(readme, /is `npx traces`/);
    assert.match(readme, /`\.\/bin\/traces\.js`/);
  });
});
