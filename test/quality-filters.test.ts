/**
 * Issue 31: the quiet failures (truncated, empty, broken, repetition, refusal, identity,
 * contaminated), each a named drop with its detail, in dedupe, filter and export alike.
 * Ask and klieo truncations are shaped as those recorders write them (test/fixtures, the spec).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalValueHash } from '../src/canonical/canonical.js';
import { repetitionDetail } from '../src/pipeline/quality/repetition.js';
import { brokenDetail } from '../src/pipeline/quality/broken.js';
import { foldPhrases, IDENTITY_PHRASES, phraseIn, REFUSAL_PHRASES } from '../src/pipeline/quality/phrases.js';
import { foldForPhrases } from '../src/pipeline/quality/text.js';
import { contaminationIn, buildEvalIndex, csvRows } from '../src/pipeline/quality/contamination.js';
import { runCli, runCliJson, SAMPLES, tempDir } from './helpers.js';
import { OPENAI_KEY } from './fake-secrets.js';

type Message = Record<string, unknown>;
type Drop = { call_id?: string; reason: string; detail?: string; flagged?: true };
type DryRun = { kept: number; dropped: Record<string, number>; drops: Drop[]; quality?: Record<string, unknown> };

const CONFIG = { module: 'synalinks', class_name: 'LanguageModel', config: { model: 'openai/gpt-4o-mini', api_base: null }, registered_name: null };
let serial = 0;

/** One Synalinks record line whose completion is `answer`. */
function synalinksLine(user: string, answer: Message, completionTokens = 20): { line: string; callId: string } {
  const n = serial++;
  const callId = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const inputs = [{ role: 'system', content: 'You answer questions.' }, { role: 'user', content: user }];
  const completion = { role: 'assistant', ...answer };
  const line = JSON.stringify({
    synalinks_version: '0.9.014',
    call_id: callId,
    parent_call_id: null,
    program: 'chat',
    module: 'chat',
    timestamp: 1783412130 + n,
    duration: 1.5,
    usage: { prompt_tokens: 100, completion_tokens: completionTokens, total_tokens: 100 + completionTokens, cached_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0 },
    cost: 0.001,
    messages: [...inputs, completion],
    inputs_hash: canonicalValueHash(inputs),
    outputs: completion,
    config: CONFIG,
    config_hash: canonicalValueHash(CONFIG),
  });
  return { line, callId };
}

function synalinksTree(lines: string[]): string {
  const root = path.join(tempDir(), 'tree');
  mkdirSync(path.join(root, 'chat', 'chat'), { recursive: true });
  writeFileSync(path.join(root, 'chat', 'chat', 'chat_20260708-090512.jsonl'), lines.join('\n') + '\n');
  return root;
}

const dryRun = (command: string, roots: string[], args: string[] = []): DryRun =>
  runCliJson<DryRun>([command, ...roots, '--dry-run', ...(command === 'export' ? ['--format', 'openai'] : []), ...args]);
const reasonsById = (run: DryRun) => new Map(run.drops.filter((d) => !d.flagged && d.call_id !== undefined).map((d) => [d.call_id!, d.reason]));

const PROSE =
  'The museum opens at nine on weekdays and at ten on weekends. Tickets can be bought at the door or online, ' +
  'and children under twelve enter free. The east wing holds the Flemish paintings, while the west wing shows ' +
  'modern sculpture from the last century. Guided tours leave every hour from the main hall and last about ' +
  'forty minutes. Photography without flash is allowed in most rooms, except the temporary exhibition.';

