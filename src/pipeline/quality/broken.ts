/**
 * `broken`: reasoning markup that did not survive. A `<think>` never closed or a `</think>`
 * never opened in the content (the answer is half reasoning), or the reasoning field holding
 * the answer while the content is empty (a parser that put the whole output in reasoning).
 */
import type { Message } from '../../record.js';
import { contentText, hasToolCalls, isBlank, reasoningText } from './text.js';

/** The reasoning tags checked, compared without regard to case. */
export const OPEN_TAG = '<think>';
export const CLOSE_TAG = '</think>';

export function brokenDetail(completion: Message): string | null {
  const content = contentText(completion);
  // Without a '<' there is no tag: no lower-cased copy of the whole answer is made to search.
  const folded = content.includes('<') ? content.toLowerCase() : '';
  let depth = 0;
  let openedAt = -1;
  // Tags in order: each close needs an open before it, and the last open needs its close.
  for (let at = 0; ; ) {
    const open = folded.indexOf(OPEN_TAG, at);
    const close = folded.indexOf(CLOSE_TAG, at);
    if (open === -1 && close === -1) break;
    if (open !== -1 && (close === -1 || open < close)) {
      if (depth === 0) openedAt = open;
      depth++;
      at = open + OPEN_TAG.length;
    } else {
      if (depth === 0) return `${CLOSE_TAG} at character ${close} of the content with no ${OPEN_TAG} before it`;
      depth--;
      at = close + CLOSE_TAG.length;
    }
  }
  if (depth > 0) return `${OPEN_TAG} at character ${openedAt} of the content never closed`;
  const reasoning = reasoningText(completion);
  if (!isBlank(reasoning) && isBlank(content) && !hasToolCalls(completion)) {
    return `reasoning_content holds ${reasoning.length} characters and the content is empty: the answer went to the reasoning field`;
  }
  return null;
}
