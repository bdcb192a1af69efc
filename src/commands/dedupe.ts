import type { Command } from 'commander';
import { registerCurationCommand } from './curate-run.js';

export function registerDedupe(program: Command): void {
  registerCurationCommand(program, {
    name: 'dedupe',
    dedupe: true,
    description: 'Keep one record per key (same prompt to the same model config by default), explaining every drop.',
    examples: `Among duplicates an ok record always wins over a failed one (a call retried
after a failure keeps its success); otherwise --keep decides by timestamp.
Each kept record is its original line, byte for byte. Every drop is listed in the
manifest with its reason (status, filter, the quality stages' truncated, broken,
empty, repetition, contaminated, refusal and identity, excluded, not_in_keep_list,
seen, duplicate, prefix) and, for duplicate and prefix, the call_id it gave way to.
Records a flagging stage (refusal, identity) found something in are kept, and
listed with "flagged": true (docs/quality-filters.md).

Examples:
  traces dedupe ~/.synalinks --status ok --out clean/
  traces dedupe samples/synalinks --key conversation --keep last --dry-run
  traces dedupe ~/.synalinks --status ok --against clean/ --out today/`,
  });
}
