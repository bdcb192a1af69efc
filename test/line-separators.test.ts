/**
 * Issue 39: NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR (U+2029) may stand raw
 * in a JSON string, but NeMo AutoModel reads a local JSONL file with Python's `splitlines()`,
 * which splits there: the file fails to load, or those examples are lost. Every JSONL target
 * writes them escaped, and `validate` rejects a file holding them raw.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { runCli, synalinksLine, tempDir } from './helpers.js';

const USER = 'first line\u2028second\u2029third\u0085fourth';
const ANSWER = 'a paragraph\u2029another';
const ARGUMENTS = '{"city":"Paris\u2028Nord","days":3.0}';

/** What a reader built on splitlines() gets: every line parsed, or the error Python raises. */
function pythonSplitlines(file: string): { ok: boolean; lines: number; users: string[]; answers: string[]; error?: string } {
  const script = `
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
users, answers = [], []
try:
    lines = [json.loads(l) for l in text.splitlines() if l.strip()]
except json.JSONDecodeError as e:
    print(json.dumps({"ok": False, "lines": 0, "users": [], "answers": [], "error": str(e)})); sys.exit(0)
for l in lines:
    for m in l["messages"]:
        if m["role"] == "user": users.append(m["content"])
        if m["role"] == "assistant" and m.get("content"): answers.append(m["content"])
print(json.dumps({"ok": True, "lines": len(lines), "users": users, "answers": answers}))
`;
  const run = spawnSync('python3', ['-c', script, file], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as ReturnType<typeof pythonSplitlines>;
}

describe('line separators in exported JSONL (issue 39)', () => {
  let tree = '';
  before(() => {
    tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'prog', 'gen'), { recursive: true });
    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: ARGUMENTS } };
    const lines = [
      synalinksLine({ index: 0, program: 'prog', module: 'gen', messages: [{ role: 'user', content: USER }, { role: 'assistant', content: ANSWER }] }),
      synalinksLine({ index: 1, program: 'prog', module: 'gen', messages: [{ role: 'user', content: `${USER} 2` }, { role: 'assistant', content: '', tool_calls: [call] }] }),
      synalinksLine({ index: 2, program: 'prog', module: 'gen', messages: [{ role: 'user', content: 'plain' }, { role: 'assistant', content: 'plain answer' }] }),
    ];
    writeFileSync(path.join(tree, 'prog', 'gen', 'gen_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
  });

  for (const format of ['openai', 'nemo', 'nemo-customizer']) {
    it(`export --format ${format} writes them escaped: a splitlines() reader loads every example with its text`, () => {
      const out = path.join(tempDir(), format);
      const result = runCli(['export', tree, '--format', format, '--out', out, '--validation-fraction', '0', '--json']);
      assert.equal(result.status, 0, result.stderr);
      const file = path.join(out, 'training.jsonl');
      const raw = readFileSync(file, 'utf8');
      assert.ok(!/[\u0085\u2028\u2029]/.test(raw), 'no raw separator in the file');
      const loaded = pythonSplitlines(file);
      assert.equal(loaded.ok, true, loaded.error);
      assert.equal(loaded.lines, 3);
      assert.deepEqual(loaded.users.sort(), [USER, `${USER} 2`, 'plain'].sort());
      assert.ok(loaded.answers.includes(ANSWER));
      if (format !== 'nemo') assert.ok(raw.includes('Paris\\\\u2028Nord') || raw.includes('Paris\\u2028Nord'), 'tool arguments escaped too');
      // Three examples: OpenAI's 10-example minimum for a training file is the one error it may have.
      const check = JSON.parse(runCli(['validate', file, '--format', format, '--json']).stdout) as { errors: { code: string }[] };
      assert.deepEqual(check.errors.map((e) => e.code).filter((code) => code !== 'too_few_examples'), []);
    });

    it(`validate --format ${format} rejects a file holding them raw, naming the line`, () => {
      const file = path.join(tempDir(), 'raw.jsonl');
      const example = (text: string) => JSON.stringify({ messages: [{ role: 'user', content: text }, { role: 'assistant', content: 'ok' }] });
      writeFileSync(file, `${example('fine')}\n${example('one\u0085two')}\n`);
      assert.ok(pythonSplitlines(file).ok === false || pythonSplitlines(file).lines !== 2, 'the raw file is what splitlines() chokes on');
      const result = runCli(['validate', file, '--format', format, '--json']);
      assert.notEqual(result.status, 0, result.stdout);
      const report = JSON.parse(result.stdout) as { errors: { code: string; lines: number[] }[] };
      assert.deepEqual(report.errors.find((e) => e.code === 'line_separator')?.lines, [2]);
    });
  }
});
