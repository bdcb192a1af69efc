import { Command } from 'commander';
import { ByteSink } from '../canonical/byte-sink.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import { findTraceFiles, printJson, withProgress } from './common.js';

interface Mismatch {
  call_id: string;
  file: string;
  line: number;
  field: 'inputs_hash' | 'config_hash';
}

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
      const sink = new ByteSink();
      const mismatches: Mismatch[] = [];
      let checked = 0;
      let damaged = 0;
      for await (const batch of withProgress(discovery)) {
        damaged += batch.damaged.length;
        for (const record of batch.records) {
          if (!(record instanceof SynalinksRecord)) continue;
          checked++;
          const { inputsHash, configHash } = record.recomputeHashes(sink);
          const where = { call_id: record.callId, file: record.ref.file, line: record.ref.line };
          if (inputsHash !== record.inputsHash) mismatches.push({ ...where, field: 'inputs_hash' });
          if (configHash !== record.configHash) mismatches.push({ ...where, field: 'config_hash' });
        }
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
