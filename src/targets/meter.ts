/**
 * What reports and validation learn from an example's length (`ExampleMeter`, target.ts): its
 * token counts (all of it, and the tokens trained on) and, when the counts come from a model's
 * own chat template and tokenizer, what rendering the example found. Two meters answer it: an
 * OpenAI encoding (here: the written line's texts plus the cookbook's framing estimate) and a
 * model folder (`model/meter.ts`: the text the trainer will tokenize, counted by the model's
 * tokenizer). The registry (index.ts) loads either by spec: a model meter needs the trainer of
 * the target the spec names.
 */
import type { ExampleMeter, Finding, TargetName } from './target.js';
import { countExampleTokens, type EncodingName, type TokenCounter } from './tokens.js';

/** Which assistant turns are trained: every one, or only the last (earlier ones are context). */
export type TrainOn = 'all' | 'last';
export const TRAIN_ON: readonly TrainOn[] = ['all', 'last'];

/** A local model folder in the Hugging Face layout, read as the trainer of `target` would use it. */
export interface ModelSpec {
  folder: string;
  /** A file whose text replaces the folder's chat template, or null. */
  chatTemplate: string | null;
  target: TargetName;
  trainOn: TrainOn;
}

/** Plain data (it crosses to worker threads): an encoding name or a model folder. */
export type TokenizerSpec = EncodingName | ModelSpec;

const NO_FINDINGS: Finding[] = [];
const encodingMeters = new WeakMap<TokenCounter, ExampleMeter>();

/** Today's counts: the encoding's, findings none. */
export function encodingMeter(counter: TokenCounter): ExampleMeter {
  let meter = encodingMeters.get(counter);
  if (meter === undefined) {
    meter = {
      name: counter.encoding,
      rendersTemplate: false,
      measure: (example) => ({ tokens: countExampleTokens(counter, example), findings: NO_FINDINGS }),
    };
    encodingMeters.set(counter, meter);
  }
  return meter;
}

export function specName(spec: TokenizerSpec): string {
  return typeof spec === 'string' ? spec : spec.folder;
}
