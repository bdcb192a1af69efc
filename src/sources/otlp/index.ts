/** OpenTelemetry spans (OTLP/JSON trace files) whose LLM calls are records (read.ts; the extractor chain, chain.ts), and the log records written in them (log-index.ts). */
import { readHead } from '../detect.js';
import type { Source } from '../source.js';
import { byLines } from './by-lines.js';
import { holdsLogs } from './log-marker.js';

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
  // Every OTLP file of the input set whose first bytes hold logs is indexed for every OTLP file's
  // spans (log-index.ts): logs go to their own file or folder as often as beside the spans.
  gather(files) {
    const otlp = files.filter((file) => file.source === 'otlp');
    const logs = otlp.filter((file) => {
      const head = readHead(file.path);
      return head !== null && holdsLogs(head);
    });
    if (logs.length === 0) return;
    const paths = logs.map((file) => file.path);
    for (const file of otlp) file.companions = paths;
  },
};
