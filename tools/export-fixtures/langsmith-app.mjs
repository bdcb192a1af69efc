// A LangChain.js app traced by the langsmith SDK; both the model and LangSmith are fakes on 127.0.0.1.
// Writes the run payloads the SDK sent (posts and patches, as received) to runs-sent.jsonl.
import http from 'node:http';
import { writeFileSync } from 'node:fs';

const received = [];
const ls = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (req.url === '/info') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ version: '0.10.0', batch_ingest_config: { use_multipart_endpoint: false, size_limit: 100, scale_up_qsize_trigger: 1000, scale_up_nthreads_limit: 1, scale_down_nempty_trigger: 1 }, instance_flags: {} }));
      return;
    }
    received.push({ method: req.method, url: req.url, body: body ? JSON.parse(body) : null });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});

function completion(req, body) {
  const last = body.messages[body.messages.length - 1];
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  const usage = { prompt_tokens: 31, completion_tokens: 9, total_tokens: 40 };
  if (text.includes('FAIL')) return { status: 400, json: { error: { message: 'Invalid request: the model refused the context', type: 'invalid_request_error' } } };
  if (body.tools && last.role === 'user') {
    return { json: { id: 'chatcmpl-tool', object: 'chat.completion', created: 1765000000, model: body.model, choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] } }], usage } };
  }
  if (body.max_tokens === 5) return { json: { id: 'chatcmpl-cut', object: 'chat.completion', created: 1765000001, model: body.model, choices: [{ index: 0, finish_reason: 'length', message: { role: 'assistant', content: 'The history of' } }], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } } };
  const answer = last.role === 'tool' ? 'It is 18 degrees and sunny in Paris.' : `Answer to: ${text.slice(0, 40)}`;
  return { json: { id: 'chatcmpl-ok', object: 'chat.completion', created: 1765000002, model: body.model, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: answer } }], usage } };
}

const model = http.createServer((req, res) => {
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', () => {
    const body = JSON.parse(raw);
    const answer = completion(req, body);
    if (body.stream && answer.status === undefined) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const content = answer.json.choices[0].message.content ?? '';
      const base = { id: 'chatcmpl-stream', object: 'chat.completion.chunk', created: 1765000003, model: body.model };
      for (const piece of content.match(/.{1,6}/g) ?? []) res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: answer.json.usage })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.json));
  });
});

await new Promise((r) => ls.listen(0, '127.0.0.1', r));
await new Promise((r) => model.listen(0, '127.0.0.1', r));
process.env.LANGSMITH_TRACING = 'true';
process.env.LANGSMITH_ENDPOINT = `http://127.0.0.1:${ls.address().port}`;
process.env.LANGSMITH_API_KEY = 'lsv2_pt_fake_key_for_local_server_only';
process.env.LANGSMITH_PROJECT = 'traces-fixtures';

const { ChatOpenAI } = await import('@langchain/openai');
const { ChatPromptTemplate } = await import('@langchain/core/prompts');
const { tool } = await import('@langchain/core/tools');
const { HumanMessage, SystemMessage } = await import('@langchain/core/messages');
const { awaitAllCallbacks } = await import('@langchain/core/callbacks/promises');
const { z } = await import('zod');

const base = { apiKey: 'sk-fake', configuration: { baseURL: `http://127.0.0.1:${model.address().port}/v1` }, model: 'gpt-4o-mini', temperature: 0.2, maxRetries: 0 };
const llm = new ChatOpenAI(base);

// 1. a chain: prompt | model (a chain run, a prompt run, an llm run)
const prompt = ChatPromptTemplate.fromMessages([['system', 'You are a concise assistant.'], ['human', '{question}']]);
await prompt.pipe(llm).invoke({ question: 'What is the capital of France?' });

// 2. a tool loop: the model asks for a tool, the tool runs, the model answers
const getWeather = tool(async ({ city }) => `18C and sunny in ${city}`, { name: 'get_weather', description: 'Current weather of a city', schema: z.object({ city: z.string() }) });
const { traceable } = await import('langsmith/traceable');
const withTools = llm.bindTools([getWeather]);
await traceable(async (question) => {
  const messages = [new SystemMessage('Use tools when needed.'), new HumanMessage(question)];
  const asked = await withTools.invoke(messages);
  messages.push(asked);
  for (const call of asked.tool_calls ?? []) messages.push(await getWeather.invoke(call));
  return (await withTools.invoke(messages)).content;
}, { name: 'weather-agent', run_type: 'chain' })('What is the weather in Paris?');

// 3. a streamed answer
const streaming = new ChatOpenAI({ ...base, streaming: true, streamUsage: true });
let streamed = '';
for await (const chunk of await streaming.stream('Tell me a short fact about owls.')) streamed += chunk.content;

// 4. an answer cut at max_tokens
await new ChatOpenAI({ ...base, maxTokens: 5 }).invoke('Write the history of Rome.');

// 5. a failed call
try {
  await llm.invoke('FAIL this request');
} catch {}

await awaitAllCallbacks();
await new Promise((r) => setTimeout(r, 1500));
writeFileSync('runs-sent.jsonl', received.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.log('requests', received.length, received.map((r) => `${r.method} ${r.url}`).join(', '));
ls.close();
model.close();
