import type { Command } from 'commander';
import { registerCurationCommand } from './curate-run.js';

export function registerFilter(program: Command): void {
  registerCurationCommand(program, {
    name: 'filter',
    dedupe: false,
    description: 'Keep the records that match the selection options (duplicates included), explaining every drop.',
    examples: `Examples:
  traces filter ~/.synalinks --status ok --model 'openai/*' --since 2026-07-01 --out july/
  traces filter samples/synalinks --grep 'Toulouse' --dry-run
  traces filter ~/.synalinks --exclude traces-exclude.txt --out reviewed/`,
  });
}
