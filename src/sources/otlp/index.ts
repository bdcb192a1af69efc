/** OpenTelemetry spans (OTLP/JSON trace files) whose LLM calls are records (read.ts; the extractor chain, chain.ts). */
import type { Source } from '../source.js';
import { byLines } from './by-lines.js';
import { spanCensus } from './census.js';

export const otlpSource: Source = {
  kind: 'otlp',
  label: 'OTLP span file',
  describesRuns: false,
  // An ExportTraceServiceRequest: `resourceSpans` (the proto's field name `resource_spans` too).
  detect: (keys) => keys.includes('resourceSpans') || keys.includes('resource_spans'),
  async *read(file, range) {
    yield* (await import('./read.js')).readOtlpFile(file, range);
  },
  splits: (file) => byLines(file),
  describeUnread: (file) => spanCensus(file.path),
};
