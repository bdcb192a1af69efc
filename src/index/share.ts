/** `index` over one share of the files, in a worker thread: its rows in a file of their own, and the damaged lines to report. */
import type { DamagedLine } from '../record.js';
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { PriceTable, type PriceTableData } from '../pricing/table.js';
import { IndexRowWriter, type IndexRowFile } from '../engine/index-columns.js';
import { addRow, placeOf, type ExampleFacts } from './row.js';
import type { ProjectionSettings } from '../export/project-share.js';
import { qualityIsOff, qualityOf, type QualitySettings } from '../pipeline/quality/index.js';
import { scrubbedDamage, type ScrubSettings } from '../privacy/scrub.js';

export interface IndexSharePayload {
  files: TraceFile[];
  share: WorkShare;
  prices: { data: PriceTableData; origin: string };
  /** Where this share's rows go (a new file in the run's scratch folder). */
  rowsFile: string;
  /** With `traces index --format`: the export's settings each record's example is made with. */
  projection?: ProjectionSettings | null;
  /** With `traces index --format`: export's quality stages, whose drop the index records (null: none run). */
  quality?: QualitySettings | null;
  /** How the row's names and paths, and the damaged lines' paths, are scrubbed (`--scrub`; null: as recorded). */
  scrub?: ScrubSettings | null;
}

export interface IndexShareResult {
  rows: IndexRowFile;
  damaged: DamagedLine[];
  bytes: number;
}

export async function indexShare({ files, share, prices, rowsFile, projection, quality, scrub = null }: IndexSharePayload): Promise<IndexShareResult> {
  // Loaded only for an index built for a target: the targets and tokenizers cost start-up time.
  const verdict = projection == null ? null : await (await import('../export/project-share.js')).indexProjection(projection);
  const stages = quality != null && !qualityIsOff(quality) ? quality : null;
  // As curation decides: the quality stages read ok records only (candidate.ts).
  const examples: ExampleFacts | null =
    verdict === null
      ? null
      : (record) => {
          const found = stages !== null && record.status === 'ok' ? qualityOf(record, stages) : null;
          // A record a stage drops is not flagged: it reaches no dedupe.
          const flagged = found === null || found.drop !== null || found.flags === null ? null : found.flags.map((flag) => flag.reason).join(',');
          return { quality: found?.drop?.reason ?? null, flagged, ...verdict(record) };
        };
  const table = new PriceTable(prices.data, prices.origin);
  const rows = new IndexRowWriter(rowsFile);
  const damaged: DamagedLine[] = [];
  let bytes = 0;
  try {
    for (const range of share.ranges) {
      const file = files[range.fileIndex];
      const place = placeOf(file, scrub);
      for await (const batch of readFileRange(file, { start: range.start, end: range.end })) {
        bytes += batch.bytes;
        for (const record of batch.records) addRow(rows, record, place, table, examples, scrub);
        for (const line of batch.damaged) damaged.push(scrubbedDamage(line, scrub));
      }
    }
  } catch (error) {
    rows.close();
    throw error;
  }
  return { rows: rows.finish(), damaged, bytes };
}

declare module '../parallel/jobs.js' {
  interface JobFunctions {
    index: typeof indexShare;
  }
}
