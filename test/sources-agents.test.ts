/**
 * Coding-agent sessions (Claude Code, Codex CLI, pi) and the Hub's Session Traces Format, read
 * from genuine session files (tools/agent-fixtures: each agent run against a fake server on
 * 127.0.0.1) and compared with what the server was sent and answered (its condensed log).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { DamagedLine, TraceRecord } from '../src/record.js';
import { discover } from '../src/sources/discover.js';
import { readFiles } from '../src/sources/read.js';
import type { SourceRun } from '../src/sources/source-run.js';
import { checkSessionLine } from '../src/targets/sts/index.js';
import { FIXTURES, runCli, runCliJson, tempDir, flat } from './helpers.js';

const HARNESSES = [
  ['claude-code', '.claude/projects'],
  ['codex', '.codex/sessions'],
  ['pi', '.pi/agent/sessions'],
] as const;

interface Read {
  records: TraceRecord[];
  runs: SourceRun[];
  damaged: DamagedLine[];
}

async function read(...roots: string[]): Promise<Read> {
  const discovery = await discover(roots);
  const out: Read = { records: [], runs: [], damaged: [] };
  for await (const batch of readFiles(discovery.files)) {
    out.records.push(...batch.records);
    out.runs.push(...(batch.runs ?? []));
    out.damaged.push(...batch.damaged);
  }
  return out;
}

/** A home folder holding the three agents' folders, a project with a `.git` and a cache. */
function home(): string {
  const dir = tempDir('traces-agents-');
  for (const [kind] of HARNESSES) cpSync(path.join(FIXTURES, kind), dir, { recursive: true, filter: (src) => path.basename(src) !== 'server-log.jsonl' });
  mkdirSync(path.join(dir, 'demo-project', '.git'), { recursive: true });
  writeFileSync(path.join(dir, 'demo-project', '.git', 'log.jsonl'), '{"parentUuid":null,"type":"user","sessionId":"x","uuid":"y"}\n');
  mkdirSync(path.join(dir, '.claude'), { recursive: true });
  writeFileSync(path.join(dir, '.claude', 'settings.json'), '{"model":"opus"}\n');
  return dir;
}

interface LoggedRequest {
  messages: { role: string; text: string }[];
  system_chars: number;
  tools: string[];
  answered: { status: number; text?: string; calls?: string[]; stop?: string | null };
}

