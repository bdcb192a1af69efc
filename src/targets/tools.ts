/**
 * Tool definitions for exported examples. A record whose recorder kept the tools offered to
 * the model (`TraceRecord.offeredTools`: OTLP spans) carries them; Synalinks, Ask and klieo
 * never record them, so for their records they come either from a file the user supplies
 * (`--tools FILE`) or are inferred from the calls seen in the records.
 */
import { readFile } from 'node:fs/promises';
import { parseJsonText } from '../canonical/json-value.js';
import type { Message } from '../record.js';
import { isObject } from './messages.js';
import { TOOL_NAME_PATTERN, toolCallFacts, type ArgumentTypes, type JsonSchemaType } from '../tool-calls.js';
import type { JsonObject, ToolDefinition } from './target.js';
import { KeyIndex } from '../pipeline/key-index.js';
import { PartitionedSpill, RunTempDir } from '../pipeline/spill.js';



/** Per tool name: which argument names and value types the recorded calls used. */
interface ToolObservations {
  /** Distinct calls seen (see `toolCallFacts`). */
  calls: number;
  /** Argument name → types seen. */
  types: Map<string, Set<JsonSchemaType>>;
  /** Argument name → in how many distinct calls it was present. */
  presence: Map<string, number>;
}





/** A tool's name and its arguments' types, as one or more distinct calls had them. */
interface Signature {
  tool: string;
  types: ArgumentTypes;
}

/** Distinct calls are resolved from rows of 128 bits of their key and their signature. */
const CALL_ROW_WORDS = 5;
/** Rows held before they go to disk: about 1.3 MB. */
const CALL_ROWS_IN_MEMORY = 1 << 16;
/** Files the rows on disk are spread over by key, so each is resolved alone: memory is a 64th of the distinct calls. */
const CALL_PARTITIONS = 64;
/** Keys of the last calls seen, to skip the steps of one agent run that repeat them; cleared when full. */
const RECENT_CALLS = 4096;

/**
 * 128 bits of a call's key, four 32-bit lanes of different multiplicative hashes. Two distinct
 * calls share them only by chance (about one pair in 10^26 for a billion calls), and then one
 * call is counted too few: nothing else depends on them.
 */
function keyWords(text: string, into: Uint32Array): void {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  let c = 0x85ebca6b;
  let d = 0xc2b2ae35;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    a = Math.imul(a ^ ch, 0x01000193);
    b = Math.imul(b ^ ch, 0x5bd1e995);
    b ^= b >>> 13;
    c = Math.imul(c + ch, 0xcc9e2d51);
    c = (c << 15) | (c >>> 17);
    d = Math.imul(d ^ ch, 0x1b873593) + i;
    d ^= d >>> 11;
  }
  const mix = (h: number): number => {
    h ^= text.length;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  };
  into[0] = mix(a);
  into[1] = mix(b);
  into[2] = mix(c);
  into[3] = mix(d);
}

/**
 * Tools inferred from the calls recorded. A call counts once however many records repeat it
 * (see `toolCallFacts`), and the first time its key is seen decides its argument types. The
 * keys are not held: each call is a row (its key's hash and its signature, interned, of which a
 * tree has few) in memory, then in files partitioned by key; distinct calls are counted one
 * partition at a time when the definitions are asked for. Memory stays flat however many calls
 * a tree holds (a Set of the keys took about 60 bytes a call, unbounded).
 */
export class ToolInference {
  private readonly signatureIds = new Map<string, number>();
  private readonly signatures: Signature[] = [];
  private readonly toolNames = new Set<string>();
  private readonly recent = new Set<string>();
  private readonly key = new Uint32Array(4);
  private rows = new Uint32Array(CALL_ROW_WORDS * 64);
  private rowCount = 0;
  private spill: { dir: RunTempDir; rows: PartitionedSpill } | null = null;
  /** The tools as the calls observed so far describe them; null once another call comes. */
  private resolved: Map<string, ToolObservations> | null = null;
  /** Definitions built since the last observation: exports ask for them once per example. */
  private readonly built = new Map<string, ToolDefinition>();

  /**
   * Records every tool call of the assistant messages. Records of one agent run
   * are prefixes of one another, so the same call reappears in many records:
   * calls are counted once per id (or per name and arguments when id-less).
   */
  observe(messages: readonly Message[]): void {
    this.observeFacts(toolCallFacts(messages));
  }