describe('truncated: Ask and klieo stop reasons, Synalinks usage', () => {
  /** An Ask recording: a streamed call cut at `length`, an Anthropic message cut at `max_tokens`, and one of each that finished. */
  function askRecording(): string {
    const dir = path.join(tempDir(), 'recordings', 'long-answers');
    mkdirSync(dir, { recursive: true });
    const stream = (text: string, finish: string) => ({
      type: 'stream',
      accumulated_text: text,
      chunks: [
        { content: null, tool_calls: null, finish_reason: null, thinking: 'Let me answer.' },
        { content: text, tool_calls: null, finish_reason: null, thinking: null },
        { content: '', tool_calls: null, finish_reason: finish, thinking: null },
      ],
    });
    const message = (text: string, stop: string) => ({
      type: 'message',
      content: text,
      tool_calls: null,
      metadata: { model: 'claude-sonnet-4-6', stop_reason: stop, input_tokens: 30, output_tokens: 1024, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, raw: {} },
    });
    const interactions = [
      { type: 'provider', messages: [{ role: 'user', content: 'Describe the museum.' }], model: 'deepseek-v4-flash', result: stream('The museum opens at nine and', 'length') },
      { type: 'provider', messages: [{ role: 'user', content: 'When does it open?' }], model: 'deepseek-v4-flash', result: stream('At nine.', 'stop') },
      { type: 'provider', messages: [{ role: 'user', content: 'List every room.' }], model: 'claude-sonnet-4-6', result: message('Room 1, Room 2, Room', 'max_tokens') },
      { type: 'provider', messages: [{ role: 'user', content: 'Is it free?' }], model: 'claude-sonnet-4-6', result: message('For children, yes.', 'end_turn') },
      // Gemini through Ask: the reason as Google spells it, in the OpenAI-style field.
      {
        type: 'provider',
        messages: [{ role: 'user', content: 'Tell me its history.' }],
        model: 'gemini-2.5-flash',
        result: { type: 'message', content: 'Founded in 1890, the museum', tool_calls: null, metadata: { model: 'gemini-2.5-flash', finish_reason: 'MAX_TOKENS', input_tokens: 12, output_tokens: 256 } },
      },
    ];
    writeFileSync(path.join(dir, 'recording.yml'), JSON.stringify({ test: 'long-answers', recorded_at: '2026-08-03T16:57:12Z', interactions }, null, 2) + '\n');
    return path.dirname(dir);
  }

  it('drops the Ask calls that stopped at length or max_tokens, and only those', () => {
    const run = dryRun('filter', [askRecording()]);
    const truncated = run.drops.filter((d) => d.reason === 'truncated');
    assert.deepEqual(truncated.map((d) => d.detail).sort(), ['stop reason "MAX_TOKENS"', 'stop reason "length"', 'stop reason "max_tokens"']);
    assert.equal(run.kept, 2);
    assert.equal(run.dropped.truncated, 3);
  });

  it('drops the klieo llm_io entry whose finish_reason is length', () => {
    const capture = JSON.parse(readFileSync(path.join('test', 'fixtures', 'klieo', 'capture-support.json'), 'utf8'));
    capture.llm_io[1].finish_reason = 'length';
    capture.llm_io[1].completion = 'Your order A-1001 has shipped and should';
    const dir = path.join(tempDir(), 'klieo');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'capture.json'), JSON.stringify(capture, null, 2));
    const run = dryRun('dedupe', [dir]);
    assert.deepEqual(
      run.drops.filter((d) => d.reason === 'truncated').map((d) => [d.call_id, d.detail]),
      [['01J9Z8CAPT:2', 'stop reason "length"']],
    );
    // The fixture as recorded (finish_reason "stop") keeps its answer.
    const unchanged = dryRun('dedupe', [path.join('test', 'fixtures', 'klieo', 'capture-support.json')]);
    assert.equal(unchanged.dropped.truncated, 0);
  });

  it('treats a Synalinks completion of --max-completion-tokens or more as truncated, and nothing without the option', () => {
    const cut = synalinksLine('Describe the museum.', { content: 'The museum opens at nine and' }, 512);
    const whole = synalinksLine('When does it open?', { content: 'At nine.' }, 3);
    const tree = synalinksTree([cut.line, whole.line]);
    assert.equal(dryRun('filter', [tree]).dropped.truncated, 0);
    const run = dryRun('filter', [tree], ['--max-completion-tokens', '512']);
    assert.deepEqual([...reasonsById(run)], [[cut.callId, 'truncated']]);
    assert.match(run.drops[0].detail!, /512 completion tokens >= --max-completion-tokens 512/);
    assert.equal(dryRun('filter', [tree], ['--max-completion-tokens', '512', '--no-truncated']).kept, 2);
  });
});

