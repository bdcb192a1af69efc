/**
 * Shared prefilters. Over many short strings, scanning each once per detector dominates the
 * cost; a family of detectors with a common, rarely present trigger is skipped after one pass.
 */

/**
 * A mayMatch for several detectors: does `source` occur in the text? Detectors run one after
 * another on the same text, so the answer for the last text is kept and the pass runs once.
 */
export function sharedGate(source: string, flags = ''): (text: string) => boolean {
  const pattern = new RegExp(source, flags);
  let lastText: string | undefined;
  let lastAnswer = false;
  return (text) => {
    if (text !== lastText) {
      lastAnswer = pattern.test(text);
      lastText = text;
    }
    return lastAnswer;
  };
}