  /** Records calls as `toolCallFacts` describes them. */
  observeFacts(facts: readonly string[]): void {
    for (const text of facts) {
      const nameEnd = text.indexOf('\n');
      const typesEnd = text.indexOf('\n', nameEnd + 1);
      // Name and key: one id under two tool names is two calls.
      const nameAndKey = text.slice(0, nameEnd) + text.slice(typesEnd);
      if (this.recent.has(nameAndKey)) continue;
      if (this.recent.size === RECENT_CALLS) this.recent.clear();
      this.recent.add(nameAndKey);
      this.resolved = null;
      this.built.clear();
      const signatureText = text.slice(0, typesEnd);
      let signature = this.signatureIds.get(signatureText);
      if (signature === undefined) {
        signature = this.signatures.length;
        const tool = text.slice(0, nameEnd);
        this.signatures.push({ tool, types: JSON.parse(text.slice(nameEnd + 1, typesEnd)) as ArgumentTypes });
        this.signatureIds.set(signatureText, signature);
        this.toolNames.add(tool);
      }
      keyWords(nameAndKey, this.key);
      this.addRow(signature);
    }
  }

  private addRow(signature: number): void {
    if (this.rowCount === CALL_ROWS_IN_MEMORY) this.spillRows();
    const at = this.rowCount * CALL_ROW_WORDS;
    if (at + CALL_ROW_WORDS > this.rows.length) {
      const grown = new Uint32Array(this.rows.length * 2);
      grown.set(this.rows);
      this.rows = grown;
    }
    this.rows.set(this.key, at);
    this.rows[at + 4] = signature;
    this.rowCount++;
  }

  /** Moves the rows in memory to their partitions' files, in the order they came. */
  private spillRows(): void {
    if (this.spill === null) {
      const dir = new RunTempDir();
      this.spill = { dir, rows: new PartitionedSpill(dir, 'tool-calls', CALL_ROW_WORDS, CALL_PARTITIONS) };
    }
    for (let row = 0; row < this.rowCount; row++) {
      const at = row * CALL_ROW_WORDS;
      this.spill.rows.append(this.rows[at] % CALL_PARTITIONS, this.rows.subarray(at, at + CALL_ROW_WORDS));
    }
    this.rowCount = 0;
  }

  /** Distinct calls by signature, then each tool's observations: partition by partition, first sight of a key deciding. */
  private resolve(): Map<string, ToolObservations> {
    if (this.resolved !== null) return this.resolved;
    const distinct = new Float64Array(this.signatures.length);
    // Sized for the rows in memory when none are on disk: one record's calls need a small table.
    const slots = this.spill === null ? this.rowCount * 2 : undefined;
    const count = (rows: Iterable<Uint32Array>): void => {
      const seen = new KeyIndex(slots);
      const key = new Uint32Array(4);
      for (const row of rows) {
        for (let i = 0; i < 4; i++) key[i] = row[i];
        if (seen.addIfAbsent(key, 0) === -1) distinct[row[4]]++;
      }
    };
    const inMemory = function* (rows: Uint32Array, rowCount: number, partition: number | null): Generator<Uint32Array> {
      for (let row = 0; row < rowCount; row++) {
        const at = row * CALL_ROW_WORDS;
        if (partition === null || rows[at] % CALL_PARTITIONS === partition) yield rows.subarray(at, at + CALL_ROW_WORDS);
      }
    };
    if (this.spill === null) count(inMemory(this.rows, this.rowCount, null));
    else {
      const { rows, rowCount } = this;
      const spilled = this.spill.rows;
      for (let partition = 0; partition < CALL_PARTITIONS; partition++) {
        count(
          (function* () {
            yield* spilled.read(partition);
            yield* inMemory(rows, rowCount, partition);
          })(),
        );
      }
    }
    const tools = new Map<string, ToolObservations>();
    this.signatures.forEach(({ tool, types }, id) => {
      const calls = distinct[id];
      if (calls === 0) return;
      let observed = tools.get(tool);
      if (observed === undefined) {
        observed = { calls: 0, types: new Map(), presence: new Map() };
        tools.set(tool, observed);
      }
      observed.calls += calls;
      for (const [arg, type] of types) {
        let seen = observed.types.get(arg);
        if (seen === undefined) {
          seen = new Set();
          observed.types.set(arg, seen);
        }
        seen.add(type);
        observed.presence.set(arg, (observed.presence.get(arg) ?? 0) + calls);
      }
    });
    this.resolved = tools;
    return tools;
  }

  /** Removes the rows on disk; the definitions stay as they are. */
  dispose(): void {
    this.resolve();
    if (this.spill === null) return;
    this.spill.rows.dispose();
    this.spill.dir.remove();
    this.spill = null;
  }

  /** Names of the tools seen, sorted. */
  names(): string[] {
    return [...this.toolNames].sort();
  }

  /** Distinct recorded calls of a tool (what its inferred description counts). */
  callCount(name: string): number {
    return this.resolve().get(name)?.calls ?? 0;
  }

  /** One definition per tool name seen, sorted by name; properties and `required` sorted too. */
  definitions(): ToolDefinition[] {
    return this.names().map((name) => this.definition(name)!);
  }

