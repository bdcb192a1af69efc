/**
 * `sts`: the Hugging Face Hub's Session Traces Format (docs/hub/session-traces-format.md), one
 * session per `.jsonl` file, which the Hub's trace viewer shows. Each example becomes a session:
 * a header `{"type":"session","harness":"traces","id","name"}` (the name: the start of its first
 * user message; `tools`, extra metadata the format allows, holds the example's tool definitions),
 * then one `{"type":"message","message":{role, content, reasoningContent?, toolCalls?,
 * toolCallId?}}` line per message, `arguments` as JSON text.
 *
 * The export writes examples as every target does (checked line by line as chat rows), then
 * `finish` writes each as `<dataset>/<train|validation>/<id>.jsonl` (the id: a hash of the
 * example, so the same example is the same file) and discards the rows; `traces validate` takes
 * a session file or a folder of them. Content is text: parts are joined (the format has no
 * images), and `weight` has no place (no `--train-on last`).
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseJsonText, writeJson } from '../../canonical/json-value.js';
import type { Message } from '../../record.js';
import { checkLine, type LineRules } from '../line-checks.js';
import { chatProjection, isObject } from '../messages.js';
import { resolveReasoning, type FinishContext, type JsonObject, type ProjectOptions, type Projection, type Target, type ToolDefinition, type ValidationError, type ValidationReport } from '../target.js';
import { fileLines, LineTooLong, validateFile } from '../validate.js';

const ROW_RULES: LineRules = {
  roles: ['system', 'user', 'assistant', 'tool'],
  messageKeys: {
    system: ['role', 'content'],
    user: ['role', 'content'],
    assistant: ['role', 'content', 'reasoning_content', 'tool_calls'],
    tool: ['role', 'content', 'tool_call_id'],
  },
  unknownMessageKey: 'error',
  topLevelKeys: ['messages', 'tools'],
  unknownTopLevelKey: 'error',
  content: 'nemo',
  argumentsForm: 'string',
  callNeedsIdAndType: true,
  reasoningKey: 'reasoning_content',
  lastMustBeAssistant: 'error',
  contentExcludesReasoning: false,
  completeToolDefinitions: false,
  specialToken: 'warning',
};

const ROLES = ['user', 'assistant', 'system', 'tool'];
const MESSAGE_KEYS = new Set(['role', 'content', 'reasoningContent', 'toolCalls', 'toolCallId', 'timestamp', 'model']);
const NAME_CHARS = 80;

/** Content as the format's text: a string as it is, the text of parts joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.filter(isObject).map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
  return content === null || content === undefined ? '' : writeJson(content);
}

/** The session lines of one written row (`{messages, tools?}`). */
export function sessionLines(row: JsonObject, rowText: string): { id: string; lines: string[] } {
  const id = createHash('sha256').update(rowText).digest('hex').slice(0, 32);
  const messages = (Array.isArray(row.messages) ? row.messages : []).filter(isObject);
  // A harness's own preamble (Codex's `<environment_context>`) is no title: the first turn the user wrote is.
  const users = messages.filter((m) => m.role === 'user');
  const firstUser = users.find((m) => !textOf(m.content).trimStart().startsWith('<')) ?? users[0];
  const name = firstUser === undefined ? null : textOf(firstUser.content).trim().split('\n')[0].slice(0, NAME_CHARS);
  const header: JsonObject = { type: 'session', harness: 'traces', id, ...(name ? { name } : {}) };
  if (Array.isArray(row.tools) && row.tools.length > 0) header.tools = row.tools;
  const lines = [writeJson(header)];
  for (const m of messages) {
    const message: JsonObject = { role: m.role, content: textOf(m.content) };
    if (typeof m.reasoning_content === 'string' && m.reasoning_content !== '') message.reasoningContent = m.reasoning_content;
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      message.toolCalls = m.tool_calls.filter(isObject).map((call) => {
        const fn = isObject(call.function) ? call.function : {};
        return { id: call.id, function: { name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : writeJson(fn.arguments ?? {}) } };
      });
    }
    if (m.role === 'tool' && typeof m.tool_call_id === 'string') message.toolCallId = m.tool_call_id;
    lines.push(writeJson({ type: 'message', message }));
  }
  return { id, lines };
}