describe('empty, broken and repetition', () => {
  const cases = {
    empty: synalinksLine('Q1?', { content: '' }),
    blank: synalinksLine('Q2?', { content: ' \n\t ' }),
    toolCall: synalinksLine('Q3?', { content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: { q: 'x' } } }] }),
    structured: synalinksLine('Q4?', { content: '{"label":"billing"}' }),
    unclosed: synalinksLine('Q5?', { content: '<think>\nThe user wants the hours. The museum opens' }),
    unopened: synalinksLine('Q6?', { content: 'The user wants the hours.</think>\n\nIt opens at nine.' }),
    closed: synalinksLine('Q7?', { content: '<think>hours</think>It opens at nine.' }),
    reasoningOnly: synalinksLine('Q8?', { content: '', reasoning_content: 'It opens at nine, so the answer is nine.' }),
    loop: synalinksLine('Q9?', { content: `${PROSE}\n${Array.from({ length: 20 }, () => 'I will check the opening hours again.').join('\n')}` }),
    prose: synalinksLine('Q10?', { content: PROSE }),
  };
  const tree = synalinksTree(Object.values(cases).map((c) => c.line));

  it('drops each by default with its own reason, keeps tool calls, structured output and closed tags', () => {
    const reasons = reasonsById(dryRun('filter', [tree]));
    assert.equal(reasons.get(cases.empty.callId), 'empty');
    assert.equal(reasons.get(cases.blank.callId), 'empty');
    assert.equal(reasons.get(cases.unclosed.callId), 'broken');
    assert.equal(reasons.get(cases.unopened.callId), 'broken');
    assert.equal(reasons.get(cases.reasoningOnly.callId), 'broken');
    for (const kept of [cases.toolCall, cases.structured, cases.closed, cases.prose, cases.loop]) assert.equal(reasons.get(kept.callId), undefined);
  });

  it('drops the loop as repetition when asked (off by default), and the same in dedupe and export', () => {
    for (const command of ['filter', 'dedupe', 'export']) {
      const run = dryRun(command, [tree], ['--quality', 'all']);
      const reasons = reasonsById(run);
      assert.equal(reasons.get(cases.loop.callId), 'repetition', command);
      assert.equal(reasons.get(cases.prose.callId), undefined, command);
      assert.match(run.drops.find((d) => d.call_id === cases.loop.callId)!.detail!, /^content: dup_line_frac/);
    }
  });

  it('--quality none and the --no- flags keep them', () => {
    assert.equal(dryRun('filter', [tree], ['--quality', 'none']).kept, Object.keys(cases).length);
    const run = dryRun('filter', [tree], ['--no-empty', '--no-broken']);
    assert.equal(run.kept, Object.keys(cases).length);
    const only = dryRun('filter', [tree], ['--quality', 'empty']);
    assert.deepEqual(Object.keys(only.dropped).filter((r) => only.dropped[r] > 0), ['empty']);
  });

  it('says which tag is unmatched and where', () => {
    assert.equal(brokenDetail({ role: 'assistant', content: 'a</think>b' }), '</think> at character 1 of the content with no <think> before it');
    assert.equal(brokenDetail({ role: 'assistant', content: 'x <THINK>y' }), '<think> at character 2 of the content never closed');
    assert.equal(brokenDetail({ role: 'assistant', content: '<think>a</think><think>b</think>c' }), null);
  });
});

