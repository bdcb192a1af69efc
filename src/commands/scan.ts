import { Command } from 'commander';
import type { SourceKind } from '../record.js';
import { runOverFiles } from '../parallel/run-shares.js';
import { parseScrub } from '../privacy/options.js';
import type { RecordFinding, UnscannedRecord } from '../privacy/scan-share.js';
import { addSourceOption, findTraceFiles, printJson, ROOTS_DESCRIPTION } from './common.js';
import { addToList, appendAll } from '../lists.js';
import { formatCount, printable } from '../format.js';
import { compareText } from '../order.js';
import { JOBS } from '../jobs.js';

const LISTED_PER_DETECTOR = 10;

export function registerScan(program: Command): void {
  addSourceOption(program.command('scan'))
    .description('Find secrets and personal data in recorded messages, without writing anything.')
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .option('--kinds <list>', 'what to look for: secrets, pii, or secrets,pii', 'secrets,pii')
    .option('--scrub-rules <file>', 'extra named regular expressions to look for too: [{"name","pattern"}] or {"rules":[…]}')
    .option('--json', 'print every finding as JSON')
    .option('-v, --verbose', 'list the files skipped as not being traces')
    .addHelpText(
      'after',
      `
Previews show only the first and last characters of what was found, so the
report itself leaks nothing. Exit 1 when anything is found, or when a record
could not be scanned (a text too long to hold; listed on stderr).

Examples:
  traces scan
  traces scan samples/synalinks --kinds secrets --json`,
    )
    .action(async (roots: string[], flags: { kinds: string; scrubRules?: string; json?: boolean; verbose?: boolean; source?: SourceKind }) => {
      const options = parseScrub(flags.kinds, flags.scrubRules, '--kinds');
      const discovery = await findTraceFiles(roots, flags);
      const findings: RecordFinding[] = [];
      const notScanned: UnscannedRecord[] = [];
      let records = 0;
      let damaged = 0;
      if (options !== null) {
        const shares = runOverFiles(
          JOBS.scan,
          discovery,
          (share) => ({ files: discovery.files, share, options }),
          (result) => ({ records: result.records, bytes: result.bytes }),
        );
        for await (const result of shares) {
          appendAll(findings, result.findings);
          appendAll(notScanned, result.notScanned);
          records += result.records;
          damaged += result.damaged;
        }
      }
      const byDetector = new Map<string, RecordFinding[]>();
      for (const f of findings) addToList(byDetector, f.detector, f);
      for (const r of notScanned) process.stderr.write(`traces: ${r.file}:${r.line}: ${r.call_id}: not scanned: ${r.reason}\n`);
      if (flags.json) {
        printJson({
          records,
          findings: findings.length,
          by_detector: Object.fromEntries([...byDetector].map(([d, l]) => [d, l.length])),
          details: findings,
          not_scanned: notScanned,
          damaged_lines: damaged,
        });
      } else {
        for (const [detector, list] of [...byDetector].sort(([a], [b]) => compareText(a, b))) {
          process.stdout.write(`${printable(detector)} (${list[0].kind}): ${list.length}\n`);
          for (const f of list.slice(0, LISTED_PER_DETECTOR)) process.stdout.write(`  ${printable(f.file)}:${f.line} ${printable(f.call_id)} ${printable(f.path)}: ${printable(f.preview)}\n`);
          if (list.length > LISTED_PER_DETECTOR) process.stdout.write(`  … ${list.length - LISTED_PER_DETECTOR} more (--json lists all)\n`);
        }
        process.stdout.write(
          `${formatCount(records - notScanned.length)} records scanned, ${findings.length} finding${findings.length === 1 ? '' : 's'}` +
            (notScanned.length > 0 ? `, ${notScanned.length} record${notScanned.length === 1 ? '' : 's'} not scanned (listed above)` : '') +
            (damaged > 0 ? `, ${damaged} damaged line${damaged === 1 ? '' : 's'} not scanned (see traces stats)` : '') +
            '\n',
        );
      }
      // A record that could not be scanned may hold anything: no all-clear.
      process.exitCode = findings.length > 0 || notScanned.length > 0 ? 1 : 0;
    });
}
