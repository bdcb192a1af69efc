/** `scan` over one share of the files, in a worker thread: findings with masked previews only. */
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { TextTooLongError, unlessTooLong } from '../canonical/scan.js';
import { isJsonObject } from '../canonical/json-value.js';
import { joinedTextParts } from '../message-content.js';
import { scanValue } from './redact.js';
import type { PathFinding } from './scan.js';
import type { PrivacyOptions } from './types.js';
import type { TraceRecord } from '../record.js';

export interface RecordFinding {
  detector: string;
  kind: string;
  call_id: string;
  file: string;
  line: number;
  /** Where in the record, e.g. `messages[3].tool_calls[0].function.arguments.query`. */
  path: string;
  preview: string;
  /** The found value's length in UTF-16 units, what a preview masked whole (`…`) still says of it. */
  length: number;
}

/** A record whose text could not be scanned: it may hold anything. */
export interface UnscannedRecord {
  call_id: string;
  file: string;
  line: number;
  reason: string;
}

export async function scanShare({ files, share, options }: { files: TraceFile[]; share: WorkShare; options: PrivacyOptions }) {
  const findings: RecordFinding[] = [];
  const notScanned: UnscannedRecord[] = [];
  let records = 0;
  let bytes = 0;
  let damaged = 0;
  for (const range of share.ranges) {
    for await (const batch of readFileRange(files[range.fileIndex], { start: range.start, end: range.end })) {
      bytes += batch.bytes;
      damaged += batch.damaged.length;
      for (const record of batch.records) {
        records++;
        const found = unlessTooLong(() => {
          const messages = record.messages();
          return [...scanValue(messages, options, 'messages'), ...acrossTextParts(messages, options), ...inNames(record, options)];
        });
        if (found instanceof TextTooLongError) {
          notScanned.push({ call_id: record.callId, file: record.ref.file, line: record.ref.line, reason: found.message });
          continue;
        }
        for (const finding of found) {
          findings.push({
            detector: finding.detector,
            kind: finding.kind,
            call_id: record.callId,
            file: record.ref.file,
            line: record.ref.line,
            path: finding.path,
            preview: finding.preview,
            length: finding.end - finding.start,
          });
        }
      }
    }
  }
  return { findings, notScanned, records, bytes, damaged };
}

/**
 * Findings that only a message's text parts joined hold: every export target writes text
 * parts as one string, so a secret split across two parts leaks whole there, and export
 * redacts it; scan must say so too.
 */
function* acrossTextParts(messages: readonly unknown[], options: PrivacyOptions): Generator<PathFinding> {
  for (const [i, message] of messages.entries()) {
    // A message of another type than an object (null, a string) holds no parts.
    if (!isJsonObject(message)) continue;
    const joined = joinedTextParts(message.content);
    if (joined === null) continue;
    const inOnePart = new Set(Array.from(scanValue(message.content, options), (f) => `${f.detector} ${f.preview}`));
    for (const finding of scanValue(joined, options, `messages[${i}].content`)) {
      if (!inOnePart.has(`${finding.detector} ${finding.preview}`)) yield { ...finding, path: `${finding.path} (text parts joined)` };
    }
  }
}

/**
 * The record's program, module and call_id are recorded text too: an export makes folders,
 * class names, manifest paths and ids from them and scrubs them first (src/privacy/scrub.ts),
 * so a key used as a program name is found here as it is redacted there.
 */
function* inNames(record: Pick<TraceRecord, 'program' | 'module' | 'callId'>, options: PrivacyOptions): Generator<PathFinding> {
  yield* scanValue(record.program, options, 'program');
  yield* scanValue(record.module, options, 'module');
  yield* scanValue(record.callId, options, 'call_id');
}

declare module '../parallel/jobs.js' {
  interface JobFunctions {
    scan: typeof scanShare;
  }
}
