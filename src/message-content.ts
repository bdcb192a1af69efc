/**
 * A message's content as a dataset holds it: text, or image parts. Every target writes content
 * this way, and the split's group key and `traces scan` read it so, below the targets that
 * write it.
 */
import { isJsonObject, writeJson } from './canonical/json-value.js';

type JsonObject = Record<string, unknown>;

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } };

/** Raised inside normalization; turned into a `not_representable` result at the boundary. */
export class NotRepresentable extends Error {}

/**
 * Content as text: dicts (tool results) and other JSON values become compact
 * JSON, numbers as recorded; text parts are concatenated without separator (what providers do when
 * they flatten parts); image parts keep the parts form. Audio, files and
 * unknown part types have no place in a text dataset.
 */
export function normalizeContent(content: unknown, index: number): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!isPartList(content)) return writeJson(content);
  const parts = content.map((p, k) => normalizePart(p, index, k));
  if (parts.every((p) => p.type === 'text')) return joinTextParts(parts);
  return parts;
}

function joinTextParts(parts: readonly ContentPart[]): string {
  return parts.map((p) => (p as { text: string }).text).join('');
}

/**
 * The one text a dataset holds for content recorded as several text parts, or null for any
 * other content: what `traces scan` must also read, since a secret can span two parts.
 */
export function joinedTextParts(content: unknown): string | null {
  if (!isPartList(content) || content.length < 2 || !content.every((p) => p.type === 'text')) return null;
  return joinTextParts(content.map((p, k) => normalizePart(p, 0, k)));
}

/** A list counts as content parts when every element is an object with a string `type`. */
function isPartList(value: unknown): value is JsonObject[] {
  return Array.isArray(value) && value.length > 0 && value.every((p) => isJsonObject(p) && typeof p.type === 'string');
}

function normalizePart(part: JsonObject, index: number, k: number): ContentPart {
  if (part.type === 'text') return { type: 'text', text: typeof part.text === 'string' ? part.text : '' };
  if (part.type === 'image_url') {
    const image = part.image_url;
    // Some clients write the URL directly instead of `{url}`.
    if (typeof image === 'string') return { type: 'image_url', image_url: { url: image } };
    if (isJsonObject(image) && typeof image.url === 'string') {
      return {
        type: 'image_url',
        image_url: typeof image.detail === 'string' ? { url: image.url, detail: image.detail } : { url: image.url },
      };
    }
    throw new NotRepresentable(`message ${index}: image part ${k} has no url`);
  }
  throw new NotRepresentable(`message ${index}: content part ${k} of type ${JSON.stringify(part.type)} cannot be exported`);
}
