/**
 * Issue 15: every command's --help read as a newcomer would: it works, it has examples, and
 * the examples name only folders the repository ships (samples/…) or obvious placeholders.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO, runCli, SAMPLES, tempDir, flat } from './helpers.js';

const COMMANDS = ['stats', 'verify', 'dedupe', 'filter', 'export', 'validate', 'scan', 'browse', 'runs'];

describe('--help', () => {
  it('the overview lists every command and says where each one explains itself', () => {
    const help = runCli(['--help']);
    assert.equal(help.status, 0);
    for (const command of COMMANDS) assert.match(help.stdout, new RegExp(`^  ${command} `, 'm'), command);
    assert.match(help.stdout, /traces <command> --help/);
  });

  it('traces help <command> shows that command\'s help and succeeds, as --help does', () => {
    for (const command of [...COMMANDS, 'index', 'sql']) {
      const help = runCli(['help', command]);
      assert.equal(help.status, 0, `help ${command}: ${help.stderr}`);
      assert.equal(help.stdout, runCli([command, '--help']).stdout);
    }
    assert.equal(runCli(['help']).status, 0);
    assert.equal(runCli([]).status, 2, 'no command is a usage error');
  });

  for (const command of COMMANDS) {
    it(`${command}: examples that run from a clone, roots described the same way`, () => {
      const help = runCli([command, '--help']);
      assert.equal(help.status, 0, help.stderr);
      const examples = help.stdout.slice(help.stdout.indexOf('Examples:'));
      assert.ok(help.stdout.includes('Examples:'), `${command} has examples`);
      for (const line of examples.split('\n').filter((l) => l.startsWith('  traces '))) {
        assert.ok(line.startsWith(`  traces ${command}`), `${command}'s example runs ${command}: ${line}`);
        for (const word of line.trim().split(/\s+/)) {
          // A path inside the repository must exist there; others are the user's (~/…, out dirs, placeholders).
          if (/^(samples|test|src|bench)\//.test(word)) assert.ok(existsSync(path.join(REPO, word.replace(/\/\*.*$/, ''))), `${command}: ${word} in "${line.trim()}"`);
        }
      }
      if (command !== 'validate') assert.match(help.stdout, /Ask recordings|Ask\b/, `${command} says which recorders it reads`);
    });
  }

  it('no --help shows benchmark ratios: they mean nothing to a user (docs/quality-filters.md holds them)', () => {
    for (const command of [...COMMANDS, 'index', 'sql']) {
      const help = runCli([command, '--help']).stdout;
      assert.doesNotMatch(help, /\d(\.\d+)?x\b|\bbench\b/, command);
    }
  });

  it("commander's own errors read like traces' own: traces: …", () => {
    for (const args of [['stats', '--nope'], ['export', '--format', 'bogus', '--out', 'x'], ['bogus'], ['export', '--tokenizer']]) {
      const result = runCli(args);
      assert.equal(result.status, 2, args.join(' '));
      assert.match(result.stderr, /^traces: /, result.stderr);
      assert.doesNotMatch(result.stderr, /^error: /m);
    }
  });
});

describe('validate without --format', () => {
  it("takes the format the export recorded in its report.json, else the first line's keys, else asks for --format", () => {
    const work = tempDir();
    for (const format of ['openai', 'nemo', 'nemo-customizer']) {
      const out = path.join(work, format);
      assert.equal(runCli(['export', SAMPLES, '--format', format, '--out', out]).status, 0);
      const result = runCli(['validate', path.join(out, 'training.jsonl')]);
      assert.equal(result.status, 0, result.stderr);
      assert.match(flat(result.stdout), new RegExp(`valid for ${format} `));
      assert.match(flat(result.stderr), new RegExp(`^validate: --format ${format} \\(the export's .*report\\.json; give --format to choose\\) $`));
      // Away from its report, the first line's keys tell where only one format writes them.
      const alone = path.join(work, `${format}.jsonl`);
      copyFileSync(path.join(out, 'training.jsonl'), alone);
      const guessed = runCli(['validate', alone]);
      if (guessed.status === 0) assert.match(flat(guessed.stdout), new RegExp(`valid for ${format} `));
      else assert.match(guessed.stderr, /^traces: .*validate needs --format openai\|nemo\|nemo-customizer/m);
    }
    const plain = path.join(work, 'plain.jsonl');
    writeFileSync(plain, '{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}\n');
    const ambiguous = runCli(['validate', plain]);
    assert.equal(ambiguous.status, 2);
    assert.match(ambiguous.stderr, /validate needs --format openai\|nemo\|nemo-customizer/);
    const weighted = path.join(work, 'weighted.jsonl');
    writeFileSync(weighted, '{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b","weight":1}]}\n');
    assert.match(runCli(['validate', weighted]).stdout, /for openai\n/);
  });
});
