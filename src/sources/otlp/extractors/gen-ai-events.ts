/**
 * The GenAI content as span events (or as log records seeded into the bag as events, see
 * bag.ts): `gen_ai.{system,user,assistant,tool}.message` and `gen_ai.choice`, or the older
 * `gen_ai.content.prompt` / `gen_ai.content.completion` (a JSON list of messages, as Semantic
 * Kernel writes, or the plain text, as Spring AI does). An event's body is its attributes (span
 * events carry no body), or a JSON body in `gen_ai.event.content` / `body`. Read only for what
 * the attributes did not hold: a span holding the call both ways is read once, from its attributes.
 */
import type { Message } from '../../../record.js';
import { isObject, type Json } from '../../json-values.js';
import type { CallFields, Extractor } from '../call.js';
import { attributeMap, type Attributes } from '../values.js';
import { chatMessages, message, structuredQuiet, text, toolCall } from '../shapes.js';

const EVENT_ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

function isContentEvent(name: unknown): boolean {
  return typeof name === 'string' && (name in EVENT_ROLES || name === 'gen_ai.choice' || name === 'gen_ai.content.prompt' || name === 'gen_ai.content.completion');
}

function eventBody(event: Attributes): Json {
  const embedded = event.get('gen_ai.event.content') ?? event.get('body');
  const parsed = typeof embedded === 'string' ? structuredQuiet(embedded) : embedded;
  if (isObject(parsed)) return parsed;
  return event.toObject();
}

function eventMessage(role: string, body: Json): Message {
  const calls = Array.isArray(body.tool_calls)
    ? body.tool_calls.filter(isObject).map((c) => toolCall(c.id, isObject(c.function) ? c.function.name : c.name, isObject(c.function) ? c.function.arguments : c.arguments))
    : [];
  const content = body.content;
  const parts = typeof content === 'string' ? [content] : Array.isArray(content) ? content.map((p) => (isObject(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : p)) : [];
  return message(text(body.role) ?? role, parts, calls, role === 'tool' ? (text(body.id) ?? text(body.tool_call_id)) : null);
}

export const genAiEvents: Extractor = {
  name: 'gen_ai-events',
  recognize(bag) {
    for (const e of bag.events()) if (e !== null && isContentEvent(e.name)) return 'call';
    return null;
  },
  extract(bag, call) {
    const inputs: Message[] = [];
    let completion: Message | null = null;
    let finish: string | null = null;
    let olderPrompt: unknown = undefined;
    let olderCompletion: unknown = undefined;
    const events = bag.events();
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      if (e === null || !isContentEvent(e.name)) continue;
      const name = e.name as string;
      const attrs = attributeMap(e.attributes);
      if (name in EVENT_ROLES) {
        if (call.inputs === null) inputs.push(eventMessage(EVENT_ROLES[name], eventBody(attrs)));
      } else if (name === 'gen_ai.choice') {
        if (call.completion === null && completion === null) {
          const body = eventBody(attrs);
          const msg = isObject(body.message) ? body.message : body;
          completion = eventMessage('assistant', { ...msg, role: 'assistant' });
          finish = text(body.finish_reason);
        }
      } else if (name === 'gen_ai.content.prompt' && typeof attrs.get('gen_ai.prompt') === 'string') olderPrompt = structuredQuiet(attrs.str('gen_ai.prompt')!);
      else if (name === 'gen_ai.content.completion' && typeof attrs.get('gen_ai.completion') === 'string') olderCompletion = structuredQuiet(attrs.str('gen_ai.completion')!);
      bag.takeEvent(i);
    }
    if (call.inputs === null && inputs.length === 0) {
      if (Array.isArray(olderPrompt)) inputs.push(...chatMessages(olderPrompt));
      else if (typeof olderPrompt === 'string') inputs.push({ role: 'user', content: olderPrompt });
    }
    if (call.completion === null && completion === null) {
      if (Array.isArray(olderCompletion)) completion = chatMessages(olderCompletion)[0] ?? null;
      else if (typeof olderCompletion === 'string') completion = { role: 'assistant', content: olderCompletion };
    }
    const out: CallFields = { inputs: inputs.length > 0 ? inputs : null, completion };
    if (completion !== null) out.finishReason = finish;
    return out;
  },
};
