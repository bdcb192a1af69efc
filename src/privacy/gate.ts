/**
 * Shared prefilters. Running twenty regexes over each of many short strings costs mostly
 * per-call overhead, so detectors that share a cheap trigger are gated by one combined pass.
 */

/**
 * One regex pass over a text finds which of `triggers` (regex sources without capture
 * groups) occur; `gate(i)` is a mayMatch for the detector behind trigger i. The pass runs
 * once per text: the result for the last text is kept, as detectors run one after another.
 */
export function triggerGate(triggers: readonly string[], flags = ''): (index: number) => (text: string) => boolean {
  if (triggers.length > 31) throw new Error('triggerGate: at most 31 triggers');
  const pattern = new RegExp(triggers.map((t) => `(${t})`).join('|'), flags + 'g');
  const everything = 2 ** triggers.length - 1;
  let lastText: string | undefined;
  let lastMask = 0;

  const maskOf = (text: string): number => {
    if (text === lastText) return lastMask;
    let mask = 0;
    pattern.lastIndex = 0;
    let match: RegExpExecArray | null;
    while (mask !== everything && (match = pattern.exec(text)) !== null) {
      for (let group = 1; group < match.length; group++) {
        if (match[group] !== undefined) {
          mask |= 1 << (group - 1);
          break;
        }
      }
      // Triggers may overlap (sk- inside sk-ant-); look again one character on.
      pattern.lastIndex = match.index + 1;
    }
    lastText = text;
    lastMask = mask;
    return mask;
  };

  return (index) => (text) => (maskOf(text) & (1 << index)) !== 0;
}

/** A single-trigger gate: `source` found anywhere in the text, computed once per text. */
export function sharedGate(source: string, flags = ''): (text: string) => boolean {
  return triggerGate([source], flags)(0);
}
