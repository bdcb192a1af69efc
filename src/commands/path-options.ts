/**
 * Every option that names a path is an input unless it was declared as an output with
 * `outputOption`: one rule for every command and every option added later. The paths an
 * input option names are noted (`readsAlso`) as the command line is parsed, before any
 * command runs, so no output a run checks later (`--out`, `--manifest`, any file inside an
 * output folder) can be one, lie inside one or contain one, whichever reader reads it and when.
 */
import { existsSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { readsAlso } from '../output/output-path.js';

const OUTPUTS = new WeakSet<Option>();

/** An option naming a path the command writes; declared once, where the command declares its options. */
export function outputOption(flags: string, description: string, defaultValue?: string): Option {
  const option = new Option(flags, description);
  if (defaultValue !== undefined) option.default(defaultValue);
  OUTPUTS.add(option);
  return option;
}

/** `<file>`, `<dir>`, `<path>`, `<encoding|dir>`: the value may name something on disk. */
function namesPath(option: Option): 'always' | 'maybe' | null {
  const placeholder = /<([^>]+)>|\[([^\]]+)\]/.exec(option.flags);
  if (placeholder === null) return null;
  const words = (placeholder[1] ?? placeholder[2]!).split('|');
  const paths = words.filter((word) => /^(file|dir|folder|path)s?(\.\.\.)?$/.test(word));
  if (paths.length === 0) return null;
  // `--tokenizer <encoding|dir>`: a value that is no path on disk is a name, not an input.
  return paths.length === words.length ? 'always' : 'maybe';
}

export function noteInputOptions(command: Command): void {
  for (const sub of command.commands) noteInputOptions(sub);
  for (const option of command.options) {
    const kind = namesPath(option);
    if (kind === null || OUTPUTS.has(option)) continue;
    command.on(`option:${option.name()}`, (value: unknown) => {
      if (typeof value !== 'string' || value === '') return;
      if (kind === 'maybe' && !existsSync(value)) return;
      readsAlso(value);
    });
  }
}
