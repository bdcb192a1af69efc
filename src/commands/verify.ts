import { Command } from 'commander';
import { runOverFiles } from '../parallel/run-shares.js';
import { findTraceFiles, printJson } from './common.js';
import type { Mismatch } from '../canonical/verify-share.js';

export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description('Recompute inputs_hash and config_hash of every record, byte for byte as Synalinks does, and list mismatches.')
    .argument('[roots...]', 'Synalinks trace folders or .jsonl files (default: $SYNALINKS_HOME or ~/.synalinks)')
    .option('--json', 'print {"checked", "mismatches": [...]} as JSON')
    .option('-v, --verbose', 'list the files skipped as not being traces')
    .addHelpText(
      'after',
      `
A mismatch means the record was edited after it was recorded (or written by a
different serializer): its hashes no longer describe its messages or config.

Exit codes: 0 all hashes match, 1 some record mismatches, 2 usage error.

Examples:
  traces verify
  traces verify samples/synalinks --json`,
    )
    .action(async (roots: string[], options: { json?: boolean; verbose?: boolean }) => {
      const discovery = await findTraceFiles(roots, options);
      const mismatches: Mismatch[] = [];
      let checked = 0;
      let damaged = 0;
      const shares = runOverFiles(
        'verify',
        discovery,
        (share) => ({ files: discovery.files, share }),
        (result) => ({ records: result.checked, bytes: result.bytes }),
      );
      for await (const result of shares) {
        checked += result.checked;
        damaged += result.damaged;
        mismatches.push(...result.mismatches);
      }
      if (options.json) printJson({ checked, mismatches, damaged_lines: damaged });
      else {
        for (const m of mismatches) process.stdout.write(`${m.file}:${m.line}: ${m.call_id}: ${m.field} does not match the recorded value\n`);
        process.stdout.write(
          `${checked.toLocaleString('en-US')} records checked, ${mismatches.length} mismatch${mismatches.length === 1 ? '' : 'es'}` +
            (damaged > 0 ? `, ${damaged} damaged line${damaged === 1 ? '' : 's'} not checked (see traces stats)` : '') +
            '\n',
        );
      }
      process.exitCode = mismatches.length > 0 ? 1 : 0;
    });
}
