/**
 * The options one target declares for itself (`Target.options`, e.g. `--file-format`): added to
 * a command from the registry, and read back for the target named by --format. Given with
 * another format, one is refused rather than ignored without a word.
 */
import { Option, type Command } from 'commander';
import { UserError } from '../errors.js';
import { targetOptions, type TargetOption } from '../targets/index.js';

export function addTargetOptions(command: Command): Command {
  // An option two targets share (hf and hf-preference: --file-format) is one option, naming both.
  const byFlags = new Map<string, { option: TargetOption; targets: string[] }>();
  for (const { target, option } of targetOptions()) {
    const entry = byFlags.get(option.flags);
    if (entry === undefined) byFlags.set(option.flags, { option, targets: [target.name] });
    else entry.targets.push(target.name);
  }
  for (const { option, targets } of byFlags.values()) {
    command.addOption(new Option(option.flags, `(--format ${targets.join(', ')}) ${option.description}`).choices([...option.choices]).default(option.defaultValue));
  }
  return command;
}

/** The values of `format`'s own options, by attribute name; undefined when it declares none. */
export function targetSettings(command: Command, format: string): Record<string, string> | undefined {
  let mine: Record<string, string> | undefined;
  const others = new Map<string, { long: string; targets: string[] }>();
  for (const { target, option } of targetOptions()) {
    const made = new Option(option.flags, '');
    const name = made.attributeName();
    const value = command.getOptionValue(name) as string;
    if (target.name === format) {
      (mine ??= {})[name] = value;
    } else if (command.getOptionValueSource(name) === 'cli') {
      const entry = others.get(name) ?? { long: made.long ?? name, targets: [] };
      entry.targets.push(target.name);
      others.set(name, entry);
    }
  }
  for (const [name, { long, targets }] of others) {
    if (mine === undefined || !(name in mine)) throw new UserError(`${long} applies to --format ${targets.join(' or ')} only; leave it out with --format ${format}`);
  }
  return mine;
}
