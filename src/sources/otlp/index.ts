/** OpenTelemetry spans (OTLP/JSON trace files) whose LLM calls are records (read.ts; the extractor chain, chain.ts), and the records their content lies in outside them (join-index.ts). */
import { readHead } from '../head.js';
import type { Source } from '../source.js';
import { byLines } from './by-lines.js';
import { holdsKind, JOIN_KINDS } from './join-kinds.js';
import { spanCensus } from './census.js';

export const otlpSource: Source = {
  kind: 'otlp',
  label: 'OTLP span file',
  describesRuns: false,
  // An ExportTraceServiceRequest (`resourceSpans`), or an ExportLogsServiceRequest (`resourceLogs`)
  // whose records join the spans they were written in; the proto's field names too.
  detect: (keys) => keys.some((key) => key === 'resourceSpans' || key === 'resource_spans' || key === 'resourceLogs' || key === 'resource_logs'),
  async *read(file, range) {
    yield* (await import('./read.js')).readOtlpFile(file, range);
  },
  splits: (file) => byLines(file),
  // The OTLP files of the input set whose first bytes hold log records (or Mastra's spans) are
  // indexed for every OTLP file's spans (join-index.ts): logs go to their own file or folder as
  // often as beside the spans, and a step span may be in another export batch than its call.
  gather(files) {
    const otlp = files.filter((file) => file.source === 'otlp');
    const companions: Record<string, string[]> = {};
    for (const file of otlp) {
      const head = readHead(file.path);
      if (head === null) continue;
      for (const kind of JOIN_KINDS) if (holdsKind(kind, head)) (companions[kind.name] ??= []).push(file.path);
    }
    if (Object.keys(companions).length === 0) return;
    for (const file of otlp) file.companions = companions;
  },
  describeUnread: (file) => spanCensus(file.path),
};
