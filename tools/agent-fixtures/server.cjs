/*
 * A fake model server on 127.0.0.1 for the coding agents (Claude Code, Codex CLI, pi): it speaks
 * Anthropic's Messages API (SSE), OpenAI's Responses API (SSE) and Chat Completions (SSE), and
 * plays a scenario told by a marker in the user's first words:
 *
 * - `SCENARIO tools`: the first call gets two tool calls at once (parallel), the next one (tool
 *   results in) a final answer;
 * - `SCENARIO retry`: the first call of the scenario gets HTTP 500 (529 for Anthropic, which
 *   the agents retry), the retry an answer;
 * - `SCENARIO fail`: every call of the scenario gets HTTP 400, which no agent retries;
 * - `SCENARIO cut`: an answer cut at the token limit (`max_tokens`, `length`, `incomplete`);
 * - anything else (a resumed session's next turn, side calls such as titles): a short answer.
 *
 * Every request and what was answered is appended to the log file (one JSON line each), so the
 * fixtures' tests can compare what the session kept with what went over the wire.
 */
'use strict';
const http = require('node:http');
const fs = require('node:fs');

const LOG = process.env.FAKE_LOG || 'server-log.jsonl';
const failedOnce = new Set();

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : p.text ?? p.input_text ?? '')).join('\n');
  return '';
}

/** The conversation's user texts and whether the last turn is a tool result, across the three APIs. */
function facts(path, body) {
  const users = [];
  let lastIsToolResult = false;
  let toolNames = [];
  if (path.includes('/messages')) {
    for (const m of body.messages ?? []) {
      if (m.role === 'user') {
        const parts = Array.isArray(m.content) ? m.content : [{ type: 'text', text: m.content }];
        const results = parts.filter((p) => p.type === 'tool_result');
        lastIsToolResult = results.length > 0;
        const text = parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
        if (text) users.push(text);
      } else lastIsToolResult = false;
    }
    toolNames = (body.tools ?? []).map((t) => t.name);
  } else if (path.includes('/responses')) {
    const input = Array.isArray(body.input) ? body.input : [{ role: 'user', content: body.input }];
    for (const item of input) {
      if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output' || item.type === 'local_shell_call_output') lastIsToolResult = true;
      else if (item.role === 'user') {
        users.push(textOf(item.content));
        lastIsToolResult = false;
      } else if (item.role === 'assistant' || item.type === 'function_call' || item.type === 'reasoning') lastIsToolResult = lastIsToolResult && item.type !== 'message';
    }
    toolNames = (body.tools ?? []).map((t) => t.name ?? t.type);
  } else {
    for (const m of body.messages ?? []) {
      if (m.role === 'user') {
        users.push(textOf(m.content));
        lastIsToolResult = false;
      } else if (m.role === 'tool') lastIsToolResult = true;
      else if (m.role === 'assistant') lastIsToolResult = false;
    }
    toolNames = (body.tools ?? []).map((t) => t.function?.name ?? t.name);
  }
  const scenarioText = users.find((u) => u.includes('SCENARIO ')) ?? '';
  const scenario = /SCENARIO (\w+)/.exec(scenarioText)?.[1] ?? null;
  const lastUser = users.at(-1) ?? '';
  return { users, lastUser, lastIsToolResult, toolNames, scenario };
}

/** Two calls the agent can run without asking: a listing and a file read, in its own tools' words. */
function parallelCalls(toolNames) {
  const has = (n) => toolNames.includes(n);
  if (has('Read')) return [['Read', { file_path: `${process.env.FAKE_PROJECT}/README.md` }], ['Read', { file_path: `${process.env.FAKE_PROJECT}/main.py` }]];
  if (has('read') && has('ls')) return [['ls', { path: '.' }], ['read', { path: 'README.md' }]];
  if (has('read') && has('bash')) return [['bash', { command: 'ls' }], ['read', { path: 'README.md' }]];
  if (has('exec_command')) return [['exec_command', { cmd: 'ls' }], ['exec_command', { cmd: 'cat README.md' }]];
  if (has('shell')) return [['shell', { command: ['bash', '-lc', 'ls'] }], ['shell', { command: ['bash', '-lc', 'cat README.md'] }]];
  if (has('shell_command')) return [['shell_command', { command: 'ls' }], ['shell_command', { command: 'cat README.md' }]];
  return [];
}

/** What to answer: {status} for a failure, else {text, calls, cut}. */
function plan(path, body) {
  const f = facts(path, body);
  const key = `${path}|${f.scenario}|${f.users.length}`;
  const sideCall = f.scenario === null || !f.users.some((u) => u.includes('SCENARIO ')) || (body.tools ?? []).length === 0;
  // A failure no retry mends (400): the agent gives up and says so in the session.
  if (f.scenario === 'fail' && !sideCall) return { status: 400 };
  if (f.scenario === 'retry' && !sideCall && !failedOnce.has(key)) {
    failedOnce.add(key);
    return { status: path.includes('/messages') ? 529 : 500 };
  }
  if (f.scenario === 'tools' && !sideCall && !f.lastIsToolResult && f.lastUser.includes('SCENARIO')) {
    const calls = parallelCalls(f.toolNames);
    if (calls.length > 0) return { text: 'Let me look at the project first.', calls, cut: false };
  }
  if (f.scenario === 'tools' && f.lastIsToolResult) return { text: 'The project has a README describing a demo; nothing else is there yet.', calls: [], cut: false };
  if (f.scenario === 'cut' && !sideCall && f.lastUser.includes('SCENARIO')) return { text: 'Here is a long explanation of the project, which goes on and on until the', calls: [], cut: true };
  if (f.scenario === 'retry' && !sideCall) return { text: 'It worked on the second try.', calls: [], cut: false };
  if (sideCall) return { text: 'Demo project question', calls: [], cut: false };
  return { text: `You said: ${f.lastUser.slice(0, 60)}`, calls: [], cut: false };
}

