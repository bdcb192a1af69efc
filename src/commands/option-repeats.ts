/**
 * An option given twice on one command line: commander keeps the last value without a word,
 * so `--status ok --status exception` kept the failed calls alone and `--validation-fraction
 * 0.1 --validation-fraction 0.5` split half. Options meant to be given several times say so
 * by collecting with `repeatable`; any other that takes a value is refused the second time.
 */
import type { Command } from 'commander';
import { UserError } from '../errors.js';

/** The parser of an option that may be given several times: every value, in order. */
export const repeatable = (value: string, previous: string[] = []): string[] => [...previous, value];

export function refuseRepeatedOptions(command: Command): void {
  for (const sub of command.commands) refuseRepeatedOptions(sub);
  for (const option of command.options) {
    const takesValue = option.required || option.optional;
    if (!takesValue || option.variadic || option.parseArg === repeatable) continue;
    const given: unknown[] = [];
    command.on(`option:${option.name()}`, (value: unknown) => {
      given.push(value);
      if (given.length < 2) return;
      const values = given.map((v) => (typeof v === 'string' ? JSON.stringify(v) : 'with no value')).join(', then ');
      throw new UserError(`${option.long ?? option.flags} given more than once (${values}): give it once${option.description.includes('comma-separated') ? ', a list comma-separated' : ''}`);
    });
  }
}