  definition(name: string): ToolDefinition | undefined {
    let built = this.built.get(name);
    if (built === undefined) {
      built = this.build(name);
      if (built !== undefined) this.built.set(name, built);
    }
    return built;
  }

  private build(name: string): ToolDefinition | undefined {
    const tool = this.resolve().get(name);
    if (tool === undefined) return undefined;
    const n = tool.calls;
    const args = [...tool.types.keys()].sort();
    // fromEntries makes own properties: an argument named `__proto__` is one, where assignment would set the prototype.
    const properties: JsonObject = Object.fromEntries(args.map((arg) => [arg, { type: schemaTypeOf(tool.types.get(arg)!) }]));
    return {
      type: 'function',
      function: {
        name,
        description: `Inferred by traces from ${n} recorded call${n === 1 ? '' : 's'}.`,
        parameters: {
          type: 'object',
          properties,
          required: args.filter((arg) => tool.presence.get(arg) === n),
        },
      },
    };
  }
}


/** A single type, or a sorted list; `integer` is folded into `number` when both were seen. */
function schemaTypeOf(seen: Set<JsonSchemaType>): JsonSchemaType | JsonSchemaType[] {
  const types = new Set(seen);
  if (types.has('number')) types.delete('integer');
  const sorted = [...types].sort();
  return sorted.length === 1 ? sorted[0] : sorted;
}

export class ToolsFileError extends Error {}

/**
 * Reads `--tools FILE`: a JSON array of OpenAI-style definitions
 * (`{type:"function", function:{name, description?, parameters?}}`); the bare
 * `{name, description?, parameters?}` form is accepted and wrapped.
 */
export async function loadToolsFile(path: string): Promise<ToolDefinition[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ToolsFileError(`tools file ${path}: cannot read it (${(e as Error).message})`);
  }
  let value: unknown;
  try {
    // Numbers keep their text: a schema's `maximum` or `default` reaches every example as written.
    value = parseJsonText(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new ToolsFileError(`tools file ${path}: not valid JSON (${(e as Error).message})`);
  }
  return parseToolDefinitions(value, `tools file ${path}`);
}

/** Checks and normalizes a list of tool definitions; `origin` prefixes error messages. */
export function parseToolDefinitions(value: unknown, origin: string): ToolDefinition[] {
  if (!Array.isArray(value)) throw new ToolsFileError(`${origin}: expected a JSON array of tool definitions`);
  const seen = new Set<string>();
  return value.map((entry, i) => {
    const fn = isObject(entry) && entry.type === 'function' && isObject(entry.function)
      ? entry.function
      : isObject(entry) && entry.type === undefined && typeof entry.name === 'string'
        ? entry
        : null;
    if (fn === null) {
      throw new ToolsFileError(`${origin}: entry ${i} is not {"type":"function","function":{...}}`);
    }
    if (typeof fn.name !== 'string' || !TOOL_NAME_PATTERN.test(fn.name)) {
      throw new ToolsFileError(`${origin}: entry ${i} has no valid name (letters, digits, _ and -, up to 64)`);
    }
    if (seen.has(fn.name)) throw new ToolsFileError(`${origin}: tool ${fn.name} is defined twice`);
    seen.add(fn.name);
    if (fn.description !== undefined && typeof fn.description !== 'string') {
      throw new ToolsFileError(`${origin}: tool ${fn.name} has a non-string description`);
    }
    if (fn.parameters !== undefined && !isObject(fn.parameters)) {
      throw new ToolsFileError(`${origin}: tool ${fn.name} has parameters that are not a JSON Schema object`);
    }
    const definition: ToolDefinition = { type: 'function', function: { name: fn.name } };
    if (fn.description !== undefined) definition.function.description = fn.description as string;
    if (fn.parameters !== undefined) definition.function.parameters = fn.parameters as JsonObject;
    if (typeof fn.strict === 'boolean') definition.function.strict = fn.strict;
    return definition;
  });
}

/**
 * The definitions a record's recorder kept (`TraceRecord.offeredTools`) that a target can write,
 * in recorded order: each one a function tool (`{type: 'function', function: {name, …}}`, or the
 * bare `{name, …}`) whose name trainers accept, with a text description and object parameters
 * when it has them, the first of a name; any other entry (a provider's built-in tool, a definition
 * cut at a length limit) is left out, so a called tool it stood for is defined as one the record
 * does not hold. Values are as recorded (numbers keep their text).
 */
export function recordedDefinitions(offered: readonly unknown[] | null | undefined): ToolDefinition[] {
  if (offered === null || offered === undefined) return [];
  const definitions: ToolDefinition[] = [];
  const names = new Set<string>();
  for (const entry of offered) {
    let definition: ToolDefinition;
    try {
      [definition] = parseToolDefinitions([entry], 'recorded tools');
    } catch (error) {
      if (error instanceof ToolsFileError) continue;
      throw error;
    }
    if (names.has(definition.function.name)) continue;
    names.add(definition.function.name);
    definitions.push(definition);
  }
  return definitions;
}

