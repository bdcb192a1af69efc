/**
 * Writes a realistic Synalinks trace tree of any size, deterministic for a seed, for the
 * benchmarks (and for tests that need more than samples/synalinks).
 *
 *   node dist/bench/generate.js --out DIR [--mb 200] [--seed 1] [--force] [--plant-near-duplicates] [--plant-failures] [--plant-pairs] [--distinct-calls]
 *
 * Records are built the way synalinks.hooks.Recorder builds them (see
 * /work/shared/spec/synalinks-format.md): compact JSON exactly as orjson writes it, keys in
 * the recorder's order, genuine hashes (computed with the repo's canonical writer over the
 * very bytes written; test/generator.test.ts checks them against Python + orjson).
 *
 * The expected counts go NEXT TO the tree, in `DIR.expected.json`, so the tree holds only what
 * a Synalinks root holds.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ByteSink } from '../src/canonical/byte-sink.js';
import { sha256Hex, writeArray, writeCanonical } from '../src/canonical/canonical.js';
import type { Status, Usage } from '../src/record.js';
import { dumps, f, formatFloat, type J } from './json.js';
import { EMOJI, Rng, TextPool, type Lang } from './text.js';
import { derivedUuid } from '../src/sources/rebuilt-record.js';

/** Bumped whenever the output for a given seed changes, so cached trees are regenerated. */
export const GENERATOR_VERSION = 4;

export interface GenerateOptions {
  out: string;
  mb: number;
  seed: number;
  /** Remove `out` first when it exists. */
  force?: boolean;
  /** Where the first 1 MB+ image record goes (MB of tree written before it). Default 10. */
  firstBigImageMb?: number;
  /** MB of tree between two 1 MB+ image records. Default 40. */
  bigImageEveryMb?: number;
  /**
   * `default`: every program kind, short-lived processes, many small files, 1 MB+ images.
   * `small`: the common production shape, records of about 2 KB (classifiers, tool-calling
   * agents, short chats) from long-lived processes, so files of about 10 MB; no big images.
   */
  profile?: Profile;
  log?: (line: string) => void;
  /**
   * Add the support_desk program, which plants near-duplicates with ground truth in
   * `Expected.near_duplicates`. Off by default, so the trees of other seeds stay as they were.
   */
  plantNearDuplicates?: boolean;
  /**
   * Add the assistant_chat program, which plants the quiet failures the quality stages drop
   * (truncated, empty, broken, repetition, refusal, identity, contaminated) with ground truth
   * in `Expected.quality`, plus Ask recordings and klieo captures beside the tree for the
   * truncations a recorder reports. Off by default, so the trees of other seeds stay as they were.
   */
  plantFailures?: boolean;
  /**
   * No exact re-runs: every ok call has inputs of its own, but for the failed attempts a success
   * follows. A tree of as many distinct keys as ok records, for the memory that must not grow
   * with the keys. Off by default, so the trees of other seeds stay as they were.
   */
  distinctCalls?: boolean;
  /**
   * Add the retry_desk program, which asks a question again after a bad answer (cut at the
   * limit, white space, broken markup, a refusal, another model's identity) and samples scored
   * answers, with the pairs a pair finder should give in `Expected.pairs` and the scores in
   * `DIR.scores.jsonl`. Off by default, so the trees of other seeds stay as they were.
   */
  plantPairs?: boolean;
}

/** A planted preference pair (chosen over rejected), or what a planted prompt must not give. */
export interface PlantedPairs {
  pairs: { chosen: string; rejected: string; signal: string }[];
  /** Prompts planted without a signal (two good answers, identical answers, a failed call and its retry, tied scores): none of their records may pair. */
  unpaired: string[];
  scores_file: string;
  max_completion_tokens: number;
  /** Ask recordings retrying each call cut at the limit (their pairs are in `pairs`). */
  ask_dir: string;
  /** klieo captures whose runs cut at the limit on their first call are run again (their pairs are in `pairs`). */
  klieo_dir: string;
}

/** A planted quiet failure, or a near miss that must not be dropped. */
export type FailureKind =
  | 'truncated_stop_reason'
  | 'truncated_usage'
  | 'empty'
  | 'empty_whitespace'
  | 'think_unclosed'
  | 'think_unopened'
  | 'reasoning_only'
  | 'repetition_loop'
  | 'refusal'
  | 'identity'
  | 'contaminated_exact'
  | 'contaminated_edited'
  | 'contamination_near_miss';

/** The drop reason each planted kind should get (null: none, it must be kept). */
export const FAILURE_REASONS: Record<FailureKind, string | null> = {
  truncated_stop_reason: 'truncated',
  truncated_usage: 'truncated',
  empty: 'empty',
  empty_whitespace: 'empty',
  think_unclosed: 'broken',
  think_unopened: 'broken',
  reasoning_only: 'broken',
  repetition_loop: 'repetition',
  refusal: 'refusal',
  identity: 'identity',
  contaminated_exact: 'contaminated',
  contaminated_edited: 'contaminated',
  contamination_near_miss: null,
};

export interface PlantedFailures {
  planted: { call_id: string; kind: FailureKind }[];
  /** The limit the planted program ran with: its cut answers have exactly this many completion tokens. */
  max_completion_tokens: number;
  /** Beside the tree: the evaluation set, Ask recordings and klieo captures (absolute paths). */
  eval_file: string;
  ask_dir: string;
  klieo_dir: string;
  /** ok records in the Ask recordings and klieo captures, planted or not. */
  other_ok_records: number;
}

/** A planted pair: `variant` re-runs `base` with a small change (positive), or is a negative control. */
export interface PlantedPair {
  base: string;
  variant: string;
  kind: 'whitespace_case' | 'ticket_date' | 'answer_word' | 'half_words' | 'shared_system';
}

export interface DamagedLineInfo {
  file: string;
  line: number;
  offset: number;
  kind: 'truncated' | 'nul' | 'partial' | 'text';
}

export interface Expected {
  generator_version: number;
  seed: number;
  mb: number;
  /** Bytes of trace files (what `traces` reads). */
  trace_bytes: number;
  trace_files: number;
  records: number;
  ok: number;
  exception: number;
  no_output: number;
  damaged_lines: number;
  unique_ok_keys: number;
  unique_ok_inputs_hashes: number;
  duplicate_ok_records: number;
  distinct_config_hashes: number;
  synalinks_versions: Record<string, number>;
  per_program: Record<string, number>;
  per_module: Record<string, number>;
  per_module_kinds: Record<string, { ok: number; exception: number; no_output: number }>;
  tokens_ok: { prompt: number; completion: number; total: number; reasoning: number; cached: number; cache_creation: number };
  /** Float sum over ok records in sorted-file then line order: compare with a tolerance. */
  cost_sum_ok: number;
  largest_line_bytes: number;
  damaged: DamagedLineInfo[];
  skipped_paths: string[];
  /** With plantNearDuplicates: near-duplicates (first three kinds) and negative controls (last two), by call_id. */
  near_duplicates?: { positives: PlantedPair[]; negatives: PlantedPair[] };
  note: string;
  quality?: PlantedFailures;
  /** With plantPairs: the planted preference pairs. */
  pairs?: PlantedPairs;
}

type Msg = { [key: string]: J | undefined };
type Kind = Status;

// ------------------------------------------------------------------------------------ models

interface ModelCfg {
  model: string;
  apiBase: string | null;
  extra: { [key: string]: J };
}

const M = {
  gpt4oMini: { model: 'openai/gpt-4o-mini', apiBase: null, extra: {} },
  gpt4oMiniT0: { model: 'openai/gpt-4o-mini', apiBase: null, extra: { temperature: f(0.0) } },
  gpt41: { model: 'openai/gpt-4.1', apiBase: null, extra: { temperature: f(0.2) } },
  mistral: { model: 'ollama_chat/mistral', apiBase: 'http://localhost:11434', extra: {} },
  mistralT07: { model: 'ollama_chat/mistral', apiBase: 'http://localhost:11434', extra: { temperature: f(0.7) } },
  qwen3: {
    model: 'ollama_chat/qwen3:8b',
    apiBase: 'http://localhost:11434',
    extra: { temperature: f(0.6), top_p: f(0.95) },
  },
  claude: {
    model: 'anthropic/claude-sonnet-4-5',
    apiBase: null,
    extra: { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } },
  },
  llama: { model: 'groq/llama-3.3-70b-versatile', apiBase: null, extra: { temperature: f(0.0), seed: 42 } },
} satisfies Record<string, ModelCfg>;

/** USD per token: input, cached input, cache write, output. Local models cost 0.0. */
const PRICES: Record<string, [number, number, number, number]> = {
  'openai/gpt-4o-mini': [0.15e-6, 0.075e-6, 0.0, 0.6e-6],
  'openai/gpt-4.1': [2.0e-6, 0.5e-6, 0.0, 8.0e-6],
  'anthropic/claude-sonnet-4-5': [3.0e-6, 0.3e-6, 3.75e-6, 15.0e-6],
  'groq/llama-3.3-70b-versatile': [0.59e-6, 0.59e-6, 0.0, 0.79e-6],
};

function costOf(model: string, u: Usage): number {
  const p = PRICES[model];
  if (p === undefined) return 0.0;
  const fresh = u.prompt_tokens - u.cached_tokens - u.cache_creation_tokens;
  // Same operation order as the Python samples script.
  return fresh * p[0] + u.cached_tokens * p[1] + u.cache_creation_tokens * p[2] + u.completion_tokens * p[3];
}

const OLD_VERSION = '0.9.005';
const NEW_VERSION = '0.9.014';

interface ConfigEntry {
  text: string;
  hash: string;
}

// ------------------------------------------------------------------------------------ text helpers

/** Python's repr of a str (enough of it: quotes, backslashes, control characters). */
function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + quote;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch < ' ') out += '\\x' + ch.charCodeAt(0).toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + quote;
}

function pyDict(entries: [string, string | string[]][]): string {
  return (
    '{' +
    entries
      .map(([k, v]) => `'${k}': ${Array.isArray(v) ? `[${v.map(pyRepr).join(', ')}]` : pyRepr(v)}`)
      .join(', ') +
    '}'
  );
}

/** Arguments as a model writes them when the provider returns a string (`json.dumps` spacing). */
function pyJsonDumps(args: { [key: string]: J }): string {
  return `{${Object.entries(args).map(([k, v]) => `${JSON.stringify(k)}: ${dumps(v)}`).join(', ')}}`;
}

