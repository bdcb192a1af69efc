/**
 * `--scrub` and `--scrub-rules` as every command takes them, for the names it shows (program,
 * module, model, tool and service names, file paths under a Synalinks tree, call_ids): recorded
 * text, scrubbed as export scrubs the records (`scrubbedName`, `scrubbedPath`, src/privacy/scrub.ts).
 */
import type { Command } from 'commander';
import { UserError } from '../errors.js';
import type { ScrubSettings } from '../privacy/scrub.js';
import { parseScrub } from '../privacy/options.js';

export interface ScrubFlags {
  scrub: string;
  scrubRules?: string;
  dropOn?: string;
}

/** Adds `--scrub` (default secrets) and `--scrub-rules`; `what` says what they scrub. */
export function addScrubOptions(command: Command, what: string): Command {
  return command
    .option('--scrub <kinds>', `${what}: secrets, pii, secrets,pii or none, as export takes it`, 'secrets')
    .option('--scrub-rules <file>', `${what}: extra named regular expressions, as export takes them`);
}

/** `--scrub`, `--scrub-rules` and `--drop-on` as export reads them; null for `--scrub none`. */
export function scrubSettings(flags: ScrubFlags): ScrubSettings | null {
  const options = parseScrub(flags.scrub, flags.scrubRules);
  if (flags.dropOn !== undefined && (options === null || !options.kinds.has('secret'))) {
    throw new UserError('--drop-on secrets needs --scrub to include secrets');
  }
  return options === null ? null : { options, dropOnSecrets: flags.dropOn === 'secrets' };
}
