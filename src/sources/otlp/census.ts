/**
 * What a span file that gave no record holds: how many spans, and of what kinds by dialect
 * marker (chain.ts `spanKind`), so a file of spans no extractor reads as an LLM call says so
 * instead of seeming empty. Read on the way to the message that no record was read, at most
 * CENSUS_BYTES of the file, line by line (or whole, for a document that fits).
 */
import { parseJsonText } from '../../canonical/json-value.js';
import { plural } from '../../format.js';
import { readHead } from '../head.js';
import { isObject } from '../json-values.js';
import { SpanBag } from './bag.js';
import { spanKind } from './chain.js';
import { logRecordsOf } from './join-index.js';
import { attributeMap } from './values.js';

const CENSUS_BYTES = 64 << 20;

function requestSpans(doc: unknown, kinds: Map<string, number>, logged: Set<string>): void {
  const requests = Array.isArray(doc) ? doc : [doc];
  for (const request of requests) {
    if (!isObject(request)) continue;
    for (const { traceId, spanId } of logRecordsOf(request)) logged.add(traceId + spanId);
    const list = request.resourceSpans ?? request.resource_spans;
    for (const rs of Array.isArray(list) ? list : []) {
      const scopes = isObject(rs) ? (rs.scopeSpans ?? rs.scope_spans ?? rs.instrumentationLibrarySpans) : null;
      for (const ss of Array.isArray(scopes) ? scopes : []) {
        for (const span of isObject(ss) && Array.isArray(ss.spans) ? ss.spans : []) {
          if (!isObject(span)) continue;
          const kind = spanKind(new SpanBag(span, attributeMap(span.attributes)));
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        }
      }
    }
  }
}

/** `3 spans, no LLM call among them (2 langfuse (not an LLM call), 1 with no dialect marker)`, or null when the file cannot be read. */
export function spanCensus(path: string): string | null {
  const bytes = readHead(path, CENSUS_BYTES + 1);
  if (bytes === null) return null;
  const read = { bytes: bytes.subarray(0, CENSUS_BYTES), whole: bytes.length <= CENSUS_BYTES };
  const kinds = new Map<string, number>();
  // The spans that log records of the file were written in (an ExportLogsServiceRequest file).
  const logged = new Set<string>();
  let parsedWhole = false;
  if (read.whole) {
    try {
      requestSpans(parseJsonText(read.bytes), kinds, logged);
      parsedWhole = true;
    } catch {
      // Lines, not one document.
    }
  }
  if (!parsedWhole) {
    let start = 0;
    while (start < read.bytes.length) {
      let end = read.bytes.indexOf(0x0a, start);
      if (end === -1) {
        if (!read.whole) break;
        end = read.bytes.length;
      }
      try {
        requestSpans(parseJsonText(read.bytes.subarray(start, end)), kinds, logged);
      } catch {
        // A damaged line: counted as one by the reader.
      }
      start = end + 1;
    }
  }
  const total = [...kinds.values()].reduce((a, b) => a + b, 0);
  const scope = read.whole ? '' : ` in its first ${CENSUS_BYTES >> 20} MB`;
  if (total === 0 && logged.size > 0) return `no span${scope}, only log records of ${plural(logged.size, 'span')}: they are read with their spans, so name the span files with it`;
  if (total === 0) return `no span${scope}`;
  const parts = [...kinds]
    .sort(([a, m], [b, n]) => n - m || (a < b ? -1 : 1))
    .map(([kind, n]) => `${n} ${kind === 'none' ? 'with no dialect marker' : kind}`);
  return `${plural(total, 'span')}${scope}, no LLM call among them (${parts.join(', ')})`;
}