let counter = 0;
const id = (prefix) => `${prefix}${String(++counter).padStart(6, '0')}`;

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const lines = [];
  for (const [event, data] of events) {
    const text = `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
    res.write(text);
    lines.push(text);
  }
  res.end();
  return lines.join('');
}

function anthropic(res, body, p) {
  const msgId = id('msg_fake');
  const usage = { input_tokens: 120, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const events = [['message_start', { type: 'message_start', message: { id: msgId, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } }]];
  let index = 0;
  if (p.text) {
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
    events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p.text } }]);
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    index++;
  }
  for (const [name, args] of p.calls) {
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: id('toolu_fake'), name, input: {} } }]);
    events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(args) } }]);
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    index++;
  }
  const stop = p.cut ? 'max_tokens' : p.calls.length > 0 ? 'tool_use' : 'end_turn';
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 17 } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  if (body.stream === false || body.stream === undefined) {
    const content = [];
    if (p.text) content.push({ type: 'text', text: p.text });
    for (const [name, args] of p.calls) content.push({ type: 'tool_use', id: id('toolu_fake'), name, input: args });
    const message = { id: msgId, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stop, stop_sequence: null, usage: { ...usage, output_tokens: 17 } };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(message));
    return message;
  }
  return sse(res, events);
}

function responses(res, body, p) {
  const respId = id('resp_fake');
  const output = [];
  if (p.text) output.push({ type: 'message', id: id('msg_fake'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: p.text, annotations: [] }] });
  for (const [name, args] of p.calls) output.push({ type: 'function_call', id: id('fc_fake'), call_id: id('call_fake'), name, arguments: JSON.stringify(args), status: 'completed' });
  const usage = { input_tokens: 130, input_tokens_details: { cached_tokens: 0 }, output_tokens: 19, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 149 };
  const base = { id: respId, object: 'response', created_at: Math.floor(Date.now() / 1000), model: body.model, output: [] };
  const events = [['response.created', { type: 'response.created', response: { ...base, status: 'in_progress' } }]];
  output.forEach((item, output_index) => {
    events.push(['response.output_item.added', { type: 'response.output_item.added', output_index, item: item.type === 'message' ? { ...item, content: [], status: 'in_progress' } : { ...item, arguments: '', status: 'in_progress' } }]);
    if (item.type === 'message') {
      events.push(['response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index, content_index: 0, delta: item.content[0].text }]);
    } else {
      events.push(['response.function_call_arguments.delta', { type: 'response.function_call_arguments.delta', item_id: item.id, output_index, delta: item.arguments }]);
    }
    events.push(['response.output_item.done', { type: 'response.output_item.done', output_index, item }]);
  });
  if (p.cut) events.push(['response.incomplete', { type: 'response.incomplete', response: { ...base, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output, usage } }]);
  else events.push(['response.completed', { type: 'response.completed', response: { ...base, status: 'completed', output, usage } }]);
  return sse(res, events);
}

function chat(res, body, p) {
  const chatId = id('chatcmpl-fake');
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta, finish_reason = null, extra = {}) => ({ id: chatId, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason }], ...extra });
  const events = [[null, chunk({ role: 'assistant', content: '' })]];
  if (p.text) events.push([null, chunk({ content: p.text })]);
  p.calls.forEach(([name, args], index) => {
    events.push([null, chunk({ tool_calls: [{ index, id: id('call_fake'), type: 'function', function: { name, arguments: '' } }] })]);
    events.push([null, chunk({ tool_calls: [{ index, function: { arguments: JSON.stringify(args) } }] })]);
  });
  const finish = p.cut ? 'length' : p.calls.length > 0 ? 'tool_calls' : 'stop';
  events.push([null, chunk({}, finish)]);
  events.push([null, { id: chatId, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage: { prompt_tokens: 110, completion_tokens: 15, total_tokens: 125 } }]);
  events.push([null, '[DONE]']);
  return sse(res, events);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = null;
    }
    const entry = { at: new Date().toISOString(), method: req.method, path: req.url, body };
    let answered;
    const p = req.method === 'POST' && body ? plan(req.url, body) : null;
    if (p === null) {
      // Model lists and anything else an agent asks on start.
      const payload = req.url.includes('models') ? { object: 'list', data: [], models: [] } : {};
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
      answered = payload;
    } else if (p.status) {
      const error =
        p.status === 400
          ? req.url.includes('/messages')
            ? { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }
            : { error: { message: 'This model maximum context length is 128000 tokens.', type: 'invalid_request_error', code: 'context_length_exceeded' } }
          : req.url.includes('/messages')
            ? { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }
            : { error: { message: 'The server had an error while processing your request.', type: 'server_error' } };
      res.writeHead(p.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(error));
      answered = { status: p.status, error };
    } else if (req.url.includes('count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 100 }));
      answered = { input_tokens: 100 };
    } else if (req.url.includes('/messages')) answered = anthropic(res, body, p);
    else if (req.url.includes('/responses')) answered = responses(res, body, p);
    else answered = chat(res, body, p);
    entry.answered = answered;
    fs.appendFileSync(LOG, JSON.stringify(entry) + '\n');
  });
});

server.listen(Number(process.env.FAKE_PORT || 0), '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
