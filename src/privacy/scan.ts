/** Findings across a JSON value, each with the path of the string it sits in (for `traces scan`). */
import type { Finding, PrivacyOptions } from './types.js';
import { walkValue } from './walk.js';

/** start/end are offsets inside the (decoded) string at `path`; a key's path ends in ` (key)`. */
export interface PathFinding extends Finding {
  path: string;
}

/**
 * `rootPath` prefixes every path: scanValue(record.messages(), opts, 'messages') yields
 * messages[3].content, or messages[4].content.settings inside a structured output.
 */
export function* scanValue(value: unknown, options: PrivacyOptions, rootPath = ''): Generator<PathFinding> {
  const found: PathFinding[] = [];
  walkValue(value, options, {}, (finding, path) => found.push({ ...finding, path }), rootPath);
  yield* found;
}
