/**
 * What reports and validation learn from an example's length: its token counts (all of it,
 * and the tokens trained on) and, when the counts come from a model's own chat template and
 * tokenizer, what rendering the example found. Two meters answer it: an OpenAI encoding
 * (`tokens.ts`: the written line's texts plus the cookbook's framing estimate) and a model
 * folder (`model/`: the text the trainer will tokenize, counted by the model's tokenizer).
 */
import type { ErrorClass, Severity, TargetName } from './target.js';
import { countExampleTokens, loadTokenCounter, type EncodingName, type ExampleTokens, type TokenCounter } from './tokens.js';

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

/** A problem found in one example; the validator adds the line. */
export interface Finding {
  code: ErrorClass;
  severity: Severity;
  message: string;
  /** The option that fixes it, where traces knows one (`--chat-template …/qwen3-training.jinja`): a drop's summary line names it. */
  fix?: string;
}

export interface ExampleMeasure {
  /** `assistant` is the tokens trained on. */
  tokens: ExampleTokens;
  findings: Finding[];
}

export interface ExampleMeter {
  /** What reports name the counts by: the encoding, or the model folder as given. */
  readonly name: string;
  /** True when the counts are of the rendered chat template (exact), false for the encoding estimate. */
  readonly rendersTemplate: boolean;
  /** Never throws on a malformed example (validation reports those). */
  measure(example: unknown): ExampleMeasure;
}

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

const modelMeters = new Map<string, Promise<ExampleMeter>>();

/** Loads once per process and spec (a model folder takes a few seconds to read). */
export async function loadMeter(spec: TokenizerSpec): Promise<ExampleMeter> {
  if (typeof spec === 'string') return encodingMeter(await loadTokenCounter(spec));
  const key = JSON.stringify([spec.folder, spec.chatTemplate, spec.target, spec.trainOn]);
  let pending = modelMeters.get(key);
  if (pending === undefined) {
    // Only a --tokenizer DIR run pays for loading the template engine and the tokenizer.
    pending = import('./model/meter.js').then(({ loadModelMeter }) => loadModelMeter(spec));
    modelMeters.set(key, pending);
  }
  return pending;
}

export function specName(spec: TokenizerSpec): string {
  return typeof spec === 'string' ? spec : spec.folder;
}
