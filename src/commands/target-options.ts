/**
 * The options one target declares for itself (`Target.options`, e.g. `--file-format`): added to
 * a command from the registry, and read back for the target named by --format. Given with
 * another format, one is refused rather than ignored without a word.
 */
import { Option, type Command } from 'commander';
import { UserError } from '../errors.js';
import { targetOptions } from '../targets/index.js';

export function addTargetOptions(command: Command): Command {
  for (const { target, option } of targetOptions()) {
    command.addOption(new Option(option.flags, `(--format ${target.name}) ${option.description}`).choices([...option.choices]).default(option.defaultValue));
  }
  return command;
}

/** The values of `format`'s own options, by attribute name; undefined when it declares none. */
export function targetSettings(command: Command, format: string): Record<string, string> | undefined {
  let mine: Record<string, string> | undefined;
  for (const { target, option } of targetOptions()) {
    const made = new Option(option.flags, '');
    const name = made.attributeName();
    const value = command.getOptionValue(name) as string;
    if (target.name === format) {
      (mine ??= {})[name] = value;
    } else if (command.getOptionValueSource(name) === 'cli') {
      throw new UserError(`${made.long} applies to --format ${target.name} only; leave it out with --format ${format}`);
    }
  }
  return mine;
}
