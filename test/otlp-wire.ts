/**
 * What the fake server of tools/otel-fixtures logged (server-log*.jsonl), and the records read
 * from the spans, in one shape each so tests compare them message for message: role, text, tool
 * calls [id, name, arguments as a value], tool_call_id; OpenAI chat, Anthropic Messages and
 * Bedrock Converse each read from their own shapes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalValueText } from '../src/canonical/canonical.js';
import type { Message } from '../src/record.js';
import { FIXTURES } from './helpers.js';

/** The entries of these server logs of test/fixtures/otel, in order. */
export function serverLog(files: readonly string[]): LogEntry[] {
  return files.flatMap((log) =>
    readFileSync(path.join(FIXTURES, 'otel', log), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l)),
  );
}

export type Json = Record<string, unknown>;

export interface LogEntry {
  emitter: string;
  scenario: string;
  status: number;
  url: string;
  request: Json & { model: string };
  response: Json;
  stream?: Json[];
}


/** Which API a logged call spoke: Anthropic's Messages (also Bedrock's InvokeModel of a Claude model), Bedrock's Converse, OpenAI chat. */
export function api(entry: LogEntry): 'anthropic' | 'converse' | 'openai' {
  if (entry.url.endsWith('/messages') || entry.url.endsWith('/invoke')) return 'anthropic';
  return entry.url.startsWith('/model/') ? 'converse' : 'openai';
}

/** A Converse block list as Anthropic-style typed blocks, so both are read alike below. */
export function converseBlocks(blocks: Json[]): Json[] {
  return blocks.map((b) => {
    if (typeof b.text === 'string') return { type: 'text', text: b.text };
    const use = b.toolUse as Json | undefined;
    if (use !== undefined) return { type: 'tool_use', id: use.toolUseId, name: use.name, input: use.input };
    const result = b.toolResult as Json | undefined;
    if (result !== undefined) return { type: 'tool_result', tool_use_id: result.toolUseId, content: converseBlocks(result.content as Json[]) };
    return b;
  });
}


/** Text blocks as one text, as the wire's text (Anthropic: a text or a list of text blocks). */
export function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  return ((content ?? []) as Json[])
    .filter((b) => b.type === 'text')
    .map((b) => b.text as string)
    .join('');
}

/** A chat message in the form both sides are compared in: role, text, tool calls [id, name, arguments as a value], tool_call_id. */
export function shape(role: string, content: unknown, calls: [unknown, unknown, unknown][], toolCallId: unknown): string {
  return canonicalValueText([role, valueOf(content ?? ''), calls.map(([id, name, args]) => [id ?? null, name, valueOf(args)]), toolCallId ?? null]);
}

export function valueOf(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    const parsed = JSON.parse(v);
    if (parsed !== null && typeof parsed === 'object') return parsed;
  } catch {
    // plain text
  }
  return v;
}

/** What went over the wire, as chat messages: a Messages API request read block by block, or an OpenAI chat request as sent. */
export function wireInputs(entry: LogEntry): string[] {
  const out: string[] = [];
  if (api(entry) !== 'openai') {
    const converse = api(entry) === 'converse';
    const system = converse && entry.request.system !== undefined ? converseBlocks(entry.request.system as Json[]) : entry.request.system;
    if (system !== undefined) out.push(shape('system', blockText(system), [], null));
    for (const m of entry.request.messages as Json[]) {
      const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : converse ? converseBlocks(m.content as Json[]) : (m.content as Json[]);
      for (const b of blocks.filter((x) => x.type === 'tool_result')) out.push(shape('tool', blockText(b.content), [], b.tool_use_id));
      const rest = blocks.filter((x) => x.type !== 'tool_result');
      if (rest.length === 0) continue;
      const calls = rest.filter((b) => b.type === 'tool_use').map((b) => [b.id, b.name, b.input] as [unknown, unknown, unknown]);
      out.push(shape(m.role as string, blockText(rest), calls, null));
    }
    return out;
  }
  for (const m of entry.request.messages as Json[]) {
    const calls = ((m.tool_calls ?? []) as { id: string; function: { name: string; arguments: string } }[]).map((c) => [c.id, c.function.name, c.function.arguments] as [unknown, unknown, unknown]);
    out.push(shape(m.role as string, m.content, calls, m.tool_call_id));
  }
  return out;
}

export function wireAnswer(entry: LogEntry): string {
  if (api(entry) !== 'openai') {
    const blocks = api(entry) === 'converse' ? converseBlocks(((entry.response.output as Json).message as Json).content as Json[]) : (entry.response.content as Json[]);
    return shape('assistant', blockText(blocks), blocks.filter((b) => b.type === 'tool_use').map((b) => [b.id, b.name, b.input]), null);
  }
  const r = entry.response as { choices?: { message: Json }[]; message?: Json };
  const m = r.choices !== undefined ? r.choices[0].message : r.message!;
  const calls = ((m.tool_calls ?? []) as { id: string; function: { name: string; arguments: string } }[]).map((c) => [c.id, c.function.name, c.function.arguments] as [unknown, unknown, unknown]);
  return shape('assistant', m.content, calls, null);
}

export function recordShape(m: Message): string {
  return shape(m.role, m.content, (m.tool_calls ?? []).map((c) => [c.id, c.function.name, c.function.arguments]), m.tool_call_id);
}


/** Finish reasons of one meaning under each emitter's name for it. */
export function finishClass(reason: string | null): string | null {
  if (reason === null) return null;
  if (['end_turn', 'stop', 'STOP'].includes(reason)) return 'stop';
  if (['tool_use', 'tool_calls', 'tool_call', 'tool-calls', 'function_call'].includes(reason)) return 'tool';
  if (['max_tokens', 'length'].includes(reason)) return 'length';
  return reason;
}

export function wireFinish(entry: LogEntry): string {
  if (api(entry) === 'anthropic') return finishClass(entry.response.stop_reason as string)!;
  if (api(entry) === 'converse') return finishClass(entry.response.stopReason as string)!;
  const r = entry.response as { choices?: { finish_reason: string }[]; finish_reason?: string };
  return finishClass(r.choices !== undefined ? r.choices[0].finish_reason : r.finish_reason!)!;
}

export function wireUsage(entry: LogEntry): [number, number] | null {
  const u = entry.response.usage as Record<string, number> | null | undefined;
  if (u === null || u === undefined) return null;
  if (api(entry) === 'converse') return [u.inputTokens, u.outputTokens];
  return api(entry) === 'anthropic' ? [u.input_tokens, u.output_tokens] : [u.prompt_tokens, u.completion_tokens];
}

/** Role and text of each shaped message: all an emitter that loses tool calls is compared on. */
export function texts(list: string[]): unknown[] {
  return list.map((s) => JSON.parse(s).slice(0, 2));
}

