/** `verify` over one share of the files, in a worker thread. */
import { ByteSink } from '../canonical/byte-sink.js';
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import { sha256Hex, writeCanonical } from '../canonical/canonical.js';
import { ORJSON_READINGS, withOrjsonNumbers } from '../canonical/orjson-numbers.js';

export interface Mismatch {
  call_id: string;
  file: string;
  line: number;
  field: 'inputs_hash' | 'config_hash';
  /**
   * `edited`: the values are not those that were hashed. `reserialized`: they are, but another
   * tool wrote the line again with other number text (the hash matches once the floats are
   * written as orjson writes them).
   */
  verdict: 'edited' | 'reserialized';
}

export interface VerifyShareResult {
  checked: number;
  damaged: number;
  bytes: number;
  mismatches: Mismatch[];
}

const sink = new ByteSink();
const renumbered = new ByteSink();

/** Whether the canonical bytes in `sink` hash to `recorded` once their numbers are written as some orjson writes them. */
function hashesOnceRenumbered(recorded: string): boolean {
  return ORJSON_READINGS.some(({ spelling, negativeZero }) => sha256Hex(withOrjsonNumbers(sink.view(), spelling, renumbered, negativeZero)) === recorded);
}

function verdictOf(record: SynalinksRecord, field: Mismatch['field']): Mismatch['verdict'] {
  sink.reset();
  if (field === 'inputs_hash') record.writeCanonicalInputs(sink);
  else {
    const [start, end] = record.span('config')!;
    writeCanonical(record.raw, start, end, sink);
  }
  return hashesOnceRenumbered(field === 'inputs_hash' ? record.inputsHash : record.configHash) ? 'reserialized' : 'edited';
}

export async function verifyShare({ files, share }: { files: TraceFile[]; share: WorkShare }): Promise<VerifyShareResult> {
  const result: VerifyShareResult = { checked: 0, damaged: 0, bytes: 0, mismatches: [] };
  for (const range of share.ranges) {
    for await (const batch of readFileRange(files[range.fileIndex], { start: range.start, end: range.end })) {
      result.bytes += batch.bytes;
      result.damaged += batch.damaged.length;
      for (const record of batch.records) {
        if (!(record instanceof SynalinksRecord)) continue;
        result.checked++;
        const { inputsHash, configHash } = record.recomputeHashes(sink);
        const where = { call_id: record.callId, file: record.ref.file, line: record.ref.line };
        if (inputsHash !== record.inputsHash) result.mismatches.push({ ...where, field: 'inputs_hash', verdict: verdictOf(record, 'inputs_hash') });
        if (configHash !== record.configHash) {
          const verdict = configHash === null ? 'edited' : verdictOf(record, 'config_hash');
          result.mismatches.push({ ...where, field: 'config_hash', verdict });
        }
      }
    }
  }
  return result;
}

declare module '../parallel/jobs.js' {
  interface JobFunctions {
    verify: typeof verifyShare;
  }
}
