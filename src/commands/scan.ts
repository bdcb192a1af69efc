import { Command } from 'commander';
import type { SourceKind } from '../record.js';
import { runOverFiles } from '../parallel/run-shares.js';
import { parseScrub } from '../privacy/options.js';
import { scrubbedCallId, scrubbedPath } from '../privacy/scrub.js';
import type { RecordFinding, UnscannedRecord } from '../privacy/scan-share.js';
import { addSourceOption, findTraceFiles, printJsonWithList, ROOTS_DESCRIPTION, writeSummary } from './common.js';
import { JsonLinesSpill } from '../pipeline/spill.js';
import { appendAll, FirstsByKind } from '../lists.js';
import { formatCount, plural, printable } from '../format.js';
import { compareText } from '../order.js';
import { JOBS } from '../parallel/jobs.js';
import { refuseNoRecords } from '../sources/no-records.js';

const LISTED_PER_DETECTOR = 10;

/**
 * A finding's masked preview with the length of what it masks: a short value is masked whole
 * (`…`, so the report leaks nothing), and `… (7 characters)` still tells a phone number from
 * a paragraph.
 */
export function previewText(finding: { preview: string; length: number }): string {
  return `${printable(finding.preview)} (${plural(finding.length, 'character')})`;
}

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
Previews show only the first and last characters of what was found, and the
file paths and call_ids it names are scrubbed as an export's manifest scrubs
them, so the report itself leaks nothing. Program, module and call_id are
scanned too: an export makes folders and names from them. Exit 1 when
anything is found, or when a record could not be scanned (a text too long to
hold; listed on stderr).

Examples:
  traces scan
  traces scan samples/synalinks --kinds secrets --json`,
    )
    .action(async (roots: string[], flags: { kinds: string; scrubRules?: string; json?: boolean; verbose?: boolean; source?: SourceKind }) => {
      const options = parseScrub(flags.kinds, flags.scrubRules, '--kinds');
      // The files it names (-v, unreadable ones) are scrubbed by --kinds, as its findings' files are.
      const discovery = await findTraceFiles(roots, { ...flags, names: options === null ? null : { options, dropOnSecrets: false } });
      // Every finding goes to disk for --json; the report keeps the first few of each detector.
      const details = flags.json ? new JsonLinesSpill() : null;
      const byDetector = new FirstsByKind<RecordFinding>(LISTED_PER_DETECTOR);
      const notScanned: UnscannedRecord[] = [];
      let found = 0;
      let records = 0;
      let damaged = 0;
      try {
        if (options !== null) {
          const shares = runOverFiles(
            JOBS.scan,
            discovery,
            (share) => ({ files: discovery.files, share, options }),
            (result) => ({ records: result.records, bytes: result.bytes }),
          );
          // The report names each record by its file and call_id, recorded text that can hold
          // what was found (a key as a program folder): shown scrubbed, as an export's manifest does.
          const scrub = { options, dropOnSecrets: false };
          const named = <T extends { file: string; call_id: string }>(at: T): T => ({ ...at, file: scrubbedPath(at.file, scrub), call_id: scrubbedCallId(at.call_id, scrub) });
          for await (const result of shares) {
            for (const finding of result.findings.map(named)) {
              found++;
              details?.add(finding);
              byDetector.add(finding.detector, finding);
            }
            appendAll(notScanned, result.notScanned.map(named));
            records += result.records;
            damaged += result.damaged;
          }
        }
        if (options !== null) refuseNoRecords(discovery, records, damaged);
        for (const r of notScanned) writeSummary(`traces: ${printable(r.file)}:${r.line}: ${printable(r.call_id)}: not scanned: ${r.reason}`);
        if (details !== null) {
          const summary = {
            records,
            findings: found,
            by_detector: Object.fromEntries(byDetector.counts),
            details: null,
            not_scanned: notScanned,
            damaged_lines: damaged,
          };
          await printJsonWithList(summary, 'details', details.lines(), true);
        } else {
          for (const [detector, count] of [...byDetector.counts].sort(([a], [b]) => compareText(a, b))) {
            const first = byDetector.firsts.get(detector)!;
            writeSummary(
              [
                `${printable(detector)} (${first[0].kind}): ${formatCount(count)}`,
                ...first.map((f) => `  ${printable(f.file)}:${f.line} ${printable(f.call_id)} ${printable(f.path)}: ${previewText(f)}`),
                ...(count > first.length ? [`  … ${formatCount(count - first.length)} more (--json lists all)`] : []),
              ],
              process.stdout,
            );
          }
          writeSummary(
            `${plural(records - notScanned.length, 'record')} scanned, ${plural(found, 'finding')}` +
              (notScanned.length > 0 ? `, ${plural(notScanned.length, 'record')} not scanned (listed above)` : '') +
              (damaged > 0 ? `, ${plural(damaged, 'damaged line')} not scanned (see traces stats)` : ''),
            process.stdout,
          );
        }
      } finally {
        details?.dispose();
      }
      // A record that could not be scanned may hold anything: no all-clear.
      process.exitCode = found > 0 || notScanned.length > 0 ? 1 : 0;
    });
}
