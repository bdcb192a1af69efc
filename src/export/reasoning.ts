/** The reasoning mode of an export, and of the commands that make its examples one record at a time (index --format, map). */
import { UserError } from '../errors.js';
import type { ReasoningMode, Target } from '../targets/index.js';

/** The reasoning mode asked for, or the target's default; one the target cannot write is refused. */
export function resolveReasoning(target: Target, requested: ReasoningMode | undefined): ReasoningMode {
  const mode = requested ?? target.defaultReasoning;
  if (!target.reasoningModes.includes(mode)) {
    throw new UserError(`--reasoning ${mode}: ${target.name} supports ${target.reasoningModes.join(', ')}`);
  }
  return mode;
}
