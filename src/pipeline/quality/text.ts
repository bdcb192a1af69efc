/** The texts of a message the quality stages read: its content as text, and its reasoning. */
import { writeJson } from '../../canonical/json-value.js';
import type { Message } from '../../record.js';
import { singleSpaced } from '../../white-space.js';

/**
 * A message's content as text: a string as it is, the text parts of a list joined by new
 * lines, any other value (a structured output, a dict) as compact JSON; '' when absent.
 */
export function contentText(message: Message): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (content === undefined || content === null) return '';
  if (Array.isArray(content)) {
    const texts: string[] = [];
    for (const part of content) {
      if (typeof part === 'string') texts.push(part);
      else if (part !== null && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') texts.push((part as { text: string }).text);
    }
    return texts.join('\n');
  }
  // A dict with no member is no output either.
  if (typeof content === 'object' && Object.keys(content).length === 0) return '';
  return writeJson(content);
}

export function reasoningText(message: Message): string {
  return typeof message.reasoning_content === 'string' ? message.reasoning_content : '';
}

export function hasToolCalls(message: Message): boolean {
  return Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
}

/** True when the text holds nothing but white space (or nothing). */
export function isBlank(text: string): boolean {
  return text.trim() === '';
}

/** Lower case, curly apostrophes and quotes made straight, white space runs made one space. */
export function foldForPhrases(text: string): string {
  return singleSpaced(text.toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'").replace(/[\u201c\u201d]/g, '"'));
}
