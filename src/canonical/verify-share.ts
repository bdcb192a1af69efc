/** `verify` over one share of the files, in a worker thread. */
import { ByteSink } from './byte-sink.js';
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';

export interface Mismatch {
  call_id: string;
  file: string;
  line: number;
  field: 'inputs_hash' | 'config_hash';
}

export interface VerifyShareResult {
  checked: number;
  damaged: number;
  bytes: number;
  mismatches: Mismatch[];
}

const sink = new ByteSink();

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
        if (inputsHash !== record.inputsHash) result.mismatches.push({ ...where, field: 'inputs_hash' });
        if (configHash !== record.configHash) result.mismatches.push({ ...where, field: 'config_hash' });
      }
    }
  }
  return result;
}