function instructions(keys: readonly string[], extra: string, schema: object | null, examples: string | null): Msg {
  let content =
    `<instructions>\nYour task is to answer with a JSON containing the following keys: [${keys.map((k) => `'${k}'`).join(', ')}]\n` +
    (extra ? `${extra}\n` : '') +
    '</instructions>\n';
  if (schema !== null) content += `<output_schema>\n${JSON.stringify(schema, null, 2)}\n</output_schema>\n`;
  if (examples !== null) content += `<examples>\n${examples}\n</examples>\n`;
  return { role: 'system', content };
}

function inputMsg(entries: [string, string | string[]][], withOutputTag = true): Msg {
  return { role: 'user', content: `<input>\n${pyDict(entries)}\n</input>\n${withOutputTag ? '<output>\n' : ''}` };
}

function schemaFor(title: string, props: Record<string, string>): object {
  const properties: Record<string, object> = {};
  for (const [k, t] of Object.entries(props)) {
    properties[k] = { description: `The ${k.replace(/_/g, ' ')}`, title: k[0].toUpperCase() + k.slice(1), type: t };
  }
  return { additionalProperties: false, properties, required: Object.keys(props), title, type: 'object' };
}

const EXCEPTIONS = [
  '`schema` and `tools` cannot be passed to the same LM call: schema forces structured output, while tools let the LM choose which to call. Split into two calls: typically the tool-call generator uses `tools` and the final generator uses `schema`.',
  'litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for gpt-4o-mini in organization org-8dGm2xq1 on tokens per min (TPM): Limit 200000, Used 199381, Requested 1523. Please try again in 270ms. Visit https://platform.openai.com/account/rate-limits to learn more.',
  'litellm.Timeout: APITimeoutError - Request timed out. Error_str: Request timed out.',
  'litellm.APIConnectionError: OllamaException - [Errno 111] Connection refused',
  "litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: OpenAIException - This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens.",
  "ValueError: Invalid JSON in model output: Expecting ',' delimiter: line 1 column 212 (char 211)\n\nRaw output: {\"answer\": \"Paris\" \"rationale\": …",
  'litellm.InternalServerError: AnthropicException - {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
];

// ------------------------------------------------------------------------------------ calls

interface CallSpec {
  program: string;
  module: string;
  cfg: ModelCfg;
  inputs: Msg[];
  kind: Kind;
  /** ok: the raw LM output (structured: the parsed object). */
  outputs?: J;
  structured?: boolean;
  exception?: string;
  /** The LM called directly: parent_call_id is null. */
  direct?: boolean;
  /** Tokens of reasoning in the completion. */
  reasoningTokens?: number;
  /** Characters of data URLs in the inputs, and number of images (tokens are not chars/4 for them). */
  imageChars?: number;
  images?: number;
  /** Prompt tokens known to be a cached prefix (agent steps). */
  cachedPrefixChars?: number;
  /** Filled on first emission, reused by exact re-runs. */
  usage?: Usage;
}

const MESSAGE_KEYS = ['role', 'content', 'reasoning_content', 'tool_calls', 'tool_call_id', 'name'];

function sanitize(m: { [key: string]: J | undefined }): Msg {
  const out: Msg = {};
  for (const k of MESSAGE_KEYS) if (m[k] !== undefined && m[k] !== null) out[k] = m[k];
  return out;
}

class Crash extends Error {}

interface FileState {
  lines: number;
  bytes: number;
  okCosts: number[];
}

/** Everything written, to derive the expected counts. */
class Writer {
  bytes = 0;
  readonly files = new Map<string, FileState>();
  readonly sink = new ByteSink(1 << 20);
  readonly configs = new Map<string, ConfigEntry>();
  records = 0;
  readonly kinds = { ok: 0, exception: 0, no_output: 0 };
  readonly okKeys = new Set<string>();
  readonly okInputs = new Set<string>();
  readonly configHashes = new Set<string>();
  readonly versions: Record<string, number> = {};
  readonly perProgram: Record<string, number> = {};
  readonly perModule: Record<string, number> = {};
  readonly perModuleKinds: Record<string, { ok: number; exception: number; no_output: number }> = {};
  readonly tokens = { prompt: 0, completion: 0, total: 0, reasoning: 0, cached: 0, cache_creation: 0 };
  readonly damaged: DamagedLineInfo[] = [];
  largestLine = 0;
  nextBigImageAt: number;

  constructor(
    readonly root: string,
    readonly target: number,
    readonly bigImageEvery: number,
    firstBigImage: number,
  ) {
    this.nextBigImageAt = firstBigImage;
  }

  config(version: string, cfg: ModelCfg): ConfigEntry {
    const key = `${version}|${cfg.model}|${cfg.apiBase}|${dumps(cfg.extra)}`;
    let entry = this.configs.get(key);
    if (entry === undefined) {
      const c: { [key: string]: J } = { model: cfg.model, api_base: cfg.apiBase, timeout: 600, retry: 5 };
      if (version !== OLD_VERSION) {
        c.retry_max_wait = 60;
        c.caching = false;
        c.cache_dir = null;
      }
      c.name = 'language_model';
      c.description = 'A language model API wrapper.';
      Object.assign(c, cfg.extra);
      const text = dumps({ module: 'synalinks', class_name: 'LanguageModel', config: c, registered_name: null });
      const buf = Buffer.from(text, 'utf8');
      this.sink.reset();
      writeCanonical(buf, 0, buf.length, this.sink);
      entry = { text, hash: sha256Hex(this.sink.view()) };
      this.configs.set(key, entry);
    }
    return entry;
  }

  file(rel: string): FileState {
    let state = this.files.get(rel);
    if (state === undefined) {
      state = { lines: 0, bytes: 0, okCosts: [] };
      this.files.set(rel, state);
      mkdirSync(path.dirname(path.join(this.root, rel)), { recursive: true });
    }
    return state;
  }

  get full(): boolean {
    return this.bytes >= this.target;
  }
}

/** One Python process running synalinks with record_traces() on. */
class Proc {
  private count = 0;
  private readonly fds = new Map<string, number>();
  private readonly lastUsage = new Map<string, { usage: Usage; cost: number }>();
  readonly stamp: string;
  /** The call_id of the last record emitted. */
  lastCallId = '';
  crashed = false;

  constructor(
    private readonly w: Writer,
    private readonly rng: Rng,
    public clock: number,
    readonly version: string,
    private readonly crashAt: number,
    private readonly garbageAt: number,
  ) {
    // File names use the recording machine's local time; it was on UTC+2.
    const d = new Date(Math.floor(clock) * 1000 + 2 * 3600 * 1000);
    const p2 = (n: number): string => String(n).padStart(2, '0');
    this.stamp =
      `${d.getUTCFullYear()}${p2(d.getUTCMonth() + 1)}${p2(d.getUTCDate())}-` +
      `${p2(d.getUTCHours())}${p2(d.getUTCMinutes())}${p2(d.getUTCSeconds())}`;
  }

  private rel(program: string, module: string): string {
    const name = `${module}_${this.stamp}.jsonl`;
    return program === module ? `${program}/${name}` : `${program}/${module}/${name}`;
  }

