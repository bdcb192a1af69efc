/**
 * MLflow spans, as MLflow's autologging and Synalinks' `Monitor` hook write them:
 * `mlflow.spanType` CHAT_MODEL or LLM (any other type is no LLM call); the request in
 * `mlflow.spanInputs` (`messages`, with `model`, `tools` and the sampling parameters, or the
 * hook's `{messages, data, kwargs}`), the response in `mlflow.spanOutputs` (`choices`, `usage`,
 * or Anthropic's message), `mlflow.llm.model` / `mlflow.llm.provider`, `mlflow.chat.tools`,
 * `mlflow.chat.tokenUsage`, `mlflow.llm.cost`, `synalinks.call_id` / `synalinks.parent_call_id`.
 */
import type { Message, Usage } from '../../../record.js';
import { isObject, num, str, type Json } from '../../json-values.js';
import type { SpanBag } from '../bag.js';
import type { Extractor } from '../call.js';
import { parseJsonAttribute } from '../values.js';
import { chatMessages, responseMessage, text, usageOf } from '../shapes.js';

/** An MLflow attribute, taken: MLflow writes every attribute value as JSON text (`"\"openai/gpt-4o\""`). */
function mlflowAttr(bag: SpanBag, key: string): unknown {
  const value = bag.peek(key);
  if (typeof value !== 'string' || !value.startsWith('"')) return bag.takeParsed(key);
  bag.take(key);
  const parsed = parseJsonAttribute(value);
  return parsed.ok ? parsed.value : value;
}

export const mlflow: Extractor = {
  name: 'mlflow',
  recognize(bag) {
    const type = bag.peek('mlflow.spanType');
    if (type === undefined) return null;
    // MLflow writes every attribute as JSON: the type is `"CHAT_MODEL"`, quotes included.
    const parsed = typeof type === 'string' && type.startsWith('"') ? parseJsonAttribute(type) : null;
    const name = parsed !== null && parsed.ok ? str(parsed.value) : str(type);
    return name === 'CHAT_MODEL' || name === 'LLM' ? 'call' : 'other';
  },
  extract(bag) {
    const inputs = bag.takeParsed('mlflow.spanInputs');
    const outputs = bag.takeParsed('mlflow.spanOutputs');
    const request = isObject(inputs) ? inputs : null;
    let messages: Message[] | null = null;
    if (request !== null && Array.isArray(request.messages)) messages = chatMessages(request.messages, request.system);
    else if (Array.isArray(inputs)) messages = chatMessages(inputs);
    let completion: Message | null = null;
    let finishReason: string | null = null;
    let usage: Usage | null = null;
    if (isObject(outputs) && Array.isArray(outputs.choices)) {
      const choice = outputs.choices.find(isObject);
      if (choice !== undefined && isObject(choice.message)) completion = chatMessages([choice.message])[0] ?? null;
      finishReason = choice !== undefined ? text(choice.finish_reason) : null;
      if (isObject(outputs.usage)) usage = usageOf(outputs.usage.prompt_tokens, outputs.usage.completion_tokens);
    } else if (isObject(outputs) && outputs.type === 'message' && Array.isArray(outputs.content)) {
      // Anthropic's Messages response (MLflow's Anthropic autologging): content blocks, stop_reason, usage.
      completion = responseMessage(outputs);
      finishReason = text(outputs.stop_reason);
      if (isObject(outputs.usage)) usage = usageOf(outputs.usage.input_tokens, outputs.usage.output_tokens, outputs.usage.cache_read_input_tokens);
    } else if (typeof outputs === 'string') completion = { role: 'assistant', content: outputs };
    const params: Json = request !== null ? { ...request } : {};
    delete params.messages;
    delete params.system;
    delete params.model;
    delete params.tools;
    const chatUsage = mlflowAttr(bag, 'mlflow.chat.tokenUsage');
    if (usage === null && isObject(chatUsage)) usage = usageOf(chatUsage.input_tokens, chatUsage.output_tokens, chatUsage.cache_read_input_tokens);
    const model = (request !== null ? text(request.model) : null) ?? text(mlflowAttr(bag, 'mlflow.llm.model')) ?? (isObject(outputs) ? text(outputs.model) : null);
    const chatTools = mlflowAttr(bag, 'mlflow.chat.tools');
    const tools = request !== null && Array.isArray(request.tools) ? request.tools : Array.isArray(chatTools) && chatTools.length > 0 ? chatTools : null;
    const cost = mlflowAttr(bag, 'mlflow.llm.cost');
    const callId = text(mlflowAttr(bag, 'synalinks.call_id'));
    const parentCallId = text(mlflowAttr(bag, 'synalinks.parent_call_id'));
    return {
      cost: isObject(cost) ? num(cost.total_cost) : null,
      ownIds: callId !== null && callId !== '' ? { callId, parentCallId: parentCallId !== null && parentCallId !== '' ? parentCallId : null } : null,
      inputs: messages,
      completion,
      tools,
      model: model === '' ? null : model,
      provider: text(mlflowAttr(bag, 'mlflow.llm.provider')),
      params,
      usage,
      finishReason,
    };
  },
};
