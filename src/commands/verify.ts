import { Command } from 'commander';
import { runOverFiles } from '../parallel/run-shares.js';
import type { SourceKind } from '../record.js';
import { addSourceOption, findTraceFiles, printJsonWithList, ROOTS_DESCRIPTION, writeOut, writeSummary } from './common.js';
import { JsonLinesSpill } from '../pipeline/spill.js';
import { plural, printable } from '../format.js';
import { refuseNoRecords } from '../sources/no-records.js';
import { JOBS } from '../parallel/jobs.js';
import { addScrubOptions, scrubSettings, type ScrubFlags } from './scrub-option.js';
import { scrubbedCallId, scrubbedPath } from '../privacy/scrub.js';

export function registerVerify(program: Command): void {
  const command = program
    .command('verify')
    .description('Recompute inputs_hash and config_hash of every record, byte for byte as Synalinks does, and list mismatches.')
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .option('--json', 'print {"checked", "edited", "reserialized", "mismatches": [...]} as JSON, each mismatch with its verdict')
    .option('-v, --verbose', 'list the files skipped as not being traces')
    .addHelpText(
      'after',
      `
A mismatch means the record was edited after it was recorded: its hashes no
longer describe its messages or config. A record another tool wrote again
without changing a value (Python's json writes 1e16 as 1e+16) is told apart as
reserialized: its hashes match once its numbers are written as orjson writes
them (either spelling, before and from orjson 3.11.7; -0 read as orjson reads
it, 0, or as the -0.0 Go's encoding/json writes so). Its values are as
recorded, so it does not fail the check.
Ask recordings and klieo runs record no hashes: their files are listed as not
checked (traces computes their hashes when it reads them).

Exit codes: 0 all hashes match (reserialized records included), 1 some record
was edited, 2 usage error.

Examples:
  traces verify
  traces verify samples/synalinks --json`,
    );
  addScrubOptions(command, 'the file paths and call_ids listed');
  addSourceOption(command);
  command.action(async (roots: string[], options: { json?: boolean; verbose?: boolean; source?: SourceKind } & ScrubFlags) => {
      const scrub = scrubSettings(options);
      const found = await findTraceFiles(roots, { ...options, names: scrub });
      // Only Synalinks records carry hashes to check.
      const unhashed = found.files.filter((f) => f.source !== undefined && f.source !== 'synalinks');
      const discovery = { ...found, files: found.files.filter((f) => f.source === undefined || f.source === 'synalinks') };
      // A tree hashed another way mismatches in every record: they are printed, or kept on disk for --json, as they come.
      const spilled = options.json ? new JsonLinesSpill() : null;
      let mismatches = 0;
      let reserialized = 0;
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
          for (const recorded of result.mismatches) {
            // A file under a program folder and a call_id are recorded text: listed scrubbed.
            const m = scrub === null ? recorded : { ...recorded, file: scrubbedPath(recorded.file, scrub), call_id: scrubbedCallId(recorded.call_id, scrub) };
            if (m.verdict === 'edited') mismatches++;
            else reserialized++;
            if (spilled !== null) spilled.add(m);
            else if (m.verdict === 'edited') await writeOut(`${printable(m.file)}:${m.line}: ${printable(m.call_id)}: ${m.field} does not match the recorded value (edited)\n`);
            else await writeOut(`${printable(m.file)}:${m.line}: ${printable(m.call_id)}: ${m.field} matches once its numbers are written as orjson writes them (reserialized: values unchanged)\n`);
          }
        }
        // Ask and klieo files are read (for their hashes) elsewhere: only a tree with none of them and no record is empty.
        if (unhashed.length === 0) refuseNoRecords(discovery, checked, damaged);
        if (spilled !== null) {
          await printJsonWithList({ checked, edited: mismatches, reserialized, mismatches: null, damaged_lines: damaged, files_without_hashes: unhashed.length }, 'mismatches', spilled.lines(), true);
        } else {
          writeSummary(
            `${plural(checked, 'record')} checked, ${plural(mismatches, 'mismatch', 'mismatches')}` +
              (reserialized > 0 ? `, ${plural(reserialized, 'reserialized hash', 'reserialized hashes')} (values unchanged)` : '') +
              (damaged > 0 ? `, ${plural(damaged, 'damaged line')} not checked (see traces stats)` : '') +
              (unhashed.length > 0 ? `, ${plural(unhashed.length, 'file')} of other recorders not checked (they record no hashes)` : ''),
            process.stdout,
          );
        }
      } finally {
        spilled?.dispose();
      }
      process.exitCode = mismatches > 0 ? 1 : 0;
    });
}
