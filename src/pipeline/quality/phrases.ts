/**
 * `refusal` and `identity`: phrases a distilled model should not learn to say. Lists of
 * phrases are crude (they catch ordinary answers about the topic), so by default these are
 * flagged (counted and listed) and dropped only with `--drop refusals,identity`. A user's
 * list (one phrase a line, # comments) replaces the built-in one.
 *
 * Phrases are compared folded: lower case, straight apostrophes, white space made one space.
 */
import { foldForPhrases } from './text.js';

export const REFUSAL_PHRASES: readonly string[] = [
  "i can't help with that",
  'i cannot help with that',
  "i can't assist with that",
  'i cannot assist with that',
  "i'm sorry, but i can't",
  "i'm sorry, but i cannot",
  'i am sorry, but i cannot',
  "i'm unable to help with",
  'i am unable to help with',
  "i'm not able to help with",
  "i can't comply with",
  'i cannot comply with',
  "i won't be able to help with",
  'i must decline',
  'goes against my guidelines',
  'violates my guidelines',
  "i'm not able to provide assistance",
  "sorry, i can't do that",
  "i can't fulfill that",
  'i cannot fulfill that',
  "i can't fulfill this",
  'i cannot fulfill this',
  "i apologize, but i can't",
  'i apologize, but i cannot',
  "i'm unable to assist with",
  'i am unable to assist with',
  "i'm not able to assist with",
  'i am not able to assist with',
  "i can't help with this",
  'i cannot help with this',
];

export const IDENTITY_PHRASES: readonly string[] = [
  'as an ai developed by',
  'as an ai language model',
  'as a large language model',
  'as an ai model',
  "i'm a large language model",
  'i am a large language model',
  "i'm an ai language model",
  'i am an ai language model',
  'as an ai assistant developed by',
  'i am an ai developed by',
  "i'm an ai developed by",
  'i was developed by openai',
  'i was trained by openai',
  'i was created by openai',
  'i was created by anthropic',
  'i was made by anthropic',
  'i was trained by google',
  "i'm chatgpt",
  'i am chatgpt',
  "i'm claude, an ai",
  'i am claude, an ai',
  'as of my knowledge cutoff',
  'as of my last knowledge update',
  'as of my last training update',
  'my knowledge cutoff date',
  'my training data only goes up to',
  'my training data goes up to',
  'my knowledge cutoff is',
  'my training cutoff',
  "i don't have access to real-time",
  'i do not have access to real-time',
];

/** Phrases as compared: folded like the text, blank ones left out. */
export function foldPhrases(phrases: readonly string[]): string[] {
  return [...new Set(phrases.map((p) => foldForPhrases(p).trim()).filter((p) => p !== ''))];
}

/** The first listed phrase the folded text holds, or null. */
export function phraseIn(foldedText: string, foldedPhrases: readonly string[]): string | null {
  for (const phrase of foldedPhrases) if (foldedText.includes(phrase)) return phrase;
  return null;
}
