/** `--scrub` and `--scrub-rules`: which detectors run, parsed once for scan and export. */
import { UserError } from '../errors.js';
import { loadRulesFile, RulesFileError } from './detectors.js';
import type { Kind, PrivacyOptions } from './types.js';

/** `secrets`, `secrets,pii`, `pii` or `none`; null for none. */
export function parseScrub(text: string, rulesFile: string | undefined, flag = '--scrub'): PrivacyOptions | null {
  const kinds = new Set<Kind>();
  for (const part of text.split(',').map((p) => p.trim())) {
    if (part === 'none') continue;
    if (part === 'secrets') kinds.add('secret');
    else if (part === 'pii') kinds.add('pii');
    else throw new UserError(`${flag} ${JSON.stringify(part)}: expected secrets, pii, secrets,pii or none`);
  }
  let rules;
  if (rulesFile !== undefined) {
    try {
      rules = loadRulesFile(rulesFile);
    } catch (error) {
      if (error instanceof RulesFileError) throw new UserError(`--scrub-rules ${error.message}`);
      throw error;
    }
  }
  if (kinds.size === 0 && (rules === undefined || rules.length === 0)) return null;
  return { kinds, rules };
}
