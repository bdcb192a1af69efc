/**
 * An option that takes one value, given twice: refused (exit 2, one line naming both values)
 * rather than the last silently winning. Every option of every command is tried, from the
 * program's own option list, so an option added later is covered too.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildProgram } from '../src/cli.js';
import { UserError } from '../src/errors.js';
import { repeatable } from '../src/commands/option-repeats.js';
import { runCli, SAMPLES } from './helpers.js';

describe('an option given twice', () => {
  it('every option of every command that takes one value is refused the second time, before the command runs', async () => {
    const program = await buildProgram(['node', 'traces']);
    let tried = 0;
    for (const command of program.commands) {
      for (const option of command.options) {
        if (!(option.required || option.optional) || option.parseArg === repeatable) continue;
        const fresh = await buildProgram(['node', 'traces', command.name()]);
        const value = option.argChoices?.[0] ?? '1';
        // An unknown option last: should the repeat pass, commander refuses it before any command runs.
        const argv = ['node', 'traces', command.name(), option.long!, value, option.long!, value, '--no-such-option'];
        await assert.rejects(
          fresh.parseAsync(argv),
          (error: unknown) => error instanceof UserError && error.exitCode === 2 && error.message.startsWith(`${option.long} given more than once`),
          `${command.name()} ${option.long}`,
        );
        tried++;
      }
    }
    assert.ok(tried > 50, `options tried: ${tried}`);
  });

  it('on the command line: exit 2, one line, nothing run; what the last value would have done is not done', () => {
    const result = runCli(['dedupe', SAMPLES, '--dry-run', '--status', 'ok', '--status', 'exception']);
    assert.equal(result.status, 2);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr, 'traces: --status given more than once ("ok", then "exception"): give it once, a list comma-separated\n');
  });

  it('options meant to be repeated still collect every value', () => {
    const both = runCli(['filter', SAMPLES, '--dry-run', '--json', '--program', 'my_program', '--program', 'math_agent']);
    assert.equal(both.status, 0, both.stderr);
    const one = runCli(['filter', SAMPLES, '--dry-run', '--json', '--program', 'my_program']);
    const kept = (r: { stdout: string }) => (JSON.parse(r.stdout) as { kept: number }).kept;
    assert.ok(kept(both) > kept(one), `${kept(both)} > ${kept(one)}`);
    // Flags without a value may be repeated: nothing is lost.
    assert.equal(runCli(['stats', path.join(SAMPLES, 'my_program'), '--json', '--json']).status, 0);
  });
});
