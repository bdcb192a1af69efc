/**
 * OpenAI's limits on images in a fine-tuning example (vision fine-tuning, "Image data
 * requirements"): at most 64 images per example, each at most 10 MB, JPEG, PNG or WEBP only.
 * One check, for the exporter (which drops the example with the reason) and for `validate`
 * (an error of the same name). Only data URLs can be checked here: an http(s) URL is fetched
 * by the trainer, and its size and format are not known without fetching it.
 */
import { isJsonObject as isObject } from '../canonical/json-value.js';

/** Images one example may hold. */
export const MAX_IMAGES_PER_EXAMPLE = 64;
/** Bytes one image may be (10 MB, decimal: the stricter reading of OpenAI's "10 MB"). */
export const MAX_IMAGE_BYTES = 10_000_000;
/** The media types OpenAI takes (image/jpg is a common misspelling of image/jpeg, with the same bytes). */
const ALLOWED_TYPES = new Set(['image/jpeg', 'image/jpg', 'image/png', 'image/webp']);

export type ImageFailure = 'image_too_large' | 'image_format' | 'too_many_images';

export interface ImageProblem {
  reason: ImageFailure;
  detail: string;
}

/** The image URLs of a message list as written (content parts `{type: "image_url", image_url: {url} | url}`), with their message index. */
function imageUrls(messages: readonly unknown[]): { message: number; url: string | null }[] {
  const found: { message: number; url: string | null }[] = [];
  messages.forEach((message, i) => {
    const content = isObject(message) ? message.content : undefined;
    if (!Array.isArray(content)) return;
    for (const part of content) {
      if (!isObject(part) || part.type !== 'image_url') continue;
      const image = part.image_url;
      found.push({ message: i, url: typeof image === 'string' ? image : isObject(image) && typeof image.url === 'string' ? image.url : null });
    }
  });
  return found;
}

/** What breaks OpenAI's image limits in an example's messages, or null. */
export function imageProblem(messages: readonly unknown[]): ImageProblem | null {
  const images = imageUrls(messages);
  if (images.length > MAX_IMAGES_PER_EXAMPLE) {
    return { reason: 'too_many_images', detail: `${images.length} images, more than the ${MAX_IMAGES_PER_EXAMPLE} OpenAI takes in one example` };
  }
  for (const { message, url } of images) {
    const data = url === null ? null : dataUrl(url);
    if (data === null) continue;
    const at = `message ${message}`;
    if (data.bytes > MAX_IMAGE_BYTES) {
      return { reason: 'image_too_large', detail: `${at}: an image of ${data.bytes} bytes, more than the ${MAX_IMAGE_BYTES} (10 MB) OpenAI takes` };
    }
    if (!ALLOWED_TYPES.has(data.type)) {
      return { reason: 'image_format', detail: `${at}: an image of type ${JSON.stringify(data.type.slice(0, 64))}; OpenAI takes JPEG, PNG and WEBP only` };
    }
    const sniffed = data.head === null ? null : knownFormat(data.head);
    if (sniffed !== null && !['jpeg', 'png', 'webp'].includes(sniffed)) {
      return { reason: 'image_format', detail: `${at}: an image declared ${data.type} whose bytes are ${sniffed.toUpperCase()}; OpenAI takes JPEG, PNG and WEBP only` };
    }
  }
  return null;
}

/**
 * A data URL's media type (lower case), its decoded size in bytes, and its first bytes when
 * base64 (null otherwise), computed from the text without decoding it all; null for another URL.
 */
function dataUrl(url: string): { type: string; bytes: number; head: Buffer | null } | null {
  if (!/^data:/i.test(url)) return null;
  const comma = url.indexOf(',');
  if (comma < 0) return { type: '', bytes: 0, head: null };
  const header = url.slice(5, comma).toLowerCase().split(';').map((s) => s.trim());
  const type = header[0] === '' ? 'text/plain' : header[0];
  const payloadLength = url.length - comma - 1;
  if (!header.includes('base64')) return { type, bytes: payloadLength, head: null };
  let padding = 0;
  for (let k = url.length - 1; k > comma && url[k] === '=' && padding < 2; k--) padding++;
  return { type, bytes: Math.floor((payloadLength * 3) / 4) - padding, head: Buffer.from(url.slice(comma + 1, comma + 1 + 24), 'base64') };
}

/** The format the first bytes of an image say, when they say one. */
function knownFormat(head: Buffer): string | null {
  const ascii = head.toString('latin1');
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if (ascii.startsWith('\x89PNG')) return 'png';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'webp';
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'gif';
  if (ascii.startsWith('BM')) return 'bmp';
  if (ascii.startsWith('II*\0') || ascii.startsWith('MM\0*')) return 'tiff';
  if (ascii.slice(4, 12) === 'ftypheic' || ascii.slice(4, 12) === 'ftypavif') return ascii.slice(8, 12);
  return null;
}