export interface ExampleTools {
  definitions: ToolDefinition[];
  /** Names whose definition was inferred rather than recorded or supplied, sorted. */
  inferred: string[];
  /** Names whose definition is the record's own (`recordedDefinitions`), in the order written. */
  recorded: string[];
}

/**
 * The definitions an example carries, by precedence: the record's own, then a supplied file,
 * then inference. A record that kept the tools offered to the model (`recorded`) carries all
 * of them, in recorded order: they are what this very call was offered, and neither a file
 * nor inference says more. A called tool its list lacks is defined as below. Otherwise, with a
 * supplied file, all its tools (it lists what the model was offered), in file order, followed
 * by inferred definitions of called tools the file lacks. Without one, the inferred
 * definitions of the tools the example calls, and only those: inference knows nothing of what
 * else was offered. An example calling no tool carries none.
 *
 * With `everyLine` (a target that reads one schema per file), `toolNames` is the run's whole
 * list, which every line carries whatever its record offered: a recorded definition only takes
 * the place of the supplied or inferred one of its name.
 */
export function toolsFor(
  toolNames: readonly string[],
  supplied: readonly ToolDefinition[],
  inferred: ToolInference | readonly ToolDefinition[],
  recorded: readonly ToolDefinition[] = [],
  everyLine = false,
): ExampleTools {
  if (toolNames.length === 0) return { definitions: [], inferred: [], recorded: [] };
  const lookup = (name: string): ToolDefinition =>
    (inferred instanceof ToolInference
      ? inferred.definition(name)
      : inferred.find((d) => d.function.name === name)) ?? bareDefinition(name);
  const ownNames = new Set(recorded.map((d) => d.function.name));
  if (recorded.length === 0 || everyLine) {
    const suppliedNames = new Set(supplied.map((d) => d.function.name));
    const missing = [...new Set(toolNames)].filter((n) => !suppliedNames.has(n)).sort();
    const definitions = [...supplied, ...missing.map(lookup)];
    if (recorded.length === 0) return { definitions, inferred: missing, recorded: [] };
    const own = (d: ToolDefinition): ToolDefinition => recorded.find((r) => r.function.name === d.function.name) ?? d;
    return {
      definitions: definitions.map(own),
      inferred: missing.filter((n) => !ownNames.has(n)),
      recorded: definitions.map((d) => d.function.name).filter((n) => ownNames.has(n)),
    };
  }
  const lacking = [...new Set(toolNames)].filter((n) => !ownNames.has(n)).sort();
  const fromFile = lacking.flatMap((n) => supplied.filter((d) => d.function.name === n));
  const missing = lacking.filter((n) => !supplied.some((d) => d.function.name === n));
  return { definitions: [...recorded, ...fromFile, ...missing.map(lookup)], inferred: missing, recorded: recorded.map((d) => d.function.name) };
}

/** Used only when inference never observed a called tool: the caller skipped `observe`. */
function bareDefinition(name: string): ToolDefinition {
  return {
    type: 'function',
    function: {
      name,
      description: 'Inferred by traces from 0 recorded calls.',
      parameters: { type: 'object', properties: {}, required: [] },
    },
  };
}

/** The description NeMo Customizer takes: a text, not empty. */
function customizerDescription(fn: ToolDefinition['function']): string | null {
  return typeof fn.description === 'string' && fn.description !== '' ? fn.description : null;
}

/** What `completeForCustomizer` fills in or replaces in `def`, in words; none when it is complete. */
export function customizerGaps(def: ToolDefinition): string[] {
  const fn = def.function;
  const gaps: string[] = [];
  if (customizerDescription(fn) === null) gaps.push('a description');
  const params = fn.parameters;
  if (!isObject(params)) gaps.push('parameters');
  else {
    if (params.type !== 'object') gaps.push(`parameters of type "object" (not ${JSON.stringify(params.type ?? null)})`);
    if (!isObject(params.properties)) gaps.push('properties');
  }
  return gaps;
}

/**
 * NeMo Customizer's schema wants every definition complete: a description, and
 * parameters of `type:"object"` with `properties`. Fills in what is missing (see `customizerGaps`).
 */
export function completeForCustomizer(def: ToolDefinition): ToolDefinition {
  const fn = def.function;
  const params = isObject(fn.parameters) ? fn.parameters : {};
  return {
    type: 'function',
    function: {
      ...fn,
      description: customizerDescription(fn) ?? `Tool ${fn.name}.`,
      parameters: {
        ...params,
        type: 'object',
        properties: isObject(params.properties) ? params.properties : {},
      },
    },
  };
}