describe('repetition: Gopher rules with datatrove semantics', () => {
  it('leaves short answers alone: under 50 words nothing is judged', () => {
    assert.equal(repetitionDetail('Paris, France'), null);
    assert.equal(repetitionDetail('yes yes yes yes yes yes'), null);
  });
  it('finds duplicate lines, paragraphs and n-grams', () => {
    assert.match(repetitionDetail(Array.from({ length: 12 }, () => 'The answer is in the table below, row three.').join('\n')) ?? '', /^dup_line_frac/);
    assert.match(repetitionDetail(Array.from({ length: 5 }, () => PROSE).join('\n\n')) ?? '', /^dup_para_frac/);
    assert.match(repetitionDetail(`${PROSE} ${Array.from({ length: 40 }, () => 'again and again').join(' ')}`) ?? '', /^top_\d_gram/);
    assert.equal(repetitionDetail(PROSE), null);
  });
});

describe('refusal and identity phrases', () => {
  it('finds the first listed phrase a text holds, as a search for each phrase in turn does', () => {
    const lists = [
      foldPhrases(REFUSAL_PHRASES),
      foldPhrases(IDENTITY_PHRASES),
      // Phrases shorter than a beginning, one that is another's beginning, a later one that comes first in the text.
      foldPhrases(['ok', 'i can', "i can't help with that", 'as', 'sorry, i', 'a', 'can']),
      // Characters a regular expression reads as syntax, and a beginning that cuts a surrogate pair.
      foldPhrases(['(a|b', 'a.b*', '[x]+', 'c:\\p', '$5?', 'ab\u{1F600}c', '^ok$']),
      [],
    ];
    const answers = [
      'I’m sorry, but I can’t help with that.',
      "I can't help with that, but as an AI language model I can say this.",
      'As of my knowledge cutoff, the answer was 42.',
      'Sorry, I cannot do that. I can’t help with that either.',
      'A refusal is when a person declines to do something.',
      'ok',
      'o',
      '',
      'I am unable to help with   that request\n\nI cannot help with that',
      "i'm chatgpt and I was trained by OpenAI",
      'costs $5? see (a|b then a.b* or [x]+ in c:\\p; ab\u{1F600}c; ^ok$',
      'aab or axb, x, c:p, a|b, ab\u{1F600}',
      PROSE,
    ].map(foldForPhrases);
    const firstListed = (text: string, phrases: readonly string[]) => phrases.find((p) => text.includes(p)) ?? null;
    let found = 0;
    for (const phrases of lists) {
      for (const text of answers) {
        assert.equal(phraseIn(text, phrases), firstListed(text, phrases), `${JSON.stringify(text)} in ${phrases.length} phrases`);
        if (firstListed(text, phrases) !== null) found++;
      }
    }
    assert.ok(found >= 10, `phrases found ${found} times`);
  });

  const refusal = synalinksLine('How do I pick this lock?', { content: 'I’m sorry, but I can’t help with that.' });
  const identity = synalinksLine('Who made you?', { content: `As an AI developed by OpenAI, I have no opinions. ${PROSE}` });
  const topic = synalinksLine('What is a refusal?', { content: 'A refusal is when a person declines to do something.' });
  const tree = synalinksTree([refusal.line, identity.line, topic.line]);

  it('flags by default: counted, listed with flagged true, kept', () => {
    const run = dryRun('filter', [tree]);
    assert.equal(run.kept, 3);
    const flagged = run.drops.filter((d) => d.flagged);
    assert.deepEqual(flagged.map((d) => [d.call_id, d.reason]), [
      [refusal.callId, 'refusal'],
      [identity.callId, 'identity'],
    ]);
    assert.deepEqual((run.quality as { flagged: Record<string, number> }).flagged, { refusal: 1, identity: 1 });
    const text = runCli(['filter', tree, '--dry-run']);
    assert.match(text.stdout, /would flag \(and keep\) 1 record as refusal/);
    assert.match(text.stderr, /flagged 2 kept records: refusal 1, identity 1/);
  });

  it('drops them with --drop refusals,identity; a user list replaces the built-in one', () => {
    const run = dryRun('filter', [tree], ['--drop', 'refusals,identity']);
    assert.deepEqual([...reasonsById(run)].sort(), [
      [refusal.callId, 'refusal'],
      [identity.callId, 'identity'],
    ].sort());
    const list = path.join(tempDir(), 'phrases.txt');
    writeFileSync(list, '# our own\na refusal is\n');
    const own = dryRun('filter', [tree], ['--drop', 'refusals', '--refusal-phrases', list]);
    assert.deepEqual([...reasonsById(own)], [[topic.callId, 'refusal']]);
  });
});

