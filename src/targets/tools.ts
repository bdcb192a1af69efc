/**
 * Tool definitions for exported examples. Synalinks never records the tools
 * offered to the model, so they come either from a file the user supplies
 * (`--tools FILE`) or are inferred from the calls seen in the records.
 */
import { readFile } from 'node:fs/promises';
import { isIntegerText, parseJsonText, writeJson } from '../canonical/json-value.js';
import type { Message } from '../record.js';
import { isObject, parseArguments, TOOL_NAME_PATTERN } from './messages.js';
import type { JsonObject } from './target.js';
import { readsAlso } from '../output/output-path.js';

export type JsonSchemaType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'null';

export interface ToolDefinition {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: JsonObject;
    strict?: boolean;
  };
}

/** Per tool name: which argument names and value types the recorded calls used. */
interface ToolObservations {
  /** Distinct calls seen (see `callKey`). */
  calls: Set<string>;
  /** Argument name → types seen. */
  types: Map<string, Set<JsonSchemaType>>;
  /** Argument name → in how many distinct calls it was present. */
  presence: Map<string, number>;
}

type ArgumentTypes = [name: string, type: JsonSchemaType][];

/**
 * What inference takes of each tool call in the assistant turns, one short text per call:
 * its name, its arguments' types (JSON) and what makes it distinct (its id, else its
 * arguments), a line each; the name and the JSON hold no line break. Computed where a record
 * is read (a worker thread for big trees), it crosses to the thread that infers as one
 * string, not as the call's parsed arguments, and a call seen before is not parsed again.
 */
export function toolCallFacts(messages: readonly Message[]): string[] {
  const facts: string[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls)) continue;
    for (const call of m.tool_calls) {
      const fn = isObject(call) && isObject(call.function) ? call.function : null;
      // A call no target can write (no name, or one trainers reject) describes no exported tool.
      if (fn === null || typeof fn.name !== 'string' || !TOOL_NAME_PATTERN.test(fn.name)) continue;
      // Unparseable arguments say nothing about the schema (and such calls are never exported).
      const args = parseArguments(fn.arguments);
      if (args === null) continue;
      // Calls of one agent run reappear in every later step: counted once per id, or per name and arguments when id-less.
      const key = typeof call.id === 'string' && call.id !== '' ? `id:${call.id}` : `args:${writeJson(args.value)}`;
      const types: ArgumentTypes = Object.entries(args.value).map(([arg, value]) => [arg, jsonSchemaType(value)]);
      facts.push(`${fn.name}\n${JSON.stringify(types)}\n${key}`);
    }
  }
  return facts;
}

export class ToolInference {
  private readonly tools = new Map<string, ToolObservations>();
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
      const name = text.slice(0, nameEnd);
      const key = text.slice(typesEnd + 1);
      this.built.clear();
      let tool = this.tools.get(name);
      if (tool === undefined) {
        tool = { calls: new Set(), types: new Map(), presence: new Map() };
        this.tools.set(name, tool);
      }
      if (tool.calls.has(key)) continue;
      tool.calls.add(key);
      for (const [arg, type] of JSON.parse(text.slice(nameEnd + 1, typesEnd)) as ArgumentTypes) {
        let types = tool.types.get(arg);
        if (types === undefined) {
          types = new Set();
          tool.types.set(arg, types);
        }
        types.add(type);
        tool.presence.set(arg, (tool.presence.get(arg) ?? 0) + 1);
      }
    }
  }

  /** Names of the tools seen, sorted. */
  names(): string[] {
    return [...this.tools.keys()].sort();
  }

  /** One definition per tool name seen, sorted by name; properties and `required` sorted too. */
  definitions(): ToolDefinition[] {
    return [...this.tools.keys()].sort().map((name) => this.definition(name)!);
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
    const tool = this.tools.get(name);
    if (tool === undefined) return undefined;
    const n = tool.calls.size;
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

/** A number is an integer when written as one: `153133.0` and `1e3` were recorded as numbers. */
export function jsonSchemaType(value: unknown): JsonSchemaType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (value instanceof String) return isIntegerText(value.valueOf()) ? 'integer' : 'number';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    default:
      return 'object';
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
  readsAlso(path);
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

export interface ExampleTools {
  definitions: ToolDefinition[];
  /** Names whose definition was inferred rather than supplied, sorted. */
  inferred: string[];
}

/**
 * The definitions an example carries. With a supplied file, all its tools
 * (it lists what the model was offered), in file order, followed by inferred
 * definitions of called tools the file lacks. Without one, the inferred
 * definitions of the tools the example calls, and only those: inference knows
 * nothing of what else was offered. An example calling no tool carries none.
 */
export function toolsFor(
  toolNames: readonly string[],
  supplied: readonly ToolDefinition[],
  inferred: ToolInference | readonly ToolDefinition[],
): ExampleTools {
  if (toolNames.length === 0) return { definitions: [], inferred: [] };
  const suppliedNames = new Set(supplied.map((d) => d.function.name));
  const missing = [...new Set(toolNames)].filter((n) => !suppliedNames.has(n)).sort();
  const lookup = (name: string): ToolDefinition =>
    (inferred instanceof ToolInference
      ? inferred.definition(name)
      : inferred.find((d) => d.function.name === name)) ?? bareDefinition(name);
  return { definitions: [...supplied, ...missing.map(lookup)], inferred: missing };
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