function serverLog(kind: string): LoggedRequest[] {
  return readFileSync(path.join(FIXTURES, kind, 'server-log.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LoggedRequest);
}

/** The requests of the scenarios (the user's words start with SCENARIO), not side calls (titles, summaries). */
function scenarioCalls(log: LoggedRequest[]): LoggedRequest[] {
  return log.filter((r) => r.tools.length > 0 && r.messages.some((m) => m.text.includes('SCENARIO ')));
}

describe('agent sessions: discovery from the home folder', () => {
  it('enters .claude/projects, .codex/sessions and .pi/agent/sessions, no other hidden folder, and says which it passed over', async () => {
    const dir = home();
    const discovery = await discover([dir]);
    const bySource = new Map<string, number>();
    for (const file of discovery.files) bySource.set(file.source, (bySource.get(file.source) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(bySource), { 'claude-code': 4, codex: 4, pi: 4 });
    assert.ok(discovery.files.every((f) => HARNESSES.some(([kind, folder]) => f.source === kind && f.path.startsWith(path.join(dir, folder)))));
    // The agent's own settings are no traces and not worth a word; a project's .git is a hidden folder passed over.
    assert.ok(!discovery.skipped.some((s) => s.path.includes('settings.json')));
    assert.deepEqual(discovery.hidden!.map((h) => path.relative(dir, path.resolve(h))), [path.join('demo-project', '.git')]);
    // Named from the folder above, the same files are found.
    assert.equal((await discover([path.dirname(dir)])).files.filter((f) => f.path.startsWith(dir)).length, 12);
  });

  it('stats, runs, export and validate read every harness from the home folder', () => {
    const dir = home();
    const stats = runCli(['stats', dir, '--json']);
    assert.equal(stats.status, 0, stats.stderr);
    assert.match(flat(stats.stderr), /1 hidden folder not entered \(.*\.git\): name one to read it/);
    const json = JSON.parse(stats.stdout) as Record<string, unknown>;
    assert.equal(json.hidden_folders_not_entered, 1);
    const runs = runCliJson<{ source: string }[]>(['runs', dir]);
    assert.deepEqual([...new Set(runs.map((r) => r.source))].sort(), ['claude-code', 'codex', 'pi']);
    assert.equal(runs.length, 12);
    const out = path.join(tempDir(), 'hf');
    const exported = runCli(['export', dir, '--format', 'hf', '--file-format', 'jsonl', '--out', out]);
    assert.equal(exported.status, 0, exported.stderr);
    assert.match(exported.stdout + exported.stderr, /read 19 records from 12 files/);
    const validated = runCli(['validate', out, '--format', 'hf']);
    assert.equal(validated.status, 0, validated.stdout + validated.stderr);
  });
});

describe('agent sessions: each model call a record of the conversation it saw', () => {
  for (const [kind] of HARNESSES) {
    it(`${kind}: every answer in the session is one the server gave, in order, and the tool loop holds both parallel calls and results`, async () => {
      const { records, damaged } = await read(path.join(FIXTURES, kind));
      assert.deepEqual(damaged, []);
      const ok = records.filter((r) => r.status === 'ok');
      const answered = scenarioCalls(serverLog(kind)).filter((r) => r.answered.status === 200);
      // Sessions are files of their own: compare answer texts as multisets, each file's in order.
      const texts = ok.map((r) => r.completion()!.content).sort();
      const sent = answered.map((r) => r.answered.text).sort();
      for (const text of texts) assert.ok(sent.includes(text as string), `${JSON.stringify(text)} was never answered`);
      const loop = ok.find((r) => (r.completion()!.tool_calls ?? []).length === 2);
      assert.ok(loop !== undefined, 'the answer with two parallel tool calls');
      const calls = loop.completion()!.tool_calls!;
      const next = ok.find((r) => r.messages().some((m) => m === loop.completion() || (m.role === 'assistant' && m.tool_calls?.length === 2)) && r !== loop)!;
      const results = next.messages().filter((m) => m.role === 'tool');
      assert.deepEqual(results.map((m) => m.tool_call_id).sort(), calls.map((c) => c.id).sort());
      assert.equal(next.completion()!.content, 'The project has a README describing a demo; nothing else is there yet.');
    });
  }

  it('the continued session is one run whose last call sees the first turns', async () => {
    for (const [kind] of HARNESSES) {
      const { records, runs } = await read(path.join(FIXTURES, kind));
      const cont = records.find((r) => r.completion()?.content === 'You said: Thanks. Anything else to add?')!;
      assert.ok(cont.messages().some((m) => typeof m.content === 'string' && m.content.includes('SCENARIO tools')), kind);
      const run = runs.find((r) => r.lines.includes(cont.ref.line) && r.lines.length >= 3);
      assert.ok(run !== undefined, kind);
    }
  });

  it('a cut answer keeps its recorded stop reason, which the truncated filter reads', async () => {
    const reasons = new Map<string, string | null>();
    for (const [kind] of HARNESSES) {
      const { records } = await read(path.join(FIXTURES, kind));
      const cut = records.find((r) => String(r.completion()?.content ?? '').startsWith('Here is a long explanation'))!;
      reasons.set(kind, cut.stopReason);
    }
    assert.deepEqual(Object.fromEntries(reasons), { 'claude-code': 'max_tokens', codex: 'max_output_tokens', pi: 'length' });
    // The server said so too (Anthropic's stop_reason, the Responses API's incomplete reason, chat's finish_reason).
    for (const [kind] of HARNESSES) assert.ok(serverLog(kind).some((r) => r.answered.stop === reasons.get(kind)), kind);
  });

  it('a retried failure leaves no trace in any session; a failure the agent gave up on is an exception record', async () => {
    for (const [kind] of HARNESSES) {
      const log = scenarioCalls(serverLog(kind));
      const { records } = await read(path.join(FIXTURES, kind));
      const retried = log.filter((r) => r.answered.status >= 500 && r.messages.some((m) => m.text.includes('SCENARIO retry')));
      assert.equal(retried.length, 1, kind);
      const retry = records.filter((r) => r.messages().some((m) => JSON.stringify(m.content ?? '').includes('SCENARIO retry')));
      assert.deepEqual(retry.map((r) => r.status), ['ok'], kind);
      const failed = records.filter((r) => r.status === 'exception');
      assert.equal(failed.length, 1, kind);
      assert.ok(failed[0].messages().some((m) => JSON.stringify(m.content ?? '').includes('SCENARIO fail')), kind);
    }
  });

  it('what each session keeps of what was sent: Codex its instructions; no session the tool definitions', async () => {
    const codex = await read(path.join(FIXTURES, 'codex'));
    const system = codex.records[0].messages()[0];
    assert.equal(system.role, 'system');
    assert.match(String(system.content), /^You are a coding agent running in the Codex CLI/);
    for (const [kind] of HARNESSES) {
      const { records } = await read(path.join(FIXTURES, kind));
      assert.ok(records.every((r) => (r.offeredTools ?? null) === null), kind);
      // The server got a system prompt and tools on every scenario call.
      assert.ok(scenarioCalls(serverLog(kind)).every((r) => r.system_chars > 0 && r.tools.length > 0), kind);
    }
    const claude = await read(path.join(FIXTURES, 'claude-code'));
    assert.ok(claude.records.every((r) => r.messages()[0].role === 'user'));
    assert.ok(claude.records.every((r) => r.version === '2.1.197'));
  });
});

describe('sts: the Session Traces Format both ways', () => {
  it('export --format sts writes a valid session per file, read back by traces as a source', async () => {
    const dir = home();
    const out = path.join(tempDir(), 'sts');
    const exported = runCli(['export', dir, '--format', 'sts', '--out', out]);
    assert.equal(exported.status, 0, exported.stderr);
    const sessions = ['train', 'validation'].flatMap((split) => {
      try {
        return readdirSync(path.join(out, split)).map((name) => path.join(out, split, name));
      } catch {
        return [];
      }
    });
    assert.ok(sessions.length >= 4);
    for (const file of sessions) {
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(lines[0].type, 'session');
      assert.equal(typeof lines[0].harness, 'string');
      assert.equal(typeof lines[0].id, 'string');
      lines.forEach((line, i) => assert.deepEqual(checkSessionLine(line, i + 1), [], `${file}:${i + 1}`));
      assert.ok(lines.slice(1).every((l) => l.type === 'message'));
    }
    const validated = runCli(['validate', out, '--format', 'sts']);
    assert.equal(validated.status, 0, validated.stdout + validated.stderr);
    const back = await read(out);
    assert.ok(back.records.length > 0);
    assert.ok(back.records.every((r) => r.source === 'sts' && r.program === 'traces'));
    assert.deepEqual(back.damaged, []);
    // A session's last record is the whole session: its tool calls and results stay paired.
    const withTools = back.records.filter((r) => r.messages().some((m) => m.role === 'tool'));
    assert.ok(withTools.length > 0);
    // The definitions the export wrote into each header come back as the records' offered tools.
    assert.ok(withTools.every((r) => (r.offeredTools ?? []).length > 0));
    for (const record of withTools) {
      const ids = new Set(record.messages().flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
      assert.ok(record.messages().filter((m) => m.role === 'tool').every((m) => ids.has(m.tool_call_id)));
    }
  });

  it('the format documented by the Hub (its example) is read as a source', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'session.jsonl');
    writeFileSync(
      file,
      [
        '{"type":"session","harness":"my-agent","id":"abc123","name":"what time is it"}',
        '{"type":"message","message":{"role":"user","content":"what time is it?"}}',
        '{"type":"message","message":{"role":"assistant","content":"","toolCalls":[{"id":"t1","function":{"name":"get_time","arguments":"{}"}}]}}',
        '{"type":"message","message":{"role":"tool","toolCallId":"t1","content":"2026-07-01T15:00:00Z"}}',
        '{"type":"message","message":{"role":"assistant","content":"it is 15:00 UTC"}}',
        '',
      ].join('\n'),
    );
    const { records, runs } = await read(dir);
    assert.deepEqual(records.map((r) => [r.source, r.program, r.ref.line]), [
      ['sts', 'my-agent', 3],
      ['sts', 'my-agent', 5],
    ]);
    assert.deepEqual(records[1].messages().at(-2), { role: 'tool', content: '2026-07-01T15:00:00Z', tool_call_id: 't1' });
    assert.equal(runs[0].program, 'my-agent: what time is it');
    const validated = runCli(['validate', file, '--format', 'sts']);
    assert.equal(validated.status, 0, validated.stdout + validated.stderr);
  });

  it('a damaged line is reported, the rest of the session still read', async () => {
    const dir = tempDir();
    const source = path.join(FIXTURES, 'pi', '.pi', 'agent', 'sessions');
    const folder = readdirSync(source)[0];
    const name = readdirSync(path.join(source, folder)).sort()[0];
    const lines = readFileSync(path.join(source, folder, name), 'utf8').split('\n');
    lines.splice(4, 0, '{"type":"message", broken');
    writeFileSync(path.join(dir, name), lines.join('\n'));
    const { records, damaged } = await read(dir);
    assert.equal(damaged.length, 1);
    assert.equal(damaged[0].line, 5);
    assert.ok(records.length >= 3);
  });
});

describe('agent sessions: branches and compactions', () => {
  /** The Claude Code tool-loop session, with lines appended as Claude Code writes them. */
  function claudeWith(extra: (last: Record<string, unknown>) => Record<string, unknown>[]): string {
    const folder = path.join(FIXTURES, 'claude-code', '.claude', 'projects', '-home-dev-demo-project');
    const name = readdirSync(folder).find((n) => readFileSync(path.join(folder, n), 'utf8').includes('SCENARIO tools'))!;
    const lines = readFileSync(path.join(folder, name), 'utf8').trimEnd().split('\n');
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const last = entries.filter((e) => e.type === 'assistant').at(-1)!;
    const dir = tempDir();
    writeFileSync(path.join(dir, name), [...lines, ...extra(last).map((e) => JSON.stringify(e))].join('\n') + '\n');
    return dir;
  }

  const turn = (uuid: string, parentUuid: string, role: 'user' | 'assistant', text: string, base: Record<string, unknown>): Record<string, unknown> => ({
    ...base,
    parentUuid,
    uuid,
    type: role,
    message: role === 'user' ? { role, content: text } : { ...(base.message as object), id: `msg_${uuid}`, content: [{ type: 'text', text }], stop_reason: 'end_turn' },
  });

  it('an edited prompt (a user turn whose parent is an earlier entry) goes back to the conversation as it stood there', async () => {
    const dir = claudeWith((last) => {
      const first = turn('u-1', last.uuid as string, 'user', 'First follow-up', last);
      const answer = turn('a-1', 'u-1', 'assistant', 'First answer', last);
      // The follow-up edited: its parent is the same answer the first follow-up answered.
      const edited = turn('u-2', last.uuid as string, 'user', 'Edited follow-up', last);
      const answer2 = turn('a-2', 'u-2', 'assistant', 'Second answer', last);
      return [first, answer, edited, answer2];
    });
    const { records } = await read(dir);
    const last = records.at(-1)!;
    assert.equal(last.completion()!.content, 'Second answer');
    const texts = last.messages().map((m) => m.content);
    assert.ok(!texts.includes('First follow-up') && !texts.includes('First answer'));
    assert.ok(texts.includes('Edited follow-up'));
  });

  it('after a compact boundary, calls see the summary and what follows only', async () => {
    const dir = claudeWith((last) => [
      { ...last, type: 'system', subtype: 'compact_boundary', uuid: 's-1', parentUuid: null, message: undefined, content: 'Conversation compacted' },
      turn('u-3', 's-1', 'user', 'This session is being continued from a previous conversation. Summary: the demo project was read.', last),
      turn('u-4', 'u-3', 'user', 'And now?', last),
      turn('a-3', 'u-4', 'assistant', 'Nothing more.', last),
    ]);
    const { records } = await read(dir);
    const last = records.at(-1)!;
    assert.deepEqual(last.messages().map((m) => m.role), ['user', 'user', 'assistant']);
    assert.match(String(last.messages()[0].content), /^This session is being continued/);
  });

  it("a subagent's own file (every turn isSidechain) is read as its run; sidechain turns in a parent's session are not", async () => {
    const folder = path.join(FIXTURES, 'claude-code', '.claude', 'projects', '-home-dev-demo-project');
    const name = readdirSync(folder).find((n) => readFileSync(path.join(folder, n), 'utf8').includes('SCENARIO tools'))!;
    const entries = readFileSync(path.join(folder, name), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    /** The session with its turns' `isSidechain` set by `flag` (of the line's index). */
    const sidechain = (flag: (i: number) => boolean): string => {
      const dir = tempDir();
      const lines = entries.map((e, i) => JSON.stringify(e.type === 'user' || e.type === 'assistant' ? { ...e, isSidechain: flag(i) } : e));
      writeFileSync(path.join(dir, `agent-${name}`), lines.join('\n') + '\n');
      return dir;
    };
    const whole = await read(sidechain(() => true));
    assert.equal(whole.records.length, 3);
    // Turns after the first flagged as a subagent's in a parent's session: only the parent's are read.
    const mixed = await read(sidechain((i) => i > 8));
    assert.ok(mixed.records.length < 3);
  });
});
