/**
 * Issue 15: every command's --help read as a newcomer would: it works, it has examples, and
 * the examples name only folders the repository ships (samples/…) or obvious placeholders.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO, runCli } from './helpers.js';

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
});
