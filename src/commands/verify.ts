import { Command } from 'commander';
import { runOverFiles } from '../parallel/run-shares.js';
import type { SourceKind } from '../record.js';
import { addSourceOption, findTraceFiles, printJson, ROOTS_DESCRIPTION } from './common.js';
import type { Mismatch } from '../canonical/verify-share.js';
import { appendAll } from '../lists.js';
import { formatCount } from '../format.js';
import { JOBS } from '../jobs.js';

export function registerVerify(program: Command): void {
  const command = program
    .command('verify')
    .description('Recompute inputs_hash and config_hash of every record, byte for byte as Synalinks does, and list mismatches.')
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .option('--json', 'print {"checked", "mismatches": [...]} as JSON')
    .option('-v, --verbose', 'list the files skipped as not being traces')
    .addHelpText(
      'after',
      `
A mismatch means the record was edited after it was recorded (or written by a
different serializer): its hashes no longer describe its messages or config.
Ask recordings and klieo runs record no hashes: their files are listed as not
checked (traces computes their hashes when it reads them).

Exit codes: 0 all hashes match, 1 some record mismatches, 2 usage error.

Examples:
  traces verify
  traces verify samples/synalinks --json`,
    );
  addSourceOption(command);
  command.action(async (roots: string[], options: { json?: boolean; verbose?: boolean; source?: SourceKind }) => {
      const found = await findTraceFiles(roots, options);
      // Only Synalinks records carry hashes to check.
      const unhashed = found.files.filter((f) => f.source !== undefined && f.source !== 'synalinks');
      const discovery = { ...found, files: found.files.filter((f) => f.source === undefined || f.source === 'synalinks') };
      const mismatches: Mismatch[] = [];
      let checked = 0;
      let damaged = 0;
      const shares = runOverFiles(
        JOBS.verify,
        discovery,
        (share) => ({ files: discovery.files, share }),
        (result) => ({ records: result.checked, bytes: result.bytes }),
      );
      for await (const result of shares) {
        checked += result.checked;
        damaged += result.damaged;
        appendAll(mismatches, result.mismatches);
      }
      if (options.json) printJson({ checked, mismatches, damaged_lines: damaged, files_without_hashes: unhashed.length });
      else {
        for (const m of mismatches) process.stdout.write(`${m.file}:${m.line}: ${m.call_id}: ${m.field} does not match the recorded value\n`);
        process.stdout.write(
          `${formatCount(checked)} records checked, ${mismatches.length} mismatch${mismatches.length === 1 ? '' : 'es'}` +
            (damaged > 0 ? `, ${damaged} damaged line${damaged === 1 ? '' : 's'} not checked (see traces stats)` : '') +
            (unhashed.length > 0 ? `, ${unhashed.length} Ask/klieo file${unhashed.length === 1 ? '' : 's'} not checked (no recorded hashes)` : '') +
            '\n',
        );
      }
      process.exitCode = mismatches.length > 0 ? 1 : 0;
    });
}