  private write(rel: string, bytes: Buffer): void {
    let fd = this.fds.get(rel);
    if (fd === undefined) {
      this.w.file(rel);
      fd = openSync(path.join(this.w.root, rel), 'a');
      this.fds.set(rel, fd);
    }
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written);
    const state = this.w.file(rel);
    state.bytes += bytes.length;
    this.w.bytes += bytes.length;
  }

  private damagedLine(rel: string, bytes: Buffer, kind: DamagedLineInfo['kind']): void {
    const state = this.w.file(rel);
    this.w.damaged.push({ file: rel, line: state.lines + 1, offset: state.bytes, kind });
    this.write(rel, bytes);
    state.lines++;
  }

  wait(seconds: number): void {
    this.clock += seconds;
  }

  /** Records one LM call; returns the recorded messages (inputs + completion when ok). */
  emit(spec: CallSpec, parent: string | null): Msg[] {
    const { w, rng } = this;
    const index = this.count++;
    const rel = this.rel(spec.program, spec.module);
    const ok = spec.kind === 'ok';
    const cfg = w.config(this.version, spec.cfg);

    let completion: Msg | null = null;
    if (ok) {
      completion = spec.structured
        ? { role: 'assistant', content: dumps(spec.outputs!) }
        : sanitize(spec.outputs as { [key: string]: J });
    }
    const inputsText = spec.inputs.map(dumps).join(',');
    const completionText = completion === null ? '' : dumps(completion);
    const messagesText =
      '[' + inputsText + (completion === null ? '' : (spec.inputs.length > 0 ? ',' : '') + completionText) + ']';
    const messages = Buffer.from(messagesText, 'utf8');
    w.sink.reset();
    writeArray(messages, 0, messages.length, w.sink, ok);
    const inputsHash = sha256Hex(w.sink.view());

    let usage: Usage | null = null;
    let cost: number | null = null;
    const lmKey = cfg.hash;
    if (ok) {
      if (spec.usage === undefined) {
        const promptChars = inputsText.length - (spec.imageChars ?? 0);
        const prompt = Math.ceil(promptChars / 3.6) + 4 * spec.inputs.length + 765 * (spec.images ?? 0) + 7;
        const reasoning = spec.reasoningTokens ?? 0;
        const completionTokens = Math.ceil(completionText.length / 3.7) + reasoning + 1;
        let cached = 0;
        let creation = 0;
        const priced = PRICES[spec.cfg.model] !== undefined;
        if (priced && spec.cachedPrefixChars !== undefined && prompt > 1024) {
          cached = Math.min(prompt, Math.floor(spec.cachedPrefixChars / 3.6 / 128) * 128);
        } else if (priced && prompt > 1024 && rng.chance(0.25)) {
          cached = Math.floor((prompt * rng.uniform(0.2, 0.9)) / 128) * 128;
        }
        if (spec.cfg.model.startsWith('anthropic/') && cached === 0 && prompt > 1024 && rng.chance(0.3)) {
          creation = Math.floor(prompt * 0.6);
        }
        spec.usage = {
          prompt_tokens: prompt,
          completion_tokens: completionTokens,
          total_tokens: prompt + completionTokens,
          cached_tokens: cached,
          cache_creation_tokens: creation,
          reasoning_tokens: reasoning,
        };
      }
      usage = spec.usage;
      cost = costOf(spec.cfg.model, usage);
      this.lastUsage.set(lmKey, { usage, cost });
    } else if (spec.kind === 'no_output') {
      // Stale values of the previous call of the same LM (none yet: null).
      const stale = this.lastUsage.get(lmKey);
      if (stale !== undefined) {
        usage = stale.usage;
        cost = stale.cost;
      }
    }

    const duration = ok
      ? rng.uniform(0.3, 1.8) + (usage!.completion_tokens * rng.uniform(0.004, 0.02))
      : spec.kind === 'exception'
        ? rng.logUniform(0.0004, 30)
        : rng.uniform(0.5, 9);
    const timestamp = this.clock;
    this.clock += duration + rng.uniform(0.001, 0.05);

    this.lastCallId = rng.uuid4();
    const head =
      `{"synalinks_version":${JSON.stringify(this.version)},"call_id":"${this.lastCallId}",` +
      `"parent_call_id":${parent === null ? 'null' : `"${parent}"`},` +
      `"program":${JSON.stringify(spec.program)},"module":${JSON.stringify(spec.module)},` +
      `"timestamp":${formatFloat(timestamp)},"duration":${formatFloat(duration)},` +
      `"usage":${usage === null ? 'null' : dumps({ ...usage })},"cost":${cost === null ? 'null' : formatFloat(cost)},` +
      `"messages":`;
    const tail =
      `,"inputs_hash":"${inputsHash}","outputs":${ok ? dumps(spec.outputs!) : 'null'},` +
      `"config":${cfg.text},"config_hash":"${cfg.hash}"` +
      (spec.kind === 'exception' ? `,"exception":${JSON.stringify(spec.exception ?? EXCEPTIONS[0])}` : '') +
      '}';
    const line = Buffer.concat([Buffer.from(head, 'utf8'), messages, Buffer.from(tail, 'utf8')]);

    if (index === this.garbageAt) this.garbage(rel, line);
    if (index === this.crashAt) {
      // Killed mid-write: a cut line, no newline, and this process writes nothing more.
      const cut = line.subarray(0, Math.max(10, Math.floor(line.length * rng.uniform(0.05, 0.95))));
      this.damagedLine(rel, cut, 'truncated');
      this.crashed = true;
      throw new Crash();
    }

    this.write(rel, Buffer.concat([line, Buffer.from('\n')]));
    const state = w.file(rel);
    state.lines++;
    if (line.length > w.largestLine) w.largestLine = line.length;
    w.records++;
    w.kinds[spec.kind]++;
    w.configHashes.add(cfg.hash);
    w.versions[this.version] = (w.versions[this.version] ?? 0) + 1;
    w.perProgram[spec.program] = (w.perProgram[spec.program] ?? 0) + 1;
    const mk = `${spec.program}/${spec.module}`;
    w.perModule[mk] = (w.perModule[mk] ?? 0) + 1;
    (w.perModuleKinds[mk] ??= { ok: 0, exception: 0, no_output: 0 })[spec.kind]++;
    if (ok) {
      w.okKeys.add(inputsHash + cfg.hash);
      w.okInputs.add(inputsHash);
      const u = usage!;
      w.tokens.prompt += u.prompt_tokens;
      w.tokens.completion += u.completion_tokens;
      w.tokens.total += u.total_tokens;
      w.tokens.reasoning += u.reasoning_tokens;
      w.tokens.cached += u.cached_tokens;
      w.tokens.cache_creation += u.cache_creation_tokens;
      state.okCosts.push(cost!);
    }
    if (completion === null) return spec.inputs;
    return [...spec.inputs, completion];
  }

  /** A line that is not a record, before the record at `line` (which is written normally). */
  private garbage(rel: string, line: Buffer): void {
    const kind = this.rng.pick(['nul', 'partial', 'text'] as const);
    let bytes: Buffer;
    if (kind === 'nul') {
      // Power loss: a block of zeros where data should have been.
      bytes = Buffer.alloc(this.rng.int(16, 4096), 0);
    } else if (kind === 'partial') {
      // A write cut by a concurrent writer of the same file.
      bytes = Buffer.from(line.subarray(0, Math.floor(line.length * this.rng.uniform(0.1, 0.9))));
    } else {
      bytes = Buffer.from('WARNING:root:Retrying request to /chat/completions in 0.842000 seconds', 'utf8');
    }
    this.damagedLine(rel, Buffer.concat([bytes, Buffer.from('\n')]), kind);
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

// ------------------------------------------------------------------------------------ programs

/** Past runs, for exact re-runs (same messages and config, new call_id and timestamp). */
type Run = { specs: CallSpec[]; direct: boolean };

class Gen {
  readonly pool: TextPool;
  private readonly runs = new Map<string, Run[]>();
  /** support_desk's shared system prompt, and the pairs it planted. */
  supportSystem: string | undefined;
  readonly planted: { positives: PlantedPair[]; negatives: PlantedPair[] } = { positives: [], negatives: [] };
  /** assistant_chat's evaluation items and the failures it planted (with plantFailures). */
  evalItems: string[] = [];
  readonly failures: { call_id: string; kind: FailureKind }[] = [];
  /** retry_desk's planted pairs and scores (with plantPairs). */
  readonly plantedPairs: PlantedPairs['pairs'] = [];
  readonly plantedUnpaired: string[] = [];
  readonly scores: { call_id: string; score: number }[] = [];

  constructor(
    readonly rng: Rng,
    readonly w: Writer,
    private readonly replays = true,
  ) {
    this.pool = new TextPool(rng);
  }

  remember(program: string, run: Run): void {
    let list = this.runs.get(program);
    if (list === undefined) this.runs.set(program, (list = []));
    if (list.length < 300) list.push(run);
    else list[this.rng.int(0, list.length - 1)] = run;
  }

  /** Re-emits a past run of `program` (a cache-less re-run of the same inputs). */
  replay(p: Proc, program: string, differentCompletion: (spec: CallSpec) => CallSpec | null): boolean {
    const list = this.runs.get(program);
    if (!this.replays || list === undefined || list.length === 0) return false;
    const run = this.rng.pick(list);
    const parent = run.direct ? null : this.rng.uuid4();
    for (const spec of run.specs) {
      const other = this.rng.chance(0.25) ? differentCompletion(spec) : null;
      p.emit(other ?? spec, parent);
    }
    return true;
  }

  /** Maybe a failed call before the real one: exception or no_output, same inputs. */
  failure(p: Proc, spec: CallSpec, parent: string | null, pException = 0.025, pNoOutput = 0.025): Kind | null {
    const r = this.rng.next();
    if (r < pException) {
      p.emit({ ...spec, kind: 'exception', exception: this.rng.pick(EXCEPTIONS) }, parent);
      return 'exception';
    }
    if (r < pException + pNoOutput) {
      p.emit({ ...spec, kind: 'no_output' }, parent);
      return 'no_output';
    }
    return null;
  }

  text(lang: Lang, chars: number): string {
    return this.pool.text(lang, chars);
  }

  question(lang: Lang): string {
    let q = this.pool.sentence(lang).replace(/[.!…。]$/u, '');
    if (!q.endsWith('?') && !q.endsWith('？')) q += lang === 'fr' ? ' ?' : lang === 'ja' || lang === 'zh' ? '？' : '?';
    if (this.rng.chance(0.05)) q += ` ${this.rng.pick(EMOJI)}`;
    return q;
  }

  confidence(): J {
    return f(this.rng.int(35, 99) / 100);
  }

  smallImage(): string {
    const n = this.rng.int(200, 6000);
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), this.rng.bytes(n)]);
    return `data:image/png;base64,${png.toString('base64')}`;
  }

  bigImage(): string {
    const n = this.rng.int(800_000, 1_200_000);
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), this.rng.bytes(n)]);
    return `data:image/jpeg;base64,${jpeg.toString('base64')}`;
  }
}

// ---- qa_program: a structured generator, a chain-of-thought generator, and the Program calling the LM itself.

function qaProgram(g: Gen, p: Proc, cfgs: { gen: ModelCfg; cot: ModelCfg; self: ModelCfg }): void {
  const { rng } = g;
  const program = 'qa_program';
  if (rng.chance(0.1) && g.replay(p, program, (s) => qaRedo(g, s))) return;
  const lang = g.pool.lang();
  const which = rng.weighted([
    ['generator', 60],
    ['generator_cot', 28],
    ['self', 12],
  ] as const);
  const q = g.question(lang);
  const context = rng.chance(0.55) ? g.text(lang, rng.logUniform(200, 26000)) : null;
  const entries: [string, string | string[]][] = [['query', q]];
  if (context !== null) entries.push(['context', context]);
  let spec: CallSpec;
  if (which === 'generator') {
    const variant = rng.int(0, 2);
    const keys = variant === 0 ? ['rationale', 'answer'] : variant === 1 ? ['answer', 'confidence'] : ['answer', 'sources', 'confidence'];
    const props: Record<string, string> = {};
    for (const k of keys) props[k] = k === 'confidence' ? 'number' : k === 'sources' ? 'array' : 'string';
    const examples = rng.chance(0.3)
      ? `<input>\n{'query': 'What is 2+2?'}\n</input>\n<output>\n${dumps(variant === 0 ? { rationale: '2+2 equals 4.', answer: '4' } : { answer: '4', confidence: f(1.0) })}\n</output>`
      : null;
    const system = instructions(keys, rng.chance(0.5) ? g.pool.sentences('en', rng.int(1, 6)) : '', schemaFor('Answer', props), examples);
    const outputs: { [key: string]: J } = {};
    for (const k of keys) {
      if (k === 'rationale') outputs[k] = g.text(lang, rng.logUniform(60, 1500));
      else if (k === 'answer') outputs[k] = rng.chance(0.15) ? g.pool.word(lang === 'fr' ? 'fr' : 'en') : g.pool.sentences(lang, rng.int(1, 3));
      else if (k === 'confidence') outputs[k] = g.confidence();
      else outputs[k] = Array.from({ length: rng.int(0, 4) }, () => `https://example.org/${g.pool.word()}/${rng.int(1, 9999)}`);
    }
    spec = { program, module: 'generator', cfg: cfgs.gen, inputs: [system, inputMsg(entries)], kind: 'ok', outputs, structured: true };
  } else if (which === 'generator_cot') {
    const system = instructions(['thinking', 'answer'], 'Think step by step before answering.', schemaFor('ChainOfThought', { thinking: 'string', answer: 'string' }), null);
    const thinking = g.text(lang, rng.logUniform(150, 5000));
    spec = {
      program,
      module: 'generator_cot',
      cfg: cfgs.cot,
      inputs: [system, inputMsg(entries)],
      kind: 'ok',
      // chain of thought: `thinking` is the last field of the outputs
      outputs: { answer: g.pool.sentences(lang, rng.int(1, 3)), thinking },
      structured: true,
    };
  } else {
    const system = { role: 'system', content: 'You are a concise assistant. Answer in one short paragraph.' };
    const user = { role: 'user', content: context === null ? q : `${context}\n\n${q}` };
    spec = {
      program,
      module: program,
      cfg: cfgs.self,
      inputs: [system, user],
      kind: 'ok',
      outputs: { role: 'assistant', content: g.text(lang, rng.logUniform(80, 2500)) },
    };
  }
  const parent = rng.uuid4();
  if (g.failure(p, spec, parent) === 'exception' && rng.chance(0.5)) return;
  p.emit(spec, parent);
  g.remember(program, { specs: [spec], direct: false });
}

