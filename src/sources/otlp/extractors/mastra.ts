/**
 * Mastra (`@mastra/core` agents with `@mastra/otel-exporter`): `mastra.span.type`
 * `model_inference` (a `chat <model>` span) is the LLM call; every other Mastra span (agent_run,
 * model_step, model_generation, model_chunk, tool_call) is none. The chat span keeps the answer
 * and usage as GenAI attributes (gen-ai.ts reads them) but not the input: that is on the step
 * span above it (`mastra.model_step.input`, a chat message list), the tool calls it asked for
 * in the step's `mastra.model_step.output` (`toolCalls: [{toolCallId, toolName, args}]`), and
 * the results on the `execute_tool` spans below the step (`gen_ai.tool.call.id|name|arguments|result`).
 *
 * A later step's input does not hold the earlier tool calls and results, only summaries
 * (`[tool: get_weather]`, `[tool-result: get_weather]`): each summary is replaced by the calls
 * of the earlier step of the same run it stands for and the results of that step's tool spans,
 * in order. Where they are not in the input set the input is unreadable, never a summary
 * passed off as what the model was sent.
 *
 * The step and tool spans are found through join-index.ts (`MASTRA_SPANS`, by trace) and
 * seeded into the chat span's bag (`seedMastra`) before the chain runs.
 */
import type { Message, ToolCall } from '../../../record.js';
import { isObject, type Json } from '../../json-values.js';
import type { SpanBag } from '../bag.js';
import type { CallFields, Extractor } from '../call.js';
import type { JoinIndex, JoinReader, Joined } from '../join-index.js';
import { JOIN_KINDS } from '../join-kinds.js';
import { chatMessages, message, structuredQuiet, text, toolCall, toolText } from '../shapes.js';
import { numberValue } from '../../../canonical/json-value.js';
import { attributeMap, hexId } from '../values.js';

const TYPE = 'mastra.span.type';
const STEP_INPUT = 'mastra.model_step.input';
const STEP_OUTPUT = 'mastra.model_step.output';
/** Seeded: the earlier steps of the run, `[{output, tools: [{id, result}]}]`, oldest first. */
const EARLIER = 'mastra.model_step.earlier';
/** Every span of a trace is indexed under the trace alone. */
const ANY_SPAN = '0'.repeat(16);

/** Mastra's step and tool spans of one ExportTraceServiceRequest, under their trace. */
function* stepAndToolSpans(doc: unknown): Generator<Joined> {
  if (!isObject(doc)) return;
  const list = doc.resourceSpans ?? doc.resource_spans;
  if (!Array.isArray(list)) return;
  for (const rs of list) {
    const scopes = isObject(rs) ? (rs.scopeSpans ?? rs.scope_spans) : null;
    if (!Array.isArray(scopes)) continue;
    for (const ss of scopes) {
      if (!isObject(ss) || !Array.isArray(ss.spans)) continue;
      for (const span of ss.spans) {
        if (!isObject(span)) continue;
        const type = attributeMap(span.attributes).str(TYPE);
        const traceId = hexId(span.traceId ?? span.trace_id);
        if ((type === 'model_step' || type === 'tool_call') && traceId !== null) yield { traceId, spanId: ANY_SPAN, record: span };
      }
    }
  }
}

export const MASTRA_SPANS: JoinReader = { ...JOIN_KINDS.find((k) => k.name === 'mastra')!, recordsOf: stepAndToolSpans };

interface Related {
  spanId: string;
  parentSpanId: string | null;
  attrs: Map<string, unknown>;
}

function related(span: Json): Related {
  return { spanId: hexId(span.spanId ?? span.span_id) ?? '', parentSpanId: hexId(span.parentSpanId ?? span.parent_span_id), attrs: attributeMap(span.attributes).map };
}

function stepIndex(step: Related): number {
  const v = numberValue(step.attrs.get('mastra.model_step.step_index'));
  return typeof v === 'number' ? v : Number.NaN;
}

