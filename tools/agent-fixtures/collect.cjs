/*
 * Copies the sessions generate.sh made under FAKE_HOME into test/fixtures/<kind>/ (as the agent
 * laid them out below its hidden folder), and a condensed server log beside them: per request,
 * its path, model, system prompt and tool names, its messages' roles and texts, and what was
 * answered (status, text, tool calls, stop reason), so tests compare the sessions with the wire.
 *
 *   node tools/agent-fixtures/collect.cjs /home/dev test/fixtures
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const [home, fixtures] = process.argv.slice(2);
const AGENTS = [
  ['claude-code', '.claude/projects', 'claude-server-log.jsonl'],
  ['codex', '.codex/sessions', 'codex-server-log.jsonl'],
  ['pi', '.pi/agent/sessions', 'pi-server-log.jsonl'],
];

function copyTree(from, to) {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(src, dst);
    else if (entry.name.endsWith('.jsonl')) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(src, dst);
    }
  }
}

const text = (c) => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => (typeof p === 'string' ? p : p.text ?? (p.type === 'tool_result' ? `[tool_result ${p.tool_use_id}] ${text(p.content)}` : p.type === 'tool_use' ? `[tool_use ${p.id} ${p.name}]` : `[${p.type}]`))).join('\n') : '');

/** A text's start and end: Claude Code puts its reminders before the user's words. */
const clip = (t) => (t.length <= 400 ? t : `${t.slice(0, 200)} … ${t.slice(-200)}`);

function answeredOf(answered) {
  if (answered && answered.status) return { status: answered.status, error: answered.error };
  if (typeof answered !== 'string') return { status: 200, body: answered };
  let out = '';
  const calls = [];
  let stop = null;
  for (const block of answered.split('\n\n')) {
    const data = block.split('\n').find((l) => l.startsWith('data: '));
    if (!data || data === 'data: [DONE]') continue;
    const e = JSON.parse(data.slice(6));
    if (e.type === 'content_block_delta' && e.delta.text) out += e.delta.text;
    if (e.type === 'content_block_start' && e.content_block.type === 'tool_use') calls.push(e.content_block.name);
    if (e.type === 'message_delta') stop = e.delta.stop_reason;
    if (e.type === 'response.output_text.delta') out += e.delta;
    if (e.type === 'response.output_item.done' && e.item.type === 'function_call') calls.push(e.item.name);
    if (e.type === 'response.completed') stop = 'completed';
    if (e.type === 'response.incomplete') stop = e.response.incomplete_details.reason;
    if (e.choices && e.choices[0]) {
      const d = e.choices[0].delta || {};
      if (d.content) out += d.content;
      for (const c of d.tool_calls || []) if (c.function && c.function.name) calls.push(c.function.name);
      if (e.choices[0].finish_reason) stop = e.choices[0].finish_reason;
    }
  }
  return { status: 200, text: out, calls, stop };
}

for (const [kind, folder, log] of AGENTS) {
  const from = path.join(home, folder);
  if (!fs.existsSync(from)) continue;
  const to = path.join(fixtures, kind);
  copyTree(from, path.join(to, folder));
  const lines = [];
  for (const line of fs.readFileSync(path.join(home, log), 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line);
    const b = e.body;
    if (!b || e.method !== 'POST') continue;
    const system = typeof b.system === 'string' ? b.system : Array.isArray(b.system) ? b.system.map((s) => s.text).join('\n') : (b.instructions ?? (b.messages || b.input || []).filter((m) => m.role === 'system' || m.role === 'developer').map((m) => text(m.content)).join('\n'));
    const messages = (b.messages || b.input || []).map((m) => ({ role: m.role ?? m.type, text: clip(text(m.content ?? m.output ?? m.arguments ?? '')) }));
    lines.push(JSON.stringify({ path: e.path, model: b.model, system_chars: (system || '').length, tools: (b.tools || []).map((t) => t.name ?? t.function?.name ?? t.type), messages, answered: answeredOf(e.answered) }));
  }
  fs.writeFileSync(path.join(to, 'server-log.jsonl'), lines.join('\n') + '\n');
}