function qaRedo(g: Gen, s: CallSpec): CallSpec | null {
  if (!s.structured || typeof s.outputs !== 'object' || s.outputs === null || Array.isArray(s.outputs)) return null;
  const outputs = { ...(s.outputs as { [key: string]: J }) };
  if ('answer' in outputs) outputs.answer = g.pool.sentences('en', 1);
  return { ...s, outputs, usage: undefined };
}

// ---- summarizer: two chained generators over long documents.

function summarizer(g: Gen, p: Proc, cfgs: { g1: ModelCfg; g2: ModelCfg }): void {
  const { rng } = g;
  const program = 'summarizer';
  if (rng.chance(0.06) && g.replay(p, program, () => null)) return;
  const lang = g.pool.lang();
  const doc = g.text(lang, rng.logUniform(1500, 33000));
  const parent = rng.uuid4();
  const keyPoints = Array.from({ length: rng.int(3, 8) }, () => g.pool.sentence(lang));
  const s1: CallSpec = {
    program,
    module: 'generator_1',
    cfg: cfgs.g1,
    inputs: [
      instructions(['key_points', 'language', 'confidence'], 'Extract the key points of the document.', schemaFor('KeyPoints', { key_points: 'array', language: 'string', confidence: 'number' }), null),
      inputMsg([['document', doc]]),
    ],
    kind: 'ok',
    outputs: { key_points: keyPoints, language: lang === 'mixed' ? 'en' : lang, confidence: g.confidence() },
    structured: true,
  };
  if (g.failure(p, s1, parent) !== null && rng.chance(0.5)) return;
  p.emit(s1, parent);
  const outputs: { [key: string]: J } = {
    title: g.pool.sentences(lang, 1),
    summary: g.text(lang, rng.logUniform(300, 3000)),
    word_count: rng.int(50, 900),
  };
  if (rng.chance(0.04)) {
    // Emoji and fullwidth keys: code-point order differs from UTF-16 order.
    outputs.reactions = { '👍': rng.int(0, 50), '！': rng.int(0, 5), '❤️': rng.int(0, 20), '😀': rng.int(0, 9), zzz: 0 };
  }
  const s2: CallSpec = {
    program,
    module: 'generator_2',
    cfg: cfgs.g2,
    inputs: [
      instructions(['title', 'summary', 'word_count'], 'Write a faithful summary from the key points.', schemaFor('Summary', { title: 'string', summary: 'string', word_count: 'integer' }), null),
      inputMsg([['key_points', keyPoints]]),
    ],
    kind: 'ok',
    outputs,
    structured: true,
  };
  if (g.failure(p, s2, parent) !== null && rng.chance(0.5)) return;
  p.emit(s2, parent);
  g.remember(program, { specs: [s1, s2], direct: false });
}

// ---- agents: one record per step, step k+1 contains step k.

interface ToolStep {
  name: string;
  args: { [key: string]: J };
  result: J;
}

const AGENT_SYSTEM: Msg = {
  role: 'system',
  content:
    '<instructions>\nUse the tools to answer the query step by step. Call a tool whenever a computation is needed; when you have everything, answer without calling any tool.\n</instructions>\n',
};

function agentRun(
  g: Gen,
  p: Proc,
  program: string,
  cfg: ModelCfg,
  question: string,
  steps: ToolStep[][],
  finalText: string,
  finalOutputs: { [key: string]: J },
): void {
  const { rng } = g;
  const parent = rng.uuid4();
  const specs: CallSpec[] = [];
  let messages: Msg[] = [AGENT_SYSTEM, { role: 'user', content: `<input>\n${pyDict([['query', question]])}\n</input>\n` }];
  let prefixChars = 0;
  for (const calls of steps) {
    const toolCalls = calls.map((c) => ({
      id: `call_${rng.token(24)}`,
      type: 'function',
      function: {
        name: c.name,
        // usually a parsed object, sometimes the raw string the model produced
        arguments: rng.chance(0.1) ? pyJsonDumps(c.args) : c.args,
      },
    }));
    const spec: CallSpec = {
      program,
      module: `tool_calls_generator_${program}`,
      cfg,
      inputs: messages,
      kind: 'ok',
      outputs: { role: 'assistant', content: '', tool_calls: toolCalls },
      cachedPrefixChars: prefixChars || undefined,
    };
    if (g.failure(p, spec, parent, 0.02, 0.01) !== null) return;
    messages = p.emit(spec, parent);
    specs.push(spec);
    prefixChars = messages.map(dumps).join(',').length;
    for (let i = 0; i < calls.length; i++) {
      messages.push({ role: 'tool', content: calls[i].result, tool_call_id: toolCalls[i].id, name: calls[i].name });
    }
  }
  const last: CallSpec = {
    program,
    module: `tool_calls_generator_${program}`,
    cfg,
    inputs: messages,
    kind: 'ok',
    outputs: { role: 'assistant', content: finalText },
    cachedPrefixChars: prefixChars || undefined,
  };
  if (g.failure(p, last, parent, 0.02, 0.01) !== null) return;
  messages = p.emit(last, parent);
  specs.push(last);
  const final: CallSpec = {
    program,
    module: `final_generator_${program}`,
    cfg,
    inputs: messages,
    kind: 'ok',
    outputs: finalOutputs,
    structured: true,
  };
  if (rng.chance(0.01)) {
    p.emit({ ...final, kind: 'exception', exception: EXCEPTIONS[0] }, parent);
    return;
  }
  p.emit(final, parent);
  specs.push(final);
  g.remember(program, { specs, direct: false });
}

function mathAgent(g: Gen, p: Proc, cfg: ModelCfg): void {
  const { rng } = g;
  const program = 'math_agent';
  if (rng.chance(0.05) && g.replay(p, program, () => null)) return;
  const lang = rng.chance(0.75) ? 'en' : 'fr';
  let acc = rng.chance(0.5) ? rng.int(2, 999) : rng.int(10, 9999) / 10;
  const start = acc;
  const ops: string[] = [];
  const steps: ToolStep[][] = [];
  for (let s = rng.int(1, 4); s > 0; s--) {
    const calls: ToolStep[] = [];
    for (let c = rng.chance(0.25) ? 2 : 1; c > 0; c--) {
      let op = rng.pick(['add', 'subtract', 'multiply', 'divide', 'power'] as const);
      // keep every float below 1e16 (orjson versions disagree on how to write larger ones)
      if (op === 'power' && Math.abs(acc) > 1000) op = 'add';
      const b: number = op === 'power' ? rng.int(2, 3) : rng.chance(0.6) ? rng.int(2, 500) : rng.int(11, 999) / 10;
      const a = acc;
      const result =
        op === 'add' ? a + b : op === 'subtract' ? a - b : op === 'multiply' ? a * b : op === 'divide' ? a / b : Math.pow(a, b);
      // Arguments: ints stay ints, earlier float results stay floats (`153126.0`).
      const num = (x: number, isFloat: boolean): J => (isFloat || !Number.isInteger(x) ? f(x) : x);
      calls.push({
        name: op,
        args: { a: num(a, steps.length > 0), b: num(b, false) },
        result: rng.chance(0.9) ? { result: f(result), log: 'Successfully executed' } : `${result}`,
      });
      if (c === 1 && Math.abs(result) < 1e12) acc = result;
      ops.push(`${op}(${a}, ${b}) = ${result}`);
    }
    steps.push(calls);
  }
  const question =
    lang === 'en'
      ? `Starting from ${start}, ${ops.map((o) => o.split('(')[0]).join(' then ')}: what is the result?`
      : `En partant de ${start}, calcule : ${ops.map((o) => o.split('(')[0]).join(' puis ')}. Quel est le résultat ?`;
  const finalText = ops.join('; ') + (lang === 'fr' ? ` — résultat : ${acc}.` : ` — result: ${acc}.`);
  const finalOutputs: { [key: string]: J } = rng.chance(0.7)
    ? { answer: f(acc) }
    : { answer: f(acc), explanation: g.pool.sentences(lang, rng.int(1, 3)) };
  agentRun(g, p, program, cfg, question, steps, finalText, finalOutputs);
}

const CITIES = ['Paris', 'Toulouse', 'Lyon', 'Montréal', 'Genève', 'Tokyo', '北京', 'São Paulo', 'Zürich', 'Kraków'];

function researchAgent(g: Gen, p: Proc, cfg: ModelCfg): void {
  const { rng } = g;
  const program = 'research_agent';
  if (rng.chance(0.05) && g.replay(p, program, () => null)) return;
  const lang = g.pool.lang();
  const question = g.question(lang);
  const steps: ToolStep[][] = [];
  let size = 0;
  const budget = rng.logUniform(2000, 14000);
  for (let s = rng.int(1, 3); s > 0 && size < budget; s--) {
    const calls: ToolStep[] = [];
    const kind = rng.weighted([
      ['search', 5],
      ['fetch', 3],
      ['weather', 1],
    ] as const);
    if (kind === 'search') {
      const results: J[] = [];
      for (let i = rng.int(2, 6); i > 0; i--) {
        results.push({
          title: g.pool.sentence(lang).slice(0, 80).replace(/[\uD800-\uDBFF]$/, ''),
          url: `https://${g.pool.word()}.example.com/${g.pool.word()}-${rng.int(1, 99999)}`,
          snippet: g.pool.sentences(lang, rng.int(1, 3)),
          // low-ranked results get tiny scores, written like `3.2e-7`
          score: f(i <= 1 && rng.chance(0.5) ? rng.logUniform(1e-9, 1e-4) : Math.round(rng.uniform(0.2, 0.99) * 10000) / 10000),
        });
      }
      const r: J = { results, took_ms: f(rng.int(40, 900)) };
      calls.push({ name: 'web_search', args: { query: question, max_results: results.length }, result: r });
      size += dumps(r).length;
    } else if (kind === 'fetch') {
      const content = g.text(lang, rng.logUniform(800, 9000));
      calls.push({
        name: 'fetch_page',
        args: { url: `https://${g.pool.word()}.example.com/${rng.int(1, 99999)}` },
        result: { status: 200, content, truncated: content.length > 8000, elapsed: f(rng.uniform(0.05, 2)) },
      });
      size += content.length;
    } else {
      calls.push({
        name: 'météo',
        args: { ville: rng.pick(CITIES), unité: '°C' },
        result: { température: f(Math.round(rng.uniform(-10, 35) * 10) / 10), humidité: f(rng.int(10, 99) / 100), conditions: rng.pick(['ensoleillé ☀️', 'nuageux ☁️', 'pluie 🌧️', 'neige ❄️']) },
      });
    }
    steps.push(calls);
  }
  const answer = g.text(lang, rng.logUniform(200, 2500));
  agentRun(g, p, program, cfg, question, steps, answer, {
    answer,
    citations: Array.from({ length: rng.int(0, 3) }, () => `https://${g.pool.word()}.example.com/${rng.int(1, 99999)}`),
  });
}