/** A Mastra chat span lacking its input: its step's input and output, and the earlier steps of its run with their tool results, seeded. */
export function seedMastra(bag: SpanBag, traceId: string, parentSpanId: string | null, index: JoinIndex): void {
  if (bag.peekStr(TYPE) !== 'model_inference' || bag.has('gen_ai.input.messages') || parentSpanId === null) return;
  const spans = index.recordsOf(traceId, ANY_SPAN).map(related);
  const step = spans.find((s) => s.spanId === parentSpanId && s.attrs.get(TYPE) === 'model_step');
  if (step === undefined) return;
  const earlier = spans
    .filter((s) => s.attrs.get(TYPE) === 'model_step' && s.parentSpanId === step.parentSpanId && stepIndex(s) < stepIndex(step))
    .sort((a, b) => stepIndex(a) - stepIndex(b))
    .map((s) => ({
      output: structuredQuiet(s.attrs.get(STEP_OUTPUT)),
      tools: spans.filter((t) => t.parentSpanId === s.spanId && t.attrs.get(TYPE) === 'tool_call').map((t) => ({ id: t.attrs.get('gen_ai.tool.call.id'), result: t.attrs.get('gen_ai.tool.call.result') })),
    }));
  bag.seed([
    [STEP_INPUT, step.attrs.get(STEP_INPUT)],
    [STEP_OUTPUT, step.attrs.get(STEP_OUTPUT)],
    [EARLIER, earlier],
  ]);
}

const CALLS_SUMMARY = /^(\[tool: [^\]]*\])+$/;
const RESULTS_SUMMARY = /^(\[tool-result: [^\]]*\])+$/;

function stepCalls(output: unknown): ToolCall[] {
  if (!isObject(output) || !Array.isArray(output.toolCalls)) return [];
  return output.toolCalls.filter(isObject).map((c) => toolCall(c.toolCallId, c.toolName, c.args ?? c.input));
}

/** The step's input with each summary of earlier tool calls and results replaced by them; null when one cannot be. */
function stepInput(input: unknown[], earlier: unknown): Message[] | null {
  const steps = (Array.isArray(earlier) ? earlier : []).filter(isObject).filter((s) => stepCalls(s.output).length > 0);
  const out: Message[] = [];
  let last: Json | null = null;
  for (const m of input) {
    if (!isObject(m)) continue;
    const content = typeof m.content === 'string' ? m.content : null;
    if (m.role === 'assistant' && content !== null && CALLS_SUMMARY.test(content)) {
      last = steps.shift() ?? null;
      if (last === null) return null;
      out.push(message('assistant', [text(isObject(last.output) ? last.output.text : null) ?? ''], stepCalls(last.output), null));
    } else if (m.role === 'tool' && content !== null && RESULTS_SUMMARY.test(content)) {
      if (last === null) return null;
      const results = Array.isArray(last.tools) ? last.tools.filter(isObject) : [];
      for (const call of stepCalls(last.output)) {
        const result = results.find((r) => r.id === call.id);
        if (result === undefined) return null;
        out.push({ role: 'tool', content: toolText(result.result), tool_call_id: call.id ?? '' });
      }
    } else out.push(...chatMessages([m]));
  }
  return out;
}

export const mastra: Extractor = {
  name: 'mastra',
  recognize(bag) {
    const type = bag.peekStr(TYPE);
    if (type === null) return null;
    return type === 'model_inference' ? 'call' : 'other';
  },
  extract(bag) {
    const out: CallFields = {};
    bag.take(TYPE);
    const input = bag.takeParsed(STEP_INPUT);
    const earlier = bag.take(EARLIER);
    if (Array.isArray(input)) {
      out.inputs = stepInput(input, earlier);
      if (out.inputs === null) out.unreadable = `${STEP_INPUT} summarizes earlier tool calls whose step or tool spans are not in the input set`;
    }
    const calls = stepCalls(bag.takeParsed(STEP_OUTPUT));
    if (calls.length > 0) {
      const answer = structuredQuiet(bag.peek('gen_ai.output.messages'));
      const first = Array.isArray(answer) && isObject(answer[0]) && Array.isArray(answer[0].parts) ? answer[0].parts.filter(isObject).map((p) => text(p.content) ?? '').join('') : '';
      out.completion = message('assistant', [first], calls, null);
    }
    return out;
  },
};