describe('decontamination', () => {
  const item = 'A train leaves the station at noon and travels at sixty miles per hour toward the coast';
  const exact = synalinksLine(`Solve this:\n${item}. How far is it by three?`, { content: 'Ninety miles.' });
  const edited = synalinksLine(item.toUpperCase().replace('sixty', 'SEVENTY').replace(/ /g, '  '), { content: 'Far.' });
  const nearMiss = synalinksLine(item.split(' ').map((w, i) => (i % 7 === 3 ? 'x' : w)).join(' '), { content: 'Far.' });
  const tree = synalinksTree([exact.line, edited.line, nearMiss.line]);

  function evalFiles(): { jsonl: string; csv: string; txt: string } {
    const dir = tempDir();
    const jsonl = path.join(dir, 'trains.jsonl');
    writeFileSync(jsonl, `${JSON.stringify({ id: 1, question: 'Short one?' })}\n${JSON.stringify({ id: 2, question: item })}\n`);
    const csv = path.join(dir, 'trains.csv');
    writeFileSync(csv, `id,prompt,answer\n1,"${item}, with ""quotes""",90\n`);
    const txt = path.join(dir, 'trains.txt');
    writeFileSync(txt, `unrelated words that never appear in any of these records at all\n${item}\n`);
    return { jsonl, csv, txt };
  }

  it('drops exact and lightly edited copies, not a near miss, and reports per evaluation file', () => {
    const { jsonl } = evalFiles();
    const run = dryRun('filter', [tree], ['--decontaminate', jsonl]);
    const reasons = reasonsById(run);
    assert.equal(reasons.get(exact.callId), 'contaminated');
    assert.equal(reasons.get(edited.callId), 'contaminated');
    assert.equal(reasons.get(nearMiss.callId), undefined);
    const detail = run.drops.find((d) => d.call_id === exact.callId)!.detail!;
    assert.match(detail, /^user text shares "A train leaves the station at noon and" with .*trains\.jsonl item at line 2$/);
    const [report] = (run.quality as { evaluation_files: { items: number; items_under_8_words: number; contaminated_records: number; items_matched: number }[] }).evaluation_files;
    assert.deepEqual({ ...report, overlaps: undefined, file: undefined }, { file: undefined, items: 2, items_under_8_words: 1, contaminated_records: 2, items_matched: 1, overlaps: undefined });
  });

  it('reads CSV columns and plain text lines, and counts each file apart', () => {
    const { csv, txt } = evalFiles();
    const run = dryRun('dedupe', [tree], ['--decontaminate', csv, '--decontaminate', txt]);
    assert.equal(run.dropped.contaminated, 2);
    const files = (run.quality as { evaluation_files: { file: string; contaminated_records: number }[] }).evaluation_files;
    assert.deepEqual(files.map((f) => [path.basename(f.file), f.contaminated_records]), [
      ['trains.csv', 2],
      ['trains.txt', 0],
    ]);
    assert.deepEqual(csvRows('a,"b,""c"""\r\n1,2\n'), [
      ['a', 'b,"c"'],
      ['1', '2'],
    ]);
  });

  it('says what to do about an evaluation file it cannot read', () => {
    const bad = path.join(tempDir(), 'bad.jsonl');
    writeFileSync(bad, '{"question": "ok"}\n{"question": \n');
    const result = runCli(['filter', tree, '--dry-run', '--decontaminate', bad]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /bad\.jsonl line 2: not a JSON value/);
    assert.doesNotMatch(result.stderr, /at .*\.js:\d+/);
    const csv = path.join(tempDir(), 'no-column.csv');
    writeFileSync(csv, 'id,body\n1,hello\n');
    assert.match(runCli(['filter', tree, '--dry-run', '--decontaminate', csv]).stderr, /no column "question" or "prompt".*--decontaminate-field/);
  });

  it('needs 8 consecutive words in common: 7 are no match', () => {
    const { txt } = evalFiles();
    const index = buildEvalIndex([txt], null);
    assert.equal(contaminationIn(`before ${item} after`, index)?.line, 2);
    assert.equal(contaminationIn('A train leaves  the\nstation at NOON and', index)?.ngram, 'A train leaves the station at NOON and');
    assert.equal(contaminationIn('a train leaves the station at noon', index), null);
    assert.equal(contaminationIn('a train leaves the station at noon, and travels', index), null);
  });
});

