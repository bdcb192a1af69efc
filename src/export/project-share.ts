/**
 * The per-record half of an export, over one share of the files (a worker thread for big
 * trees): project each kept record for the target, attach tools, count tokens, choose
 * its split, and inspect it as the validator will. Only the line and a summary travel back.
 */
import path from 'node:path';
import type { WorkShare } from '../parallel/units.js';
import { assignSplit, groupKey, type Split } from '../pipeline/split.js';
import type { TraceFile } from '../sources/discover.js';
import { readSelectedRecords } from '../sources/read.js';
import {
  countExampleTokens,
  getTarget,
  inspectExample,
  loadTokenCounter,
  toolsFor,
  withCountCache,
  type EncodingName,
  type Inspection,
  type ReasoningMode,
  type TokenCounter,
  type ToolDefinition,
} from '../targets/index.js';
import { safeSegment } from './names.js';

export interface ProjectionSettings {
  format: string;
  reasoning: ReasoningMode;
  supplied: ToolDefinition[];
  inferred: ToolDefinition[];
  /** Tool names every line carries (NeMo Customizer reads one schema per file), or null. */
  everyLineTools: string[] | null;
  maxExampleTokens: number | null;
  seed: string;
  validationFraction: number;
  tokenizer: EncodingName;
  groupByModule: boolean;
}

export type ProjectedItem =
  | { kind: 'drop'; call_id: string; file: string; line: number; reason: string; detail?: string }
  | { kind: 'example'; line: string; split: Split; folder: string; inspection: Inspection; inferredTools: string[] };

export interface ProjectSharePayload {
  files: TraceFile[];
  share: WorkShare;
  /** Kept line numbers, sorted, by file index. */
  kept: Map<number, Int32Array>;
  settings: ProjectionSettings;
}

/** Token counts are cached across shares handled by the same thread. */
let cachedCounter: { encoding: EncodingName; counter: TokenCounter } | null = null;

async function counterFor(encoding: EncodingName): Promise<TokenCounter> {
  if (cachedCounter?.encoding !== encoding) cachedCounter = { encoding, counter: withCountCache(await loadTokenCounter(encoding)) };
  return cachedCounter.counter;
}

export async function projectShare({ files, share, kept, settings }: ProjectSharePayload): Promise<{ items: ProjectedItem[]; records: number }> {
  const target = getTarget(settings.format);
  const counter = await counterFor(settings.tokenizer);
  const items: ProjectedItem[] = [];
  let records = 0;
  for (const range of share.ranges) {
    const lines = kept.get(range.fileIndex);
    if (lines === undefined) continue;
    for await (const { records: batch } of readSelectedRecords(files, new Map([[range.fileIndex, lines]]), { start: range.start, end: range.end })) {
      for (const record of batch) {
        records++;
        const where = { call_id: record.callId, file: record.ref.file, line: record.ref.line };
        const messages = record.messages();
        const projection = target.project(messages, { reasoning: settings.reasoning });
        if (!projection.ok) {
          items.push({ kind: 'drop', ...where, reason: projection.reason, detail: projection.detail });
          continue;
        }
        let example = projection.example;
        const tools = toolsFor(settings.everyLineTools ?? projection.toolNames, settings.supplied, settings.inferred);
        if (tools.definitions.length > 0) example = target.attachTools(example, tools.definitions);
        if (settings.maxExampleTokens !== null) {
          const tokens = countExampleTokens(counter, example);
          if (tokens.total > settings.maxExampleTokens) {
            items.push({ kind: 'drop', ...where, reason: 'too_long', detail: `${tokens.total} tokens > --max-example-tokens ${settings.maxExampleTokens}` });
            continue;
          }
        }
        items.push({
          kind: 'example',
          line: JSON.stringify(example),
          split: assignSplit(groupKey(record.program, messages), settings.seed, settings.validationFraction),
          folder: settings.groupByModule ? path.join(safeSegment(record.program), safeSegment(record.module)) : '',
          inspection: inspectExample(target, counter, example),
          inferredTools: tools.inferred,
        });
      }
    }
  }
  return { items, records };
}