// ---- the LM called directly: program == module == the LM's name, no parent.

function directCalls(g: Gen, p: Proc): void {
  const { rng, w } = g;
  const program = 'language_model';
  if (rng.chance(0.05) && g.replay(p, program, () => null)) return;
  const lang = g.pool.lang();
  const base = { program, module: program, kind: 'ok' as const, direct: true };
  let spec: CallSpec;
  const big = w.bytes >= w.nextBigImageAt;
  const which = big
    ? 'image'
    : rng.weighted([
        ['qwen', 30],
        ['claude', 20],
        ['image', 12],
        ['chat', 38],
      ] as const);
  if (which === 'qwen') {
    const reasoning = g.text(lang, rng.logUniform(200, 6000));
    spec = {
      ...base,
      cfg: M.qwen3,
      inputs: [{ role: 'user', content: g.question(lang) }],
      outputs: { role: 'assistant', content: g.text(lang, rng.logUniform(50, 2000)), reasoning_content: reasoning },
      reasoningTokens: Math.ceil(reasoning.length / 3.7),
    };
  } else if (which === 'claude') {
    const blocks: J[] = [];
    const thoughts: string[] = [];
    for (let i = rng.int(1, 3); i > 0; i--) {
      if (rng.chance(0.15)) {
        blocks.push({ type: 'redacted_thinking', data: rng.bytes(rng.int(48, 200)).toString('base64') });
        continue;
      }
      const t = g.text(lang, rng.logUniform(100, 3000));
      thoughts.push(t);
      blocks.push({ type: 'thinking', thinking: t, signature: rng.bytes(72).toString('base64') });
    }
    const reasoning = thoughts.join('\n');
    spec = {
      ...base,
      cfg: M.claude,
      inputs: [{ role: 'user', content: g.question(lang) + (rng.chance(0.3) ? `\n\n${g.text(lang, rng.logUniform(200, 8000))}` : '') }],
      outputs: { role: 'assistant', content: g.text(lang, rng.logUniform(50, 2000)), reasoning_content: reasoning, thinking_blocks: blocks },
      reasoningTokens: Math.ceil(reasoning.length / 3.7),
    };
  } else if (which === 'image') {
    const url = big ? g.bigImage() : g.smallImage();
    if (big) w.nextBigImageAt += w.bigImageEvery;
    spec = {
      ...base,
      cfg: M.gpt4oMini,
      inputs: [
        {
          role: 'user',
          content: [
            { type: 'text', text: lang === 'fr' ? 'Décris cette image en une phrase.' : 'Describe this image in one sentence.' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
      outputs: { role: 'assistant', content: g.pool.sentences(lang, rng.int(1, 3)) },
      imageChars: url.length,
      images: 1,
    };
  } else {
    const inputs: Msg[] = [];
    if (rng.chance(0.6)) inputs.push({ role: rng.chance(0.2) ? 'developer' : 'system', content: g.pool.sentences('en', rng.int(1, 4)) });
    for (let t = rng.int(0, 4); t > 0; t--) {
      inputs.push({ role: 'user', content: g.text(lang, rng.logUniform(30, 3000)) });
      inputs.push({ role: 'assistant', content: g.text(lang, rng.logUniform(30, 3000)) });
    }
    inputs.push({ role: 'user', content: g.question(lang) });
    spec = {
      ...base,
      cfg: rng.chance(0.5) ? M.gpt41 : M.llama,
      inputs,
      outputs: { role: 'assistant', content: g.text(lang, rng.logUniform(30, 3000)) },
    };
  }
  if (!big && rng.chance(0.002)) {
    // empty input: nothing to send, no output
    p.emit({ ...spec, inputs: [], kind: 'no_output' }, null);
    return;
  }
  if (g.failure(p, spec, null, 0.02, 0.04) !== null && rng.chance(0.5)) return;
  p.emit(spec, null);
  if (!big) g.remember(program, { specs: [spec], direct: true });
}

// ---- ticket_classifier: short records, temperature 0, many exact re-runs.

const LABELS = ['billing', 'bug', 'feature_request', 'account', 'shipping', 'other'];

function ticketClassifier(g: Gen, p: Proc, cfg: ModelCfg): void {
  const { rng } = g;
  const program = 'ticket_classifier';
  if (rng.chance(0.25) && g.replay(p, program, () => null)) return;
  const lang = g.pool.lang();
  const spec: CallSpec = {
    program,
    module: 'generator',
    cfg,
    inputs: [
      instructions(['label', 'priority', 'confidence'], `Classify the support ticket. Labels: ${LABELS.join(', ')}.`, null, null),
      inputMsg([['ticket', g.pool.sentences(lang, rng.int(1, 4))]]),
    ],
    kind: 'ok',
    outputs: { label: rng.pick(LABELS), priority: rng.pick(['low', 'medium', 'high']), confidence: g.confidence() },
    structured: true,
  };
  const parent = rng.uuid4();
  if (g.failure(p, spec, parent, 0.01, 0.01) === 'exception') return;
  p.emit(spec, parent);
  g.remember(program, { specs: [spec], direct: false });
}

// ---- support_desk: long tickets under a long shared system prompt, with planted near-duplicates.

const SUPPORT_SYSTEM_SENTENCES = 40;

/** Re-spaces and re-cases a text: what a re-run through another template or editor does. */
function respace(rng: Rng, text: string): string {
  return text
    .split(' ')
    .map((word) => (rng.chance(0.15) ? word.toUpperCase() : rng.chance(0.15) ? word.toLowerCase() : word))
    .join(' ')
    .replace(/ /g, () => (rng.chance(0.1) ? '  ' : rng.chance(0.05) ? '\n' : ' '));
}

function supportDesk(g: Gen, p: Proc, cfgs: { a: ModelCfg; b: ModelCfg }): void {
  const { rng, pool } = g;
  const program = 'support_desk';
  g.supportSystem ??= pool.sentences('en', SUPPORT_SYSTEM_SENTENCES);
  const system = { role: 'system', content: g.supportSystem };
  const ticket = (number: number, day: number, body: string): string =>
    `Ticket #${number} opened on 2026-02-${String(day).padStart(2, '0')} by ${pool.word()} ${pool.word()}.\n\n${body}\n\nPlease answer the customer.`;
  const spec = (user: string, answer: string, cfg: ModelCfg): CallSpec => ({
    program,
    module: 'generator',
    cfg,
    inputs: [system, { role: 'user', content: user }],
    kind: 'ok',
    outputs: { role: 'assistant', content: answer },
  });
  const number = rng.int(10000, 99999);
  const day = rng.int(1, 27);
  const body = pool.sentences('en', rng.int(18, 30));
  const answer = pool.sentences('en', rng.int(4, 8));
  const base = spec(ticket(number, day, body), answer, cfgs.a);
  p.emit(base, null);
  const baseId = p.lastCallId;
  const planted = g.planted;
  const x = rng.next();
  p.wait(rng.logUniform(1, 600));
  if (x < 0.15) {
    p.emit(spec(respace(rng, base.inputs[1].content as string), respace(rng, answer), cfgs.a), null);
    planted.positives.push({ base: baseId, variant: p.lastCallId, kind: 'whitespace_case' });
  } else if (x < 0.3) {
    p.emit(spec(ticket(number + rng.int(1, 500), day + 1, body), answer, cfgs.a), null);
    planted.positives.push({ base: baseId, variant: p.lastCallId, kind: 'ticket_date' });
  } else if (x < 0.45) {
    // The same ticket answered by another model config, one word of the answer different.
    const words = answer.split(' ');
    words[rng.int(0, words.length - 1)] = pool.word();
    p.emit(spec(base.inputs[1].content as string, words.join(' '), cfgs.b), null);
    planted.positives.push({ base: baseId, variant: p.lastCallId, kind: 'answer_word' });
  } else if (x < 0.6) {
    // Half of the words in common: the same first half of the ticket, then another ticket and answer.
    const half = body.split(' ');
    const kept = half.slice(0, Math.floor(half.length / 2)).join(' ');
    const fresh = pool.sentences('en', rng.int(9, 15));
    p.emit(spec(ticket(number, day, `${kept} ${fresh}`), pool.sentences('en', rng.int(4, 8)), cfgs.a), null);
    planted.negatives.push({ base: baseId, variant: p.lastCallId, kind: 'half_words' });
  } else if (x < 0.7) {
    // Only the long system prompt in common.
    p.emit(spec(ticket(rng.int(10000, 99999), rng.int(1, 28), pool.sentences('en', rng.int(18, 30))), pool.sentences('en', rng.int(4, 8)), cfgs.a), null);
    planted.negatives.push({ base: baseId, variant: p.lastCallId, kind: 'shared_system' });
  }
}

// ---- assistant_chat: a chat assistant whose answers fail quietly now and then (with plantFailures).

/** The limit assistant_chat runs with: a cut answer used all of it. */
const CHAT_MAX_TOKENS = 8192;
const EVAL_ITEMS = 400;

const REFUSALS = [
  "I'm sorry, but I can't help with that.",
  'I’m sorry, but I can’t assist with that request.',
  'I cannot help with that. If you have another question, I am happy to help.',
  "Sorry, I can't do that.",
  'I must decline to answer this question.',
];
const IDENTITIES = [
  'As an AI developed by OpenAI, I do not have personal opinions, but here is an overview.',
  'As an AI language model, I cannot browse the internet. That said:',
  'As of my knowledge cutoff in 2023, the situation was as follows.',
  "I'm ChatGPT, a large language model. Here is what I found.",
  'As of my last knowledge update, the figures were these.',
];

/** The first `n` UTF-16 units of `text`, one fewer when the last would split a surrogate pair. */
function cutAt(text: string, n: number): string {
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/** An evaluation item: words drawn fresh (not the pool's sentences, which normal records reuse). */
function evalItem(g: Gen): string {
  const words: string[] = [];
  for (let i = g.rng.int(12, 36); i > 0; i--) words.push(g.pool.word());
  return `${words.join(' ')}?`;
}

/** The item with one word replaced, some words re-cased and some spaces doubled or made new lines. */
function editedItem(g: Gen, item: string): string {
  const words = item.split(' ');
  words[g.rng.int(0, words.length - 1)] = g.pool.word();
  return respace(g.rng, words.join(' '));
}

/** The item with a word replaced every 7 words: no 8 consecutive words left in common. */
function nearMissItem(g: Gen, item: string): string {
  return item
    .split(' ')
    .map((word, i) => (i % 7 === 3 ? `${word}x` : word))
    .join(' ');
}

/** A degenerate loop: a line, a sentence or a short phrase repeated to the end of the answer. */
function loopText(g: Gen, lang: Lang): string {
  const { rng, pool } = g;
  const intro = pool.sentences(lang, rng.int(1, 3));
  const x = rng.next();
  if (x < 0.4) {
    const line = pool.sentence('en');
    return `${intro}\n${Array.from({ length: rng.int(8, 40) }, () => line).join('\n')}`;
  }
  if (x < 0.7) {
    const sentence = pool.sentence('en');
    return `${intro} ${Array.from({ length: rng.int(10, 60) }, () => sentence).join(' ')}`;
  }
  const phrase = `${pool.word()} ${pool.word()} ${pool.word()}`;
  return `${intro} ${Array.from({ length: rng.int(30, 150) }, () => phrase).join(' ')}`;
}

function assistantChat(g: Gen, p: Proc, cfg: ModelCfg): void {
  const { rng, pool } = g;
  const program = 'assistant_chat';
  const lang: Lang = rng.chance(0.8) ? 'en' : pool.lang();
  const system = { role: 'system', content: 'You are a helpful assistant. Answer in the language of the question.' };
  let user = g.question(lang);
  let answer: Msg = { role: 'assistant', content: g.text(lang, rng.logUniform(50, 3000)) };
  let usage: Usage | undefined;
  const kind = rng.weighted<FailureKind | 'normal'>([
    ['normal', 40],
    ['truncated_usage', 6],
    ['empty', 3],
    ['empty_whitespace', 3],
    ['think_unclosed', 3],
    ['think_unopened', 3],
    ['reasoning_only', 3],
    ['repetition_loop', 6],
    ['refusal', 6],
    ['identity', 6],
    ['contaminated_exact', 5],
    ['contaminated_edited', 5],
    ['contamination_near_miss', 5],
  ]);
  const item = g.evalItems[rng.int(0, g.evalItems.length - 1)];
  const text = answer.content as string;
  switch (kind) {
    case 'truncated_usage': {
      const long = g.text(lang, rng.uniform(4000, 12000));
      answer = { role: 'assistant', content: cutAt(long, rng.int(Math.floor(long.length / 2), long.length - 1)) };
      const prompt = Math.ceil(user.length / 3.6) + 30;
      usage = { prompt_tokens: prompt, completion_tokens: CHAT_MAX_TOKENS, total_tokens: prompt + CHAT_MAX_TOKENS, cached_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0 };
      break;
    }
    case 'empty':
      answer = { role: 'assistant', content: '' };
      break;
    case 'empty_whitespace':
      answer = { role: 'assistant', content: rng.pick(['\n', '  ', '\n\n \t', ' \n']) };
      break;
    case 'think_unclosed':
      answer = { role: 'assistant', content: `<think>\n${cutAt(text, rng.int(20, Math.max(21, text.length)))}` };
      break;
    case 'think_unopened':
      answer = { role: 'assistant', content: `${pool.sentences(lang, rng.int(2, 6))}\n</think>\n\n${text}` };
      break;
    case 'reasoning_only':
      answer = { role: 'assistant', content: '', reasoning_content: text };
      break;
    case 'repetition_loop':
      answer = { role: 'assistant', content: loopText(g, lang) };
      break;
    case 'refusal':
      answer = { role: 'assistant', content: rng.chance(0.5) ? rng.pick(REFUSALS) : `${rng.pick(REFUSALS)} ${pool.sentences('en', rng.int(1, 3))}` };
      break;
    case 'identity':
      answer = { role: 'assistant', content: `${rng.pick(IDENTITIES)}\n\n${text}` };
      break;
    case 'contaminated_exact':
      user = rng.chance(0.5) ? item : `${pool.sentences('en', 1)}\n\n${item}`;
      break;
    case 'contaminated_edited':
      user = `${rng.chance(0.5) ? '' : 'Question: '}${editedItem(g, item)}`;
      break;
    case 'contamination_near_miss':
      user = nearMissItem(g, item);
      break;
  }
  const spec: CallSpec = { program, module: 'generator', cfg, inputs: [system, { role: 'user', content: user }], kind: 'ok', outputs: answer, usage };
  p.emit(spec, null);
  if (kind !== 'normal') g.failures.push({ call_id: p.lastCallId, kind });
}

// ---- retry_desk: asks again after a bad answer, and samples scored answers (with plantPairs).

/** Bad answers retry_desk plants, with the signal (quality stage) that names each. */
const RETRY_FAULTS = ['truncated', 'empty', 'broken_unclosed', 'broken_reasoning', 'refusal', 'identity'] as const;
const RETRY_SIGNAL: Record<(typeof RETRY_FAULTS)[number], string> = {
  truncated: 'truncated',
  empty: 'empty',
  broken_unclosed: 'broken',
  broken_reasoning: 'broken',
  refusal: 'refusal',
  identity: 'identity',
};

function retryDesk(g: Gen, p: Proc, cfg: ModelCfg): void {
  const { rng, pool } = g;
  const program = 'retry_desk';
  const lang: Lang = rng.chance(0.85) ? 'en' : pool.lang();
  const inputs: Msg[] = [
    { role: 'system', content: 'You are the help desk of a software company. Answer briefly.' },
    // A ticket number: a question the generator's pools repeat is still one prompt of one task here.
    { role: 'user', content: `${g.question(lang)} (ticket ${rng.int(100000, 999999)})` },
  ];
  const emit = (outputs: Msg, usage?: Usage): string => {
    p.emit({ program, module: 'generator', cfg, inputs, kind: 'ok', outputs, usage }, null);
    return p.lastCallId;
  };
  const good = (): Msg => ({ role: 'assistant', content: g.text(lang, rng.logUniform(40, 1500)) });
  const bad = (fault: (typeof RETRY_FAULTS)[number]): { msg: Msg; usage?: Usage } => {
    const text = g.text(lang, rng.logUniform(200, 1500));
    switch (fault) {
      case 'truncated': {
        const prompt = 60;
        return { msg: { role: 'assistant', content: cutAt(text, Math.max(20, Math.floor(text.length / 2))) }, usage: { prompt_tokens: prompt, completion_tokens: CHAT_MAX_TOKENS, total_tokens: prompt + CHAT_MAX_TOKENS, cached_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0 } };
      }
      case 'empty':
        return { msg: { role: 'assistant', content: rng.pick(['\n', '  ', ' \n']) } };
      case 'broken_unclosed':
        return { msg: { role: 'assistant', content: `<think>\n${text}` } };
      case 'broken_reasoning':
        return { msg: { role: 'assistant', content: '', reasoning_content: text } };
      case 'refusal':
        return { msg: { role: 'assistant', content: rng.pick(REFUSALS) } };
      case 'identity':
        return { msg: { role: 'assistant', content: `${rng.pick(IDENTITIES)}\n\n${text}` } };
    }
  };
  const scenario = rng.weighted<string>([
    ['single', 40],
    ['retry', 20],
    ['retry_twice', 5],
    ['exception_retry', 5],
    ['two_good', 8],
    ['identical', 4],
    ['scored', 15],
    ['scored_tie', 3],
  ]);
  switch (scenario) {
    case 'single':
      emit(good());
      break;
    case 'retry':
    case 'retry_twice': {
      const faults = scenario === 'retry' ? [rng.pick(RETRY_FAULTS)] : [rng.pick(RETRY_FAULTS), rng.pick(RETRY_FAULTS)];
      const rejected = faults.map((fault) => {
        const b = bad(fault);
        return { id: emit(b.msg, b.usage), fault, key: JSON.stringify(b.msg) };
      });
      const chosen = emit(good());
      const seen = new Set<string>();
      for (const r of rejected) {
        // The same bad answer twice is one pair.
        if (seen.has(r.key)) continue;
        seen.add(r.key);
        g.plantedPairs.push({ chosen, rejected: r.id, signal: RETRY_SIGNAL[r.fault] });
      }
      break;
    }
    case 'exception_retry': {
      p.emit({ program, module: 'generator', cfg, inputs, kind: 'exception', exception: EXCEPTIONS[0] }, null);
      g.plantedUnpaired.push(p.lastCallId);
      g.plantedUnpaired.push(emit(good()));
      break;
    }
    case 'two_good':
      g.plantedUnpaired.push(emit(good()), emit(good()));
      break;
    case 'identical': {
      const answer = good();
      g.plantedUnpaired.push(emit(answer), emit(answer));
      break;
    }
    case 'scored':
    case 'scored_tie': {
      const n = rng.int(2, 4);
      const sampled: { id: string; score: number }[] = [];
      for (let i = 0; i < n; i++) {
        const score = scenario === 'scored_tie' ? 1 : Math.round(rng.uniform(0, 1) * 100) / 100;
        const id = emit(good());
        sampled.push({ id, score });
        g.scores.push({ call_id: id, score });
      }
      const hi = sampled.reduce((a, b) => (b.score > a.score ? b : a));
      const lo = sampled.reduce((a, b) => (b.score < a.score ? b : a));
      if (hi.score > lo.score) g.plantedPairs.push({ chosen: hi.id, rejected: lo.id, signal: 'score' });
      else for (const s of sampled) g.plantedUnpaired.push(s.id);
      break;
    }
  }
}

/** Ask recordings beside the tree: streamed and Anthropic message results, some cut at the token limit. */
/**
 * With `retries` (plantPairs), each answer cut at the limit is followed by the same question
 * asked again and answered in full, and the pair is planted in `g.plantedPairs`.
 */
function writeAskRecordings(g: Gen, dir: string, retries = false): { planted: { call_id: string; kind: FailureKind }[]; ok: number } {
  const { rng } = g;
  const planted: { call_id: string; kind: FailureKind }[] = [];
  let ok = 0;
  for (let r = 0; r < 60; r++) {
    const test = `chat_${String(r).padStart(3, '0')}`;
    const recordedAt = `2026-08-0${rng.int(1, 9)}T1${rng.int(0, 9)}:${rng.int(10, 59)}:${rng.int(10, 59)}Z`;
    const interactions: J[] = [];
    for (let i = rng.int(1, 4); i > 0; i--) {
      const question = g.question('en');
      const answer = g.text('en', rng.logUniform(50, 1500));
      const cut = rng.chance(0.3);
      const index = interactions.length;
      if (rng.chance(0.5)) {
        const shown = cut ? cutAt(answer, Math.max(1, Math.floor(answer.length / 2))) : answer;
        const pieces = Array.from(shown.matchAll(/(?:[\uD800-\uDBFF][\uDC00-\uDFFF]|[\s\S]){1,40}/g), (m) => m[0]);
        const chunks: J[] = pieces.map((content) => ({ content, tool_calls: null, finish_reason: null, thinking: null }));
        chunks.push({ content: '', tool_calls: null, finish_reason: cut ? 'length' : 'stop', thinking: null });
        interactions.push({ type: 'provider', messages: [{ role: 'user', content: question }], model: 'deepseek-v4-flash', result: { type: 'stream', accumulated_text: shown, chunks } });
      } else {
        const output = cut ? 4096 : Math.ceil(answer.length / 3.7);
        interactions.push({
          type: 'provider',
          messages: [{ role: 'user', content: question }],
          model: 'claude-sonnet-4-6',
          result: {
            type: 'message',
            content: cut ? cutAt(answer, Math.floor(answer.length * 0.7)) : answer,
            tool_calls: null,
            metadata: { model: 'claude-sonnet-4-6', stop_reason: cut ? 'max_tokens' : 'end_turn', input_tokens: Math.ceil(question.length / 3.6), output_tokens: output, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
          },
        });
      }
      ok++;
      if (cut) planted.push({ call_id: derivedUuid('ask', test, recordedAt, String(index)), kind: 'truncated_stop_reason' });
      if (cut && retries) {
        const first = interactions[index] as { messages: J; model: string; result: { type: string } };
        const full = first.result.type === 'stream'
          ? { type: 'stream', accumulated_text: answer, chunks: [{ content: answer, tool_calls: null, finish_reason: 'stop', thinking: null }] }
          : { type: 'message', content: answer, tool_calls: null, metadata: { model: first.model, stop_reason: 'end_turn', input_tokens: Math.ceil(question.length / 3.6), output_tokens: Math.ceil(answer.length / 3.7), cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } };
        interactions.push({ type: 'provider', messages: first.messages, model: first.model, result: full });
        ok++;
        g.plantedPairs.push({ chosen: derivedUuid('ask', test, recordedAt, String(index + 1)), rejected: derivedUuid('ask', test, recordedAt, String(index)), signal: 'truncated' });
      }
    }
    mkdirSync(path.join(dir, test), { recursive: true });
    writeFileSync(path.join(dir, test, 'recording.yml'), `${JSON.stringify({ test, recorded_at: recordedAt, interactions }, null, 2)}\n`);
  }
  return { planted, ok };
}

/**
 * klieo captures beside the tree: each llm_io entry with its finish_reason, some `length`. With
 * `retries` (plantPairs), a run whose first call was cut at the limit is run again as a new run
 * of the same agent, the same first prompt answered in full (within one run the cut answer is
 * in the next call's conversation: another prompt), and the pair is planted in `g.plantedPairs`.
 */
function writeKlieoCaptures(g: Gen, dir: string, retries = false): { planted: { call_id: string; kind: FailureKind }[]; ok: number } {
  const { rng } = g;
  const planted: { call_id: string; kind: FailureKind }[] = [];
  let ok = 0;
  mkdirSync(dir, { recursive: true });
  for (let r = 0; r < 40; r++) {
    const runId = `01KQ${String(r).padStart(6, '0')}`;
    const steps: J[] = [];
    const io: J[] = [];
    for (let i = rng.int(1, 3); i > 0; i--) {
      const prompt = g.question('en');
      const completion = g.text('en', rng.logUniform(50, 1500));
      const cut = rng.chance(0.3);
      const idx = steps.length;
      const completionTokens = cut ? 1024 : Math.ceil(completion.length / 3.7);
      steps.push({ idx, kind: 'llm_call', name: 'gpt-4.1-mini', prompt_tokens: 40, completion_tokens: completionTokens, cost_usd: null, input: null, output: null, error: null, latency: rng.int(300, 4000), span_id: null });
      io.push({ prompt, completion: cut ? cutAt(completion, Math.floor(completion.length * 0.6)) : completion, model: 'gpt-4.1-mini', provider: 'openai', prompt_tokens: 40, completion_tokens: completionTokens, finish_reason: cut ? 'length' : 'stop', tool_calls: [], request_fingerprint: `fp-${r}-${idx}` });
      ok++;
      if (cut) planted.push({ call_id: `${runId}:${idx}`, kind: 'truncated_stop_reason' });
    }
    const runLog = { run_id: runId, agent: 'writer', started_at: '2026-05-01T10:00:00Z', finished_at: '2026-05-01T10:00:09Z', status: 'completed', steps, tokens: { prompt_tokens: 40 * steps.length, completion_tokens: 0 }, cost_estimate: null };
    writeFileSync(path.join(dir, `${runId}.json`), `${JSON.stringify({ run_id: runId, run_log: runLog, llm_io: io, model_version: '2025-04-14', rng_seed: r, memory_ref: null, captured_at: '2026-05-01T10:01:00Z' }, null, 2)}\n`);
    const first = io[0] as { prompt: string; finish_reason: string };
    if (retries && first.finish_reason === 'length') {
      const retryId = `${runId}R`;
      const answer = g.text('en', rng.logUniform(50, 1500));
      const step = { ...(steps[0] as Record<string, J>), completion_tokens: Math.ceil(answer.length / 3.7) };
      const entry = { ...(io[0] as Record<string, J>), completion: answer, completion_tokens: Math.ceil(answer.length / 3.7), finish_reason: 'stop', request_fingerprint: `fp-${r}-retry` };
      const retryLog = { ...runLog, run_id: retryId, steps: [step], tokens: { prompt_tokens: 40, completion_tokens: 0 } };
      writeFileSync(path.join(dir, `${retryId}.json`), `${JSON.stringify({ run_id: retryId, run_log: retryLog, llm_io: [entry], model_version: '2025-04-14', rng_seed: r, memory_ref: null, captured_at: '2026-05-01T10:02:00Z' }, null, 2)}\n`);
      ok++;
      g.plantedPairs.push({ chosen: `${retryId}:0`, rejected: `${runId}:0`, signal: 'truncated' });
    }
  }
  return { planted, ok };
}

// ------------------------------------------------------------------------------------ the tree

type ProgramKind = 'qa' | 'summarizer' | 'math' | 'research' | 'direct' | 'tickets' | 'support' | 'chat' | 'retry';
export type Profile = 'default' | 'small';

const PROGRAM_WEIGHTS: Record<Profile, [ProgramKind, number][]> = {
  default: [
    ['qa', 25],
    ['summarizer', 17],
    ['math', 12],
    ['research', 16],
    ['direct', 18],
    ['tickets', 12],
  ],
  small: [
    ['qa', 6],
    ['math', 30],
    ['direct', 4],
    ['tickets', 60],
  ],
};

/** Tasks one process runs: from `low` to `high`, log-uniform (tickets run more, being cheap). */
const PROCESS_TASKS: Record<Profile, { low: number; high: number; tickets: number }> = {
  default: { low: 2, high: 250, tickets: 600 },
  small: { low: 500, high: 5000, tickets: 12000 },
};

function runProcess(g: Gen, kind: ProgramKind, start: number, version: string, first: boolean, profile: Profile): Proc {
  const { rng, w } = g;
  const span = PROCESS_TASKS[profile];
  let tasks = Math.round(rng.logUniform(span.low, kind === 'tickets' ? span.tickets : span.high));
  // Some processes die mid-write; some files get a garbage line. The first process has both,
  // so that even a small tree holds damaged lines.
  let crashAt = rng.chance(0.06) ? rng.int(0, tasks) : -1;
  let garbageAt = rng.chance(0.03) ? rng.int(0, tasks) : -1;
  if (first) {
    tasks = Math.max(tasks, 12);
    garbageAt = 1;
    crashAt = rng.int(3, 12);
  }
  const p = new Proc(w, rng, start, version, crashAt, garbageAt);
  const pickCfg = (...options: ModelCfg[]): ModelCfg => rng.pick(options);
  const run = (() => {
    switch (kind) {
      case 'qa': {
        const cfgs = { gen: pickCfg(M.gpt4oMiniT0, M.gpt4oMiniT0, M.mistral), cot: pickCfg(M.mistralT07, M.qwen3), self: pickCfg(M.mistral, M.gpt4oMini) };
        return () => qaProgram(g, p, cfgs);
      }
      case 'summarizer': {
        const cfgs = { g1: pickCfg(M.gpt4oMini, M.llama), g2: pickCfg(M.gpt4oMini, M.gpt41, M.claude) };
        return () => summarizer(g, p, cfgs);
      }
      case 'math': {
        const cfg = pickCfg(M.gpt4oMini, M.gpt4oMini, M.llama);
        return () => mathAgent(g, p, cfg);
      }
      case 'research': {
        const cfg = pickCfg(M.gpt41, M.gpt4oMini, M.llama);
        return () => researchAgent(g, p, cfg);
      }
      case 'direct':
        return () => directCalls(g, p);
      case 'tickets': {
        const cfg = pickCfg(M.gpt4oMiniT0, M.llama);
        return () => ticketClassifier(g, p, cfg);
      }
      case 'support':
        return () => supportDesk(g, p, { a: M.gpt4oMini, b: M.gpt41 });
      case 'chat':
        return () => assistantChat(g, p, M.gpt4oMini);
      case 'retry':
        return () => retryDesk(g, p, M.gpt4oMini);
    }
  })();
  try {
    for (let i = 0; i < tasks && !w.full; i++) {
      run();
      p.wait(rng.logUniform(0.01, 60));
    }
  } catch (error) {
    if (!(error instanceof Crash)) throw error;
  } finally {
    p.close();
  }
  return p;
}

function writeOther(root: string, rel: string, data: Buffer | string, skipped: string[]): void {
  const full = path.join(root, rel);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, data);
  skipped.push(rel);
}

function writeNonTraces(g: Gen, root: string): string[] {
  const { rng } = g;
  const skipped: string[] = [];
  writeOther(root, 'synalinks.json', '{\n  "backend": "pydantic",\n  "epsilon": 1e-7,\n  "floatx": "float32"\n}\n', skipped);
  const ds: string[] = [];
  for (let i = 0; i < 2000; i++) ds.push(dumps({ question: g.question('en'), answer: g.pool.sentence('en') }));
  writeOther(root, 'datasets/gsm8k_mini/train.jsonl', ds.join('\n') + '\n', skipped);
  writeOther(root, 'knowledge.db', Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), rng.bytes(65536 - 16)]), skipped);
  writeOther(root, 'kb/documents.lb', rng.bytes(4096), skipped);
  writeOther(root, 'notes.jsonl', '{"note":"rerun math_agent with gpt-4.1 once the budget is approved"}\n', skipped);
  // Looks like trace files but are not: wrong stem, too deep, wrong extension.
  const fake = '{"synalinks_version":"0.9.014","note":"not a trace file"}\n';
  writeOther(root, 'qa_program/generator/other_20260101-000000.jsonl', fake, skipped);
  writeOther(root, 'qa_program/generator/old/generator_20260101-000000.jsonl', fake, skipped);
  writeOther(root, 'qa_program/generator/generator_20260101-000000.jsonl.bak', fake, skipped);
  return skipped.sort();
}

export function expectedPath(out: string): string {
  return `${out.replace(/[\\/]+$/, '')}.expected.json`;
}

export function generate(options: GenerateOptions): Expected {
  const started = Date.now();
  const out = path.resolve(options.out);
  if (existsSync(out) && readdirSync(out).length > 0) {
    if (!options.force) throw new Error(`${out} exists and is not empty (use --force to replace it)`);
    rmSync(out, { recursive: true, force: true });
  }
  mkdirSync(out, { recursive: true });
  const target = Math.max(1, Math.round(options.mb * 1024 * 1024));
  const profile = options.profile ?? 'default';
  const noBigImages = profile === 'small' ? Infinity : undefined;
  const w = new Writer(out, target, (noBigImages ?? options.bigImageEveryMb ?? 40) * 1024 * 1024, (noBigImages ?? options.firstBigImageMb ?? 10) * 1024 * 1024);
  const rng = new Rng(options.seed);
  const g = new Gen(rng, w, !options.distinctCalls);
  const skipped = writeNonTraces(g, out);
  if (options.plantFailures) for (let i = 0; i < EVAL_ITEMS; i++) g.evalItems.push(evalItem(g));

  // 2026-01-05 and later; processes follow each other, minutes to hours apart.
  let clock = 1767600000 + rng.uniform(0, 86400);
  let previous: { proc: Proc; kind: ProgramKind; start: number } | null = null;
  let lastLog = 0;
  while (!w.full) {
    let kind = rng.weighted<ProgramKind>([
      ...PROGRAM_WEIGHTS[profile],
      ...(options.plantNearDuplicates ? [['support', 100] as [ProgramKind, number]] : []),
      ...(options.plantFailures ? [['chat', 30] as [ProgramKind, number]] : []),
      ...(options.plantPairs ? [['retry', 30] as [ProgramKind, number]] : []),
    ]);
    let start: number;
    let shared = false;
    if (previous !== null && !previous.proc.crashed && rng.chance(0.03)) {
      // A second process of the same program started in the same second: same file names,
      // appended after the first process's lines.
      kind = previous.kind;
      shared = true;
      start = previous.start + rng.uniform(0, 0.999 - (previous.start - Math.floor(previous.start)));
    } else {
      clock += rng.logUniform(30, 40000);
      start = clock;
    }
    // An upgrade from 0.9.005 to 0.9.014 about a third of the way in; an old venv lingers.
    const version = shared && previous !== null ? previous.proc.version : w.bytes < target * 0.3 ? (rng.chance(0.9) ? OLD_VERSION : NEW_VERSION) : rng.chance(0.05) ? OLD_VERSION : NEW_VERSION;
    const proc = runProcess(g, kind, start, version, previous === null, profile);
    clock = Math.max(clock, proc.clock);
    previous = { proc, kind, start };
    if (options.log && w.bytes - lastLog > 50 * 1024 * 1024) {
      lastLog = w.bytes;
      options.log(`  ${(w.bytes / 1048576).toFixed(0)} MB, ${w.records} records`);
    }
  }

  let quality: PlantedFailures | undefined;
  if (options.plantFailures) {
    const base = out.replace(/[\\/]+$/, '');
    const files = { eval_file: `${base}.evals.jsonl`, ask_dir: `${base}.ask`, klieo_dir: `${base}.klieo` };
    rmSync(files.ask_dir, { recursive: true, force: true });
    rmSync(files.klieo_dir, { recursive: true, force: true });
    writeFileSync(files.eval_file, g.evalItems.map((question, i) => dumps({ id: `item-${i}`, question })).join('\n') + '\n');
    const ask = writeAskRecordings(g, files.ask_dir);
    const klieo = writeKlieoCaptures(g, files.klieo_dir);
    quality = {
      planted: [...g.failures, ...ask.planted, ...klieo.planted],
      max_completion_tokens: CHAT_MAX_TOKENS,
      ...files,
      other_ok_records: ask.ok + klieo.ok,
    };
  }

  let pairs: PlantedPairs | undefined;
  if (options.plantPairs) {
    const scoresFile = `${out.replace(/[\\/]+$/, '')}.scores.jsonl`;
    writeFileSync(scoresFile, g.scores.map((s) => dumps({ call_id: s.call_id, score: f(s.score) })).join('\n') + '\n');
    // Ask recordings that retry a call cut at the limit, beside the tree.
    const askDir = `${out.replace(/[\\/]+$/, '')}.ask-retries`;
    rmSync(askDir, { recursive: true, force: true });
    writeAskRecordings(g, askDir, true);
    const klieoDir = `${out.replace(/[\\/]+$/, '')}.klieo-retries`;
    rmSync(klieoDir, { recursive: true, force: true });
    writeKlieoCaptures(g, klieoDir, true);
    pairs = { pairs: g.plantedPairs, unpaired: g.plantedUnpaired, scores_file: scoresFile, max_completion_tokens: CHAT_MAX_TOKENS, ask_dir: askDir, klieo_dir: klieoDir };
  }

  const traceFiles = [...w.files.keys()].sort();
  let costSum = 0;
  for (const rel of traceFiles) for (const c of w.files.get(rel)!.okCosts) costSum += c;
  const sorted = <T>(o: Record<string, T>): Record<string, T> =>
    Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const expected: Expected = {
    generator_version: GENERATOR_VERSION,
    seed: options.seed,
    mb: options.mb,
    trace_bytes: w.bytes,
    trace_files: traceFiles.length,
    records: w.records,
    ok: w.kinds.ok,
    exception: w.kinds.exception,
    no_output: w.kinds.no_output,
    damaged_lines: w.damaged.length,
    unique_ok_keys: w.okKeys.size,
    unique_ok_inputs_hashes: w.okInputs.size,
    duplicate_ok_records: w.kinds.ok - w.okKeys.size,
    distinct_config_hashes: w.configHashes.size,
    synalinks_versions: sorted(w.versions),
    per_program: sorted(w.perProgram),
    per_module: sorted(w.perModule),
    per_module_kinds: sorted(w.perModuleKinds),
    tokens_ok: { ...w.tokens },
    cost_sum_ok: costSum,
    largest_line_bytes: w.largestLine,
    damaged: [...w.damaged].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line)),
    skipped_paths: skipped,
    ...(options.plantNearDuplicates ? { near_duplicates: g.planted } : {}),
    ...(quality !== undefined ? { quality } : {}),
    ...(pairs !== undefined ? { pairs } : {}),
    note:
      'Written by bench/generate.ts. records = parsed trace records (ok + exception + no_output), damaged lines excluded. ' +
      'unique_ok_keys = distinct (inputs_hash, config_hash) among ok records; duplicate_ok_records = ok - unique_ok_keys. ' +
      'Token and cost sums cover ok records only. cost_sum_ok is summed in sorted-file then line order (compare with a tolerance). ' +
      'Paths are relative to the tree; lines are 1-based; offsets are byte offsets of the line start.',
  };
  writeFileSync(expectedPath(out), JSON.stringify(expected, null, 2) + '\n');
  options.log?.(`generated ${(w.bytes / 1048576).toFixed(1)} MB, ${w.records} records, ${traceFiles.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return expected;
}

// ------------------------------------------------------------------------------------ CLI

const USAGE = 'usage: node dist/bench/generate.js --out DIR [--mb 200] [--seed 1] [--profile default|small] [--force] [--plant-near-duplicates] [--plant-failures] [--plant-pairs] [--distinct-calls]\n';

function main(argv: string[]): void {
  let out: string | null = null;
  let mb = 200;
  let seed = 1;
  let force = false;
  let plantNearDuplicates = false;
  let plantFailures = false;
  let distinctCalls = false;
  let plantPairs = false;
  let profile: Profile = 'default';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') out = argv[++i];
    else if (a === '--plant-near-duplicates') plantNearDuplicates = true;
    else if (a === '--plant-failures') plantFailures = true;
    else if (a === '--distinct-calls') distinctCalls = true;
    else if (a === '--plant-pairs') plantPairs = true;
    else if (a === '--profile') profile = argv[++i] as Profile;
    else if (a === '--mb') mb = Number(argv[++i]);
    else if (a === '--seed') seed = Number(argv[++i]);
    else if (a === '--force') force = true;
    else if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE);
      return;
    } else throw new Error(`unknown argument ${a}`);
  }
  if (out === null || !(mb > 0) || !Number.isInteger(seed) || !(profile in PROGRAM_WEIGHTS)) {
    process.stderr.write(USAGE);
    process.exitCode = 2;
    return;
  }
  const e = generate({ out, mb, seed, force, profile, plantNearDuplicates, plantFailures, plantPairs, distinctCalls, log: (line) => process.stderr.write(line + '\n') });
  process.stdout.write(
    `${out}: ${e.records} records (${e.ok} ok, ${e.exception} exception, ${e.no_output} no_output), ` +
      `${e.damaged_lines} damaged lines, ${e.unique_ok_keys} unique ok keys; counts in ${expectedPath(out)}\n`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`generate: ${(error as Error).message}\n`);
    process.exitCode = 2;
  }
}