describe('export shows the quality stages', () => {
  it('redacts the recorded words a contamination overlap quotes, in the manifest and report.json', () => {
    const item = `please call the billing api with key ${OPENAI_KEY} and report back what it says`;
    const copied = synalinksLine(item, { content: 'Done.' });
    const others = [synalinksLine('When does it open?', { content: 'At nine.' }), synalinksLine('Is it free?', { content: 'For children, yes.' })];
    const tree = synalinksTree([copied.line, ...others.map((o) => o.line)]);
    const evals = path.join(tempDir(), 'evals.txt');
    writeFileSync(evals, `${item}\n`);
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', tree, '--format', 'openai', '--out', out, '--validation-fraction', '0', '--decontaminate', evals]);
    assert.equal(result.status, 0, result.stderr);
    const written = readFileSync(path.join(out, 'report.json'), 'utf8') + readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8') + result.stderr;
    assert.equal(JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')).dropped.contaminated, 1);
    assert.ok(!written.toLowerCase().includes(OPENAI_KEY.slice(8).toLowerCase()), 'the key is written out');
    assert.match(written, /\[REDACTED:/);
  });

  it('--dry-run works for export, and report.json counts and explains the drops', () => {
    const cut = synalinksLine('Describe it.', { content: '<think>The museum' });
    const fine = synalinksLine('When does it open?', { content: 'At nine.' });
    const fine2 = synalinksLine('Is it free?', { content: 'For children, yes.' });
    const tree = synalinksTree([cut.line, fine.line, fine2.line]);
    const dry = runCli(['export', tree, '--format', 'openai', '--dry-run']);
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stdout, /would drop 1 record as broken/);
    assert.match(dry.stderr, /dry run: nothing written/);
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', tree, '--format', 'openai', '--out', out, '--validation-fraction', '0']);
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
    assert.equal(report.dropped.broken, 1);
    assert.equal(report.quality.modes.broken, 'drop');
    const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Drop);
    assert.deepEqual(manifest.filter((d) => d.reason === 'broken').map((d) => [d.call_id, d.detail]), [[cut.callId, '<think> at character 0 of the content never closed']]);
  });
});

describe('naming the quality stages wrongly', () => {
  it('--quality lists the set words it takes; --drop, which names stages only, does not offer them', () => {
    const quality = runCli(['filter', SAMPLES, '--dry-run', '--quality', 'bogus']);
    assert.equal(quality.status, 2);
    assert.match(quality.stderr, /--quality "bogus": expected all, none, default or a comma-separated list of truncated, broken, empty, repetition, refusal, identity/);
    for (const word of ['all', 'bogus']) {
      const drop = runCli(['filter', SAMPLES, '--dry-run', '--drop', word]);
      assert.equal(drop.status, 2, word);
      assert.match(drop.stderr, new RegExp(`--drop "${word}": expected a comma-separated list of stages to drop with, from truncated, broken, empty, repetition, refusal, identity`));
      assert.doesNotMatch(drop.stderr, /expected all/);
    }
  });
});