/** Checks one line of a session file: the header (`type` session) or a message; where the header stands is `headerProblem`'s. */
export function checkSessionLine(value: unknown, lineNo: number): ValidationError[] {
  const error = (message: string): ValidationError[] => [{ code: 'message_missing_key', severity: 'error', line: lineNo, message }];
  if (!isObject(value)) return [{ code: 'data_type', severity: 'error', line: lineNo, message: 'a line is a JSON object' }];
  if (value.type === 'session') {
    for (const key of ['harness', 'id']) if (typeof value[key] !== 'string' || value[key] === '') return error(`the session header needs "${key}" (a non-empty string)`);
    if (value.name !== undefined && typeof value.name !== 'string') return error('the header\'s "name" is a string');
    return [];
  }
  if (value.type !== 'message') return [{ code: 'top_level_key', severity: 'warning', line: lineNo, message: `a line of type ${JSON.stringify(value.type)}: the viewer reads the header and "message" lines only` }];
  const message = value.message;
  if (!isObject(message)) return error('a message line needs "message" (an object)');
  if (typeof message.role !== 'string' || !ROLES.includes(message.role)) return [{ code: 'unrecognized_role', severity: 'error', line: lineNo, message: `"role" must be one of ${ROLES.join(', ')}` }];
  if (typeof message.content !== 'string') return [{ code: 'missing_content', severity: 'error', line: lineNo, message: '"content" is text (may be empty)' }];
  const out: ValidationError[] = [];
  for (const key of Object.keys(message)) {
    if (!MESSAGE_KEYS.has(key)) out.push({ code: 'message_unrecognized_key', severity: 'warning', line: lineNo, message: `"${key}" is no key of the format's message` });
  }
  if (message.reasoningContent !== undefined && typeof message.reasoningContent !== 'string') out.push({ code: 'reasoning_not_string', severity: 'error', line: lineNo, message: '"reasoningContent" is text' });
  if (message.toolCalls !== undefined) {
    const calls = Array.isArray(message.toolCalls) ? message.toolCalls : null;
    if (calls === null || calls.some((c) => !isObject(c) || typeof c.id !== 'string' || !isObject(c.function) || typeof c.function.name !== 'string' || typeof c.function.arguments !== 'string')) {
      out.push({ code: 'tool_call_malformed', severity: 'error', line: lineNo, message: '"toolCalls" is a list of {id, function: {name, arguments}}, arguments a JSON string' });
    }
  }
  if (message.role === 'tool' && typeof message.toolCallId !== 'string') out.push({ code: 'tool_missing_tool_call_id', severity: 'error', line: lineNo, message: 'a tool message needs "toolCallId"' });
  if (message.timestamp !== undefined && typeof message.timestamp !== 'number' && !(message.timestamp instanceof String)) out.push({ code: 'data_type', severity: 'error', line: lineNo, message: '"timestamp" is epoch milliseconds' });
  return out;
}

/** Why a session file's first line is not its header, or null. */
export function headerProblem(firstLine: Buffer | null): string | null {
  if (firstLine === null) return 'an empty file: a session file starts with its header line';
  try {
    const value = parseJsonText(firstLine);
    return isObject(value) && value.type === 'session' ? null : 'the first line is not the session header ({"type":"session","harness","id"})';
  } catch {
    return 'the first line is not JSON';
  }
}

/** Writes each example of each written file as a session file, then discards the rows. */
async function writeSessions(context: FinishContext): Promise<void> {
  // The export writes an example once, but two shards' equal rows would name one file twice.
  const written = new Set<string>();
  for (const finished of context.files) {
    const split = finished.split === 'training' ? 'train' : 'validation';
    for await (const line of fileLines(finished.file.tempPath)) {
      if (line instanceof LineTooLong || line.length === 0) continue;
      const text = line.toString('utf8');
      const { id, lines } = sessionLines(parseJsonText(text) as JsonObject, text);
      const relative = path.join(finished.dataset, split, `${id}.jsonl`);
      if (written.has(relative)) continue;
      written.add(relative);
      const out = context.output.create(relative);
      for (const sessionLine of lines) out.writeJsonLine(sessionLine);
    }
    context.output.discard(finished.file);
  }
}

/** The session files of a folder, at any depth, validated one by one. */
async function validateSessions(dir: string): Promise<ValidationReport[]> {
  const reports: ValidationReport[] = [];
  const visit = async (folder: string): Promise<void> => {
    for (const name of readdirSync(folder).sort()) {
      if (name.startsWith('.') || name === '_traces') continue;
      const full = path.join(folder, name);
      if (statSync(full).isDirectory()) await visit(full);
      else if (name.endsWith('.jsonl')) {
        const report = await validateFile(full, stsTarget, { tokenLimit: Number.MAX_SAFE_INTEGER });
        let first: Buffer | null = null;
        for await (const line of fileLines(full)) {
          first = line instanceof LineTooLong ? Buffer.from('') : line;
          break;
        }
        const problem = headerProblem(first);
        if (problem !== null) {
          report.errors.unshift({ code: 'data_type', severity: 'error', count: 1, lines: [1], message: problem });
          report.linesWithErrors++;
          report.ok = false;
        }
        reports.push(report);
      }
    }
  };
  await visit(dir);
  return reports;
}

export const stsTarget: Target = {
  name: 'sts',
  description: "the Hugging Face Hub's Session Traces Format: a session per .jsonl file, shown in the Hub's trace viewer",
  reasoningModes: ['keep', 'drop'],
  defaultReasoning: 'keep',
  minExamples: 0,
  rejectsEmptyValidation: true,
  noEmptyValidation: 'a split is a folder of session files: none rather than an empty one',
  trainOnLastRefusal: 'the Session Traces Format has no per-turn weight',

  project(messages: Message[], opts?: ProjectOptions): Projection {
    return chatProjection(messages, resolveReasoning(this, opts));
  },

  attachTools(example: JsonObject, tools: ToolDefinition[]): JsonObject {
    return tools.length === 0 ? example : { ...example, tools };
  },

  nextSteps: ({ training }) => (training.length === 0 ? [] : [`next: upload ${path.dirname(training[0])} (its train/ and validation/ session files) to a Hub dataset or bucket: the trace viewer shows each session`]),

  validateLine(value: unknown, lineNo: number): ValidationError[] {
    // A session file's line (the format), or an export's row before `finish` makes it one.
    if (isObject(value) && typeof value.type === 'string') return checkSessionLine(value, lineNo);
    return checkLine(ROW_RULES, value, lineNo);
  },

  validateFolder: (dir) => validateSessions(dir),

  finish: writeSessions,
};
