import { Command } from 'commander';
import { runOverFiles } from '../parallel/run-shares.js';
import type { SourceKind } from '../record.js';
import { addSourceOption, findTraceFiles, printJsonWithList, ROOTS_DESCRIPTION, writeOut } from './common.js';
import { JsonLinesSpill } from '../pipeline/spill.js';
import { plural } from '../format.js';
import { refuseNoRecords } from '../sources/no-records.js';
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
      // A tree hashed another way mismatches in every record: they are printed, or kept on disk for --json, as they come.
      const spilled = options.json ? new JsonLinesSpill() : null;
      let mismatches = 0;
      let checked = 0;
      let damaged = 0;
      try {
        const shares = runOverFiles(
          JOBS.verify,
          discovery,
          (share) => ({ files: discovery.files, share }),
          (result) => ({ records: result.checked, bytes: result.bytes }),
        );
        for await (const result of shares) {
          checked += result.checked;
          damaged += result.damaged;
          mismatches += result.mismatches.length;
          for (const m of result.mismatches) {
            if (spilled !== null) spilled.add(m);
            else await writeOut(`${m.file}:${m.line}: ${m.call_id}: ${m.field} does not match the recorded value\n`);
          }
        }
        // Ask and klieo files are read (for their hashes) elsewhere: only a tree with none of them and no record is empty.
        if (unhashed.length === 0) refuseNoRecords(discovery, checked, damaged);
        if (spilled !== null) {
          await printJsonWithList({ checked, mismatches: null, damaged_lines: damaged, files_without_hashes: unhashed.length }, 'mismatches', spilled.lines(), true);
        } else {
          process.stdout.write(
            `${plural(checked, 'record')} checked, ${plural(mismatches, 'mismatch', 'mismatches')}` +
              (damaged > 0 ? `, ${plural(damaged, 'damaged line')} not checked (see traces stats)` : '') +
              (unhashed.length > 0 ? `, ${plural(unhashed.length, 'Ask/klieo file')} not checked (no recorded hashes)` : '') +
              '\n',
          );
        }
      } finally {
        spilled?.dispose();
      }
      process.exitCode = mismatches > 0 ? 1 : 0;
    });
}
