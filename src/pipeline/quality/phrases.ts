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

/**
 * The first listed phrase the folded text holds, or null. Most answers hold none, and the
 * phrases share a few beginnings ("i can", "i'm ", "as o"): a text that lacks a beginning
 * lacks every phrase that starts with it, so each beginning is searched for once and only
 * the phrases of those present are (on the bench's answers, 2.5 times faster than a search
 * per phrase).
 */
export function phraseIn(foldedText: string, foldedPhrases: readonly string[]): string | null {
  const gate = gateOf(foldedPhrases);
  // One pass of the regular expression engine over the text for every beginning at once:
  // a third of the time of a search per beginning, and nearly every answer holds none.
  if (!gate.anyBeginning.test(foldedText)) return null;
  const present = gate.present;
  present.fill(UNKNOWN);
  for (let i = 0; i < foldedPhrases.length; i++) {
    const k = gate.beginningOf[i];
    if (present[k] === UNKNOWN) present[k] = foldedText.includes(gate.beginnings[k]) ? PRESENT : ABSENT;
    if (present[k] === PRESENT && foldedText.includes(foldedPhrases[i])) return foldedPhrases[i];
  }
  return null;
}

const BEGINNING_LENGTH = 4;
const UNKNOWN = 0;
const PRESENT = 1;
const ABSENT = 2;

interface PhraseGate {
  /** The phrases' distinct beginnings (their first BEGINNING_LENGTH characters). */
  beginnings: string[];
  /** Index into `beginnings` of each phrase's beginning. */
  beginningOf: Int32Array;
  /** Whether the text at hand holds each beginning (UNKNOWN until searched). */
  present: Uint8Array;
  /** Matches where any beginning is (no `g` flag: it keeps no position between texts). */
  anyBeginning: RegExp;
}

/** By phrase list: settings (and their lists) are made once per run, or once per share in a worker. */
const gates = new WeakMap<readonly string[], PhraseGate>();

function gateOf(phrases: readonly string[]): PhraseGate {
  let gate = gates.get(phrases);
  // A list grown after its first use (none is, today) gets a new gate.
  if (gate === undefined || gate.beginningOf.length !== phrases.length) {
    const beginnings = [...new Set(phrases.map((p) => p.slice(0, BEGINNING_LENGTH)))];
    gate = {
      beginnings,
      beginningOf: Int32Array.from(phrases, (p) => beginnings.indexOf(p.slice(0, BEGINNING_LENGTH))),
      present: new Uint8Array(beginnings.length),
      anyBeginning: new RegExp(beginnings.map((b) => b.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|') || '(?!)'),
    };
    gates.set(phrases, gate);
  }
  return gate;
}
