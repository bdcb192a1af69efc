/** Findings across a JSON value, each with the path of the string it sits in (for `traces scan`). */
import { findAll, findAllInField } from './detectors.js';
import { childPath, isPlainObject, parseEmbeddedJson } from './json-walk.js';
import type { Finding, PrivacyOptions } from './types.js';

/** start/end are offsets inside the string at `path`. */
export interface PathFinding extends Finding {
  path: string;
}

function* scanNode(node: unknown, path: string, key: string | undefined, options: PrivacyOptions): Generator<PathFinding> {
  if (typeof node === 'string') {
    const findings = key === undefined ? findAll(node, options.kinds, options.rules) : findAllInField(key, node, options.kinds, options.rules);
    if (findings.length === 0) return;
    // Descend into JSON held in a string (tool-call arguments) for precise paths such as
    // tool_calls[0].function.arguments.query; keep the flat findings if that finds nothing.
    const embedded = parseEmbeddedJson(node);
    const nested = embedded === undefined ? [] : [...scanNode(embedded, path, undefined, options)];
    if (nested.length > 0) yield* nested;
    else for (const f of findings) yield { ...f, path };
  } else if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) yield* scanNode(node[i], childPath(path, i), undefined, options);
  } else if (isPlainObject(node)) {
    for (const [k, v] of Object.entries(node)) yield* scanNode(v, childPath(path, k), k, options);
  }
}

/** `rootPath` prefixes every path: scanValue(record.messages(), opts, 'messages') yields messages[3].content. */
export function scanValue(value: unknown, options: PrivacyOptions, rootPath = ''): Generator<PathFinding> {
  return scanNode(value, rootPath, undefined, options);
}
