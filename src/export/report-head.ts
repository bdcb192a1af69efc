/**
 * The members every report.json starts with (docs/report.md): which traces wrote it, the
 * command line that asked for it and the roots that command read, so a dataset can be made
 * again, and told apart from one an older traces made.
 */
import { TRACES_VERSION } from '../version.js';
import { redactValue } from '../privacy/index.js';
import type { ScrubSettings } from '../privacy/scrub.js';

/** How a report was asked for: the command line after `traces`. */
export interface Invocation {
  arguments: string[];
}

/** Bumped when a member is renamed, removed or changes type; docs/report.md lists the changes. */
export const REPORT_SCHEMA_VERSION = 2;

/**
 * The head of a report. A dataset's report travels with it: the arguments (a `--grep` for a
 * leaked key) and the roots' folder names are scrubbed as the examples are.
 */
export function reportHead(command: string, invocation: Invocation, roots: readonly string[], scrub: ScrubSettings | null): Record<string, unknown> {
  const scrubbed = (texts: readonly string[]) => (scrub === null ? [...texts] : (redactValue([...texts], scrub.options).value as string[]));
  return {
    schema_version: REPORT_SCHEMA_VERSION,
    traces_version: TRACES_VERSION,
    command,
    arguments: scrubbed(invocation.arguments),
    roots: scrubbed(roots),
  };
}
