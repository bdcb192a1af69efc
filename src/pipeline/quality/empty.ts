/** `empty`: an assistant turn with no text, no tool call, no structured output and no reasoning, or only white space. */
import type { Message } from '../../record.js';
import { contentText, hasToolCalls, isBlank, reasoningText } from './text.js';

export function emptyDetail(completion: Message): string | null {
  if (hasToolCalls(completion)) return null;
  const content = contentText(completion);
  // Reasoning with no answer is `broken` (reasoning field holding the answer), checked first.
  if (!isBlank(reasoningText(completion))) return null;
  if (content === '') return 'no content, no tool call';
  return isBlank(content) ? `content is only white space (${content.length} characters)` : null;
}
