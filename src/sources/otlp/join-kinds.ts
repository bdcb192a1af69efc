/**
 * The records an OTLP span's content may lie in outside the span, by kind, each told from a
 * line's bytes before anything is parsed: the log records written in it (`resourceLogs`), and a
 * Mastra call's step and tool spans (`mastra.span.type`). Discovery (index.ts) lists, per kind,
 * the files whose first bytes hold its marker; join-index.ts indexes their lines.
 */
export interface JoinKind {
  readonly name: 'logs' | 'mastra';
  readonly markers: readonly Buffer[];
}

export const JOIN_KINDS: readonly JoinKind[] = [
  { name: 'logs', markers: [Buffer.from('"resourceLogs"'), Buffer.from('"resource_logs"')] },
  { name: 'mastra', markers: [Buffer.from('"mastra.span.type"')] },
];

/** Whether bytes (a line, a file's first bytes) hold a marker of this kind: a byte search, nothing parsed. */
export function holdsKind(kind: JoinKind, bytes: Buffer): boolean {
  return kind.markers.some((marker) => bytes.includes(marker));
}
