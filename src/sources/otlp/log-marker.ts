/** Whether bytes (a line, a file's first bytes) hold OTLP logs (`resourceLogs`, the proto's `resource_logs`): a byte search, nothing parsed. */
const LOG_MARKERS = [Buffer.from('"resourceLogs"'), Buffer.from('"resource_logs"')];

export function holdsLogs(bytes: Buffer): boolean {
  return LOG_MARKERS.some((marker) => bytes.includes(marker));
}
