/**
 * A tree of every recorder whose names are fake vendor keys, one place per key (a Synalinks
 * tree's folders, file, program, module, model, version and tool; a klieo agent, run_id, model
 * and tool; an Ask test, model and tool; OTLP service.name, span name, model and tool), so a
 * leak names the place it came from.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ANTHROPIC_KEY, fakeToken, GITHUB_PAT, GITHUB_TOKEN, GOOGLE_KEY, JWT, OPENAI_KEY, OPENAI_LEGACY_KEY, SLACK_TOKEN, STRIPE_KEY, STRIPE_TEST_KEY } from './fake-secrets.js';
import type { Planted } from './leaks.js';
import { FIXTURES, synalinksLine, tempDir } from './helpers.js';

/** Keys of the vendors' shapes the detectors know, one per place, so a leak names its place. */
export const KEYS = {
  'synalinks program': STRIPE_KEY,
  'synalinks module': GITHUB_TOKEN,
  'synalinks model': OPENAI_KEY,
  'synalinks tool': GOOGLE_KEY,
  'synalinks version': 'ghp' + '_' + fakeToken(36, 41),
  'klieo agent': SLACK_TOKEN,
  'klieo run_id': 'sk' + '_live_' + fakeToken(24, 42),
  'klieo model': STRIPE_TEST_KEY,
  'klieo tool': GITHUB_PAT,
  'ask test': ANTHROPIC_KEY,
  'ask model': 'AI' + 'za' + fakeToken(35, 43),
  'ask tool': JWT,
  'ask interaction type': 'xo' + 'xb-' + '123456789012-1234567890123-' + fakeToken(24, 47),
  'otlp service.name': OPENAI_LEGACY_KEY,
  'otlp span name': 'ghp' + '_' + fakeToken(36, 44),
  'otlp model': 'sk' + '_live_' + fakeToken(24, 45),
  'otlp tool': 'sk-' + 'proj-' + fakeToken(48, 46),
} as const;

export const PLANTED: Planted[] = Object.entries(KEYS).map(([label, text]) => ({ label, text }));

/**
 * A weather question as a Synalinks record line, answered, with a tool call when `tool` is
 * given; `refusal`: a refusal instead of the answer (its own call_id), which pairs with it.
 */
export function weatherCall(call: { index: number; program: string; module: string; tool: string | null; model?: string; refusal?: boolean }): string {
  const { index, tool, refusal = false } = call;
  const answer = refusal ? "I'm sorry, but I can't help with that request." : `{"answer":"It will be sunny, case ${index}."}`;
  const messages: object[] = [
    { role: 'system', content: 'You are a weather assistant.' },
    { role: 'user', content: `Case ${index}: what is the weather in Paris?` },
  ];
  if (tool !== null) {
    messages.push(
      { role: 'assistant', content: '', tool_calls: [{ id: `call_${index}`, type: 'function', function: { name: tool, arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: `call_${index}`, content: '{"result":"sunny"}' },
    );
  }
  messages.push({ role: 'assistant', content: answer });
  const callId = refusal ? `00000000-0000-4000-9000-${String(index).padStart(12, '0')}` : undefined;
  return synalinksLine({ index, callId, program: call.program, module: call.module, messages, outputsText: refusal ? undefined : answer, model: call.model });
}

function call(index: number, tool: string | null, refusal = false): string {
  const K = KEYS;
  const line = weatherCall({ index, program: K['synalinks program'], module: K['synalinks module'], tool, model: `openai/${K['synalinks model']}`, refusal });
  return line.replace('"synalinks_version":"0.9.014"', `"synalinks_version":"0.9.014 ${K['synalinks version']}"`);
}

/** A tree of every recorder, each naming things with keys; `tree` where to write it (default: a fresh temporary folder). */
export function plantedTree(tree = path.join(tempDir('traces-names-'), 'tree')): string {
  const K = KEYS;
  // Synalinks names its folders and files after the program and module.
  const folder = path.join(tree, 'synalinks', K['synalinks program'], K['synalinks module']);
  mkdirSync(folder, { recursive: true });
  const first = call(0, K['synalinks tool']);
  // A duplicate (a drop naming its file and kept record), a damaged line (reported with its file), another call.
  // An edited record (verify lists it with its file and call_id).
  const edited = call(3, null).replace(/"inputs_hash":"[0-9a-f]{4}/, '"inputs_hash":"0000');
  // A refusal of the prompt of call 1: a preference pair (chosen: call 1).
  const lines = [first, first, '{"call_id": ', call(1, null), call(1, null, true), call(2, K['synalinks tool']), edited];
  writeFileSync(path.join(folder, `${K['synalinks module']}_20260709-120000.jsonl`), `${lines.join('\n')}\n`);
  // A file that is no trace, listed by -v with its path.
  writeFileSync(path.join(folder, 'notes.txt'), 'not a trace\n');

  const klieo = readFileSync(path.join(FIXTURES, 'klieo', 'capture-support.json'), 'utf8')
    .replaceAll('"support"', JSON.stringify(`support ${K['klieo agent']}`))
    .replaceAll('01J9Z8CAPT', `run ${K['klieo run_id']}`)
    .replaceAll('gpt-4.1-mini', `model ${K['klieo model']}`)
    .replaceAll('lookup_order', K['klieo tool']);
  mkdirSync(path.join(tree, 'klieo'), { recursive: true });
  writeFileSync(path.join(tree, 'klieo', 'capture.json'), klieo);

  const ask = readFileSync(path.join(FIXTURES, 'ask', 'message-tools', 'recording.json'), 'utf8')
    .replaceAll('weather-compare', `compare ${K['ask test']}`)
    .replaceAll(/"model": "[^"]*"/g, `"model": "model ${K['ask model']}"`)
    .replaceAll('Ask::Tools::Weather', `Ask::Tools::${K['ask tool']}`)
    .replaceAll('"weather"', JSON.stringify(K['ask tool']))
    // An interaction of a type no reader knows: a damaged line whose reason quotes the type.
    .replace('"interactions": [', `"interactions": [{"type": "step ${K['ask interaction type']}"}, `);
  mkdirSync(path.join(tree, 'ask', `compare ${K['ask test']}`), { recursive: true });
  writeFileSync(path.join(tree, 'ask', `compare ${K['ask test']}`, 'recording.json'), ask);

  const otlp = readFileSync(path.join(FIXTURES, 'otel', 'openllmetry.jsonl'), 'utf8')
    .replaceAll('"stringValue":"otel-fixtures"', `"stringValue":"svc ${K['otlp service.name']}"`)
    .replaceAll('"name":"chat gpt-fake-1"', `"name":"chat ${K['otlp span name']}"`)
    .replaceAll('gpt-fake-1', `model ${K['otlp model']}`)
    .replaceAll('get_weather', K['otlp tool']);
  mkdirSync(path.join(tree, 'otlp'), { recursive: true });
  writeFileSync(path.join(tree, 'otlp', 'spans.jsonl'), otlp);
  return tree;
}

