/** The browser's data layer on the samples: index, lists, duplicate groups, re-reading, rows. */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chatRows, rowText } from '../src/ui/chat-lines.js';
import { excludeFileRoots, formatExcludeText, parseExcludeText, preloadMessage } from '../src/ui/exclude-file.js';
import { IndexStore } from '../src/ui/index-store.js';
import { computeLayout } from '../src/ui/layout.js';
import { costCell, entryRow, listColumns } from '../src/ui/rows.js';
import { prettyJson, previewOf, tidyPreview } from '../src/ui/record-text.js';
import { compileSearch, SearchJob } from '../src/ui/search.js';
import { sanitize, truncate, wrap } from '../src/ui/text.js';
import { FIXTURES, SAMPLES, tempDir } from './helpers.js';

const expected = JSON.parse(readFileSync(path.join(FIXTURES, 'samples-expected.json'), 'utf8'));
const TOOL_FILE = path.join(SAMPLES, 'math_agent/tool_calls_generator_math_agent/tool_calls_generator_math_agent_20260708-163045.jsonl');
const firstToolRecord = JSON.parse(readFileSync(TOOL_FILE, 'utf8').split('\n')[0]);

function nodeIndex(store: IndexStore, key: string): number {
  const i = store.tree.findIndex((n) => n.key === key);
  assert.ok(i >= 0, `tree has ${key}`);
  return i;
}

describe('IndexStore on samples/synalinks', () => {
  let store: IndexStore;
  before(async () => {
    store = await IndexStore.open([SAMPLES]);
    await store.whenDone();
  });
  after(() => store.close());

  it('indexes every line: records and damaged lines, with the expected counts', () => {
    assert.equal(store.count, expected.records + expected.damaged_lines);
    const all = store.counts(0);
    assert.equal(all.records, expected.records);
    assert.equal(all.ok, expected.ok);
    assert.equal(all.exception, expected.exception);
    assert.equal(all.no_output, expected.no_output);
    assert.equal(all.damaged, expected.damaged_lines);
    assert.equal(all.duplicates, expected.duplicate_ok_records);
    assert.equal(store.progress.done, true);
  });

  it('builds the tree of programs and modules from the folders', () => {
    assert.deepEqual(
      store.tree.map((n) => n.key),
      [
        '*',
        'p:language_model',
        'm:language_model/language_model',
        'p:math_agent',
        'm:math_agent/final_generator_math_agent',
        'm:math_agent/tool_calls_generator_math_agent',
        'p:my_program',
        'm:my_program/generator',
        'm:my_program/generator_cot',
        'm:my_program/my_program',
      ],
    );
    for (const [name, kinds] of Object.entries(expected.per_module_kinds as Record<string, { ok: number; exception: number; no_output: number }>)) {
      const c = store.counts(nodeIndex(store, `m:${name}`));
      assert.deepEqual([c.ok, c.exception, c.no_output], [kinds.ok, kinds.exception, kinds.no_output], name);
    }
    for (const [program, records] of Object.entries(expected.per_program as Record<string, number>)) {
      assert.equal(store.counts(nodeIndex(store, `p:${program}`)).records, records, program);
    }
  });

  it('filters lists by status and hides duplicates', () => {
    const generator = nodeIndex(store, 'm:my_program/generator');
    assert.equal(store.list(generator, 'all', false).length, 9, '8 records and the damaged line');
    assert.equal(store.list(generator, 'exception', false).length, 1);
    assert.equal(store.list(generator, 'no_output', false).length, 1);
    assert.equal(store.list(generator, 'ok', false).length, 6);
    assert.equal(store.list(generator, 'ok', true).length, 5);
    assert.equal(store.list(0, 'all', true).length, store.count - expected.duplicate_ok_records);
    for (const i of store.list(0, 'exception', false)) assert.equal(store.info(i).status, 'exception');
  });

  it('shows the damaged line as an entry with its file and line', () => {
    const damaged = Array.from(store.list(0, 'all', false)).filter((i) => store.info(i).status === 'damaged');
    assert.equal(damaged.length, 1);
    const info = store.info(damaged[0]);
    assert.equal(path.relative(SAMPLES, info.file.path), expected.damaged_line.file);
    assert.equal(info.line, expected.damaged_line.line);
    assert.equal(info.offset, expected.damaged_line.offset);
    assert.ok(info.damagedReason && info.damagedReason.length > 0);
    assert.equal(store.record(damaged[0]), null);
    assert.match(store.preview(damaged[0]), /^damaged line: /);
  });

  it('re-reads a record from disk by offset and parses it when asked', () => {
    const tool = nodeIndex(store, 'm:math_agent/tool_calls_generator_math_agent');
    const first = store.list(tool, 'all', false)[0];
    const record = store.record(first)!;
    assert.equal(record.callId, firstToolRecord.call_id);
    assert.equal(store.readBytes(first).toString('utf8'), readFileSync(TOOL_FILE, 'utf8').split('\n')[0]);
    assert.equal(store.preview(first), 'How much is 423 multiplied by 362, plus 7?');
    assert.equal(store.info(first).tokens, firstToolRecord.usage.total_tokens);
    assert.equal(store.info(first).model, 'openai/gpt-4o-mini');
  });

  it('finds the duplicate group, keeping the first ok record by timestamp', () => {
    const dup = store.list(0, 'all', false).find((i) => store.isDuplicate(i))!;
    const group = store.duplicateGroup(dup);
    assert.equal(group.length, 2);
    assert.equal(group[0].role, 'kept');
    assert.equal(group[1].role, 'duplicate');
    assert.equal(group[1].entry, dup);
    const kept = store.info(group[0].entry);
    assert.ok(kept.timestamp <= store.info(dup).timestamp);
    assert.equal(kept.duplicate, false);
    assert.equal(store.record(group[0].entry)!.inputsHash, store.record(dup)!.inputsHash);
    assert.equal(store.groupSizeOf(dup), 2);
  });

  it('sums tokens and cost of ok records for the stats panel', () => {
    const stats = store.stats(0);
    assert.equal(stats.totalTokens, expected.tokens_ok.total);
    assert.ok(Math.abs(stats.cost - expected.cost_sum_ok) < 1e-12);
    assert.equal(stats.files, expected.trace_files.length);
  });

  it('searches message text in the background', async () => {
    const compiled = compileSearch('multipl(y|ied)');
    assert.ok(compiled.regex);
    let updates = 0;
    const job = new SearchJob(store, compiled.regex, 0, () => updates++).start();
    while (!job.done) await new Promise((r) => setTimeout(r, 5));
    assert.ok(updates > 0);
    const matched = [...job.matches].map((i) => store.info(i).module.program);
    assert.ok(matched.length >= 6);
    assert.ok(matched.every((p) => p === 'math_agent'), matched.join());
    assert.ok(compileSearch('(').error);
    assert.equal(compileSearch('Paris').regex!.flags, '', 'an upper-case letter makes the search case-sensitive');
  });

  it('indexes incrementally: rows are listed before the index is done', async () => {
    const small = await IndexStore.open([SAMPLES], { chunkSize: 512 });
    let firstSeenAt = -1;
    let changes = 0;
    small.on('change', () => {
      changes++;
      if (firstSeenAt < 0 && small.list(0, 'all', false).length > 0) firstSeenAt = small.progress.bytesDone;
    });
    await small.whenDone();
    assert.ok(changes > 5);
    assert.ok(firstSeenAt > 0 && firstSeenAt < small.progress.bytesTotal);
    assert.equal(small.count, store.count);
    small.close();
  });

  it('reads files of other recorders (klieo, Ask) whole, beside the Synalinks lines it indexes', async () => {
    const mixed = await IndexStore.open([SAMPLES, path.join(FIXTURES, 'klieo')]);
    await mixed.whenDone();
    assert.equal(mixed.files.length, expected.trace_files.length);
    assert.ok(mixed.otherFiles.length > 0);
    assert.ok(mixed.otherFiles.every((f) => f.source === 'klieo'));
    assert.ok(mixed.count > store.count, 'klieo records are listed too');
    const left = await IndexStore.open([SAMPLES, path.join(FIXTURES, 'klieo')], { otherSources: false });
    await left.whenDone();
    assert.equal(left.count, store.count, 'and left out when asked');
    left.close();
    mixed.close();
  });

  it('watches call ids of a previous exclusion file', async () => {
    const watching = await IndexStore.open([SAMPLES], { watchCallIds: new Set([firstToolRecord.call_id, 'not-there']) });
    await watching.whenDone();
    assert.deepEqual([...watching.found.keys()], [firstToolRecord.call_id]);
    watching.close();
  });

  it('lists a node by recorded time, oldest first, the same records as in file order', () => {
    const inFiles = [...store.list(0, 'all', false)];
    const byTime = [...store.list(0, 'all', false, 'time')];
    assert.deepEqual([...byTime].sort((a, b) => a - b), [...inFiles].sort((a, b) => a - b));
    const times = byTime.map((e) => store.info(e).timestamp).filter((t) => !Number.isNaN(t));
    assert.deepEqual(times, [...times].sort((a, b) => a - b));
    assert.notDeepEqual(byTime, inFiles, 'the samples are not recorded in file order');
    assert.equal(store.list(0, 'all', false, 'time'), store.list(0, 'all', false, 'time'), 'sorted once, then remembered');
  });

  it('the cost column shows each amount whole at 120 columns, never a cut number', () => {
    const columns = listColumns(computeLayout(120, 40).listWidth);
    const cost = columns.find((c) => c.name === 'cost');
    assert.ok(cost !== undefined, 'the cost column fits at 120 columns');
    const all = store.list(0, 'all', false);
    let small = 0;
    for (const entry of all) {
      const info = store.info(entry);
      if (info.status === 'damaged' || !Number.isFinite(info.cost)) continue;
      const text = entryRow(store, entry, columns, false, null, false).map((seg) => seg.text).join('');
      assert.doesNotMatch(text, /\$[\d.,]*…/, text);
      const shown = costCell(info.cost, info.costEstimated, cost.width);
      assert.ok(text.includes(shown), `${shown} in ${text}`);
      if (info.cost > 0 && info.cost < 0.0001) small++;
    }
    assert.ok(small > 0, 'the samples hold costs under $0.0001, which 8 cells cut');
  });

  it('a folded one-line prompt says "1 line", in the singular', () => {
    const direct = nodeIndex(store, 'm:my_program/my_program');
    const record = store.record(store.list(direct, 'all', false)[0])!;
    const rows = chatRows(record, { width: 100, isOpen: () => false }).map(rowText);
    assert.ok(rows.some((r) => /system prompt folded \(1 line, \d+ chars\)/.test(r)), rows.join('\n'));
    assert.ok(!rows.some((r) => /\b1 lines\b/.test(r)));
  });

  it('renders the chat: folded system prompt, tool call with pretty arguments, structured completion', () => {
    const tool = nodeIndex(store, 'm:math_agent/tool_calls_generator_math_agent');
    const record = store.record(store.list(tool, 'all', false)[1])!;
    const rows = chatRows(record, { width: 80, isOpen: () => false }).map(rowText);
    assert.ok(rows.some((r) => r.includes('system prompt folded')));
    assert.ok(!rows.some((r) => r.includes('<instructions>')));
    assert.ok(rows.some((r) => r.includes('⚙ multiply')));
    assert.ok(rows.some((r) => r.includes('"a": 423,')));
    assert.ok(rows.some((r) => r.includes('▍tool') && r.includes('result of multiply')));
    assert.ok(rows.some((r) => r.includes('"result": 153126.0')), 'numbers keep their source text');
    const open = chatRows(record, { width: 80, isOpen: () => true }).map(rowText);
    assert.ok(open.some((r) => r.includes('<instructions>')));

    const structured = Array.from(store.list(0, 'ok', false), (i) => store.record(i)!).find((r) => r.module === 'generator' && r.status === 'ok')!;
    const srows = chatRows(structured, { width: 80, isOpen: () => false }).map(rowText);
    assert.ok(srows.some((r) => r.includes('completion (structured)')));
    assert.ok(srows.some((r) => /^\s+"answer": /.test(r)), srows.join('\n'));

    const failed = store.record(store.list(0, 'exception', false)[0])!;
    const frows = chatRows(failed, { width: 80, isOpen: () => false }).map(rowText);
    assert.ok(frows.some((r) => r.startsWith('✗ exception')));
  });
});

describe('browse: tool results name their call and tool', () => {
  it('a result without a name takes its tool from the call it answers (Synalinks and Ask records)', async () => {
    // The agent record with its tool results' `name` left out, as some recorders write them.
    const dir = tempDir('traces-browse-tools-');
    const line = JSON.parse(readFileSync(TOOL_FILE, 'utf8').split('\n')[1]) as { messages: { role: string; name?: string; tool_call_id?: string }[] };
    for (const m of line.messages) if (m.role === 'tool') delete m.name;
    // A result whose call is not in the record keeps its id, and names no tool it cannot know.
    line.messages.push({ role: 'tool', tool_call_id: 'call_from_elsewhere' });
    mkdirSync(path.join(dir, 'p', 'm'), { recursive: true });
    writeFileSync(path.join(dir, 'p', 'm', 'm_20260708-163045.jsonl'), `${JSON.stringify(line)}\n`);
    const ask = await IndexStore.open([dir, path.join(FIXTURES, 'ask')], { otherSources: true });
    try {
      await ask.whenDone();
      const toolRows: string[] = [];
      for (let i = 0; i < ask.count; i++) {
        const record = ask.record(i);
        if (record !== null) toolRows.push(...chatRows(record, { width: 100, isOpen: () => false }).map(rowText).filter((r) => r.startsWith('▍tool')));
      }
      const synalinksCall = line.messages.find((m) => m.role === 'tool')!.tool_call_id!;
      assert.ok(toolRows.some((r) => r.includes(`result of multiply  for ${synalinksCall}`)), toolRows.join('\n'));
      assert.ok(toolRows.some((r) => /result of weather {2}for toolu_01A/.test(r)), 'Ask results name their tool');
      assert.ok(toolRows.some((r) => /tool result {2}for call_from_elsewhere/.test(r)));
      assert.ok(!toolRows.some((r) => r.includes('?')), toolRows.join('\n'));
    } finally {
      ask.close();
    }
  });
});

describe('record text helpers', () => {
  it('pretty-prints JSON from bytes, keeping number text', () => {
    const b = Buffer.from('{"result":153126.0,"log":"ok","list":[1e-7,{}],"empty":[]}');
    assert.deepEqual(prettyJson(b, [0, b.length]), ['{', '  "result": 153126.0,', '  "log": "ok",', '  "list": [', '    1e-7,', '    {}', '  ],', '  "empty": []', '}']);
  });

  it('previews the first user message, unwrapped from Synalinks <input>', () => {
    const b = Buffer.from(JSON.stringify([{ role: 'system', content: 'sys' }, { role: 'user', content: "<input>\n{'query': 'What is 2+2?'}\n</input>" }]));
    assert.equal(previewOf(b, [0, b.length]), 'What is 2+2?');
    assert.equal(tidyPreview('plain  text\nhere'), 'plain text here');
  });

  it('sanitizes control characters, truncates and wraps by cells', () => {
    assert.equal(sanitize('a\x1b[31mb\tc'), 'a\u241b[31mb    c');
    assert.equal(truncate('abcdef', 4), 'abc…');
    assert.equal(truncate('日本語', 4), '日…');
    assert.deepEqual(wrap('hello world foo', 11), ['hello world', 'foo']);
    assert.deepEqual(wrap('abcdefghij', 4), ['abcd', 'efgh', 'ij']);
  });

  it('an exclusion file names the trees it was written for; browse of another tree says so, and counts no call_id as marked up front', () => {
    const text = formatExcludeText(['a-1', 'b-2'], new Date(0), ['/data/tree-a']);
    assert.deepEqual(parseExcludeText(text), ['a-1', 'b-2']);
    assert.deepEqual(excludeFileRoots(text), ['/data/tree-a']);
    const here = preloadMessage('/x/traces-exclude.txt', 2, text, ['/data/tree-a'])!;
    assert.equal(here, '2 call_ids listed in traces-exclude.txt: marked where this tree holds them, kept when w rewrites the file');
    const other = preloadMessage('/x/traces-exclude.txt', 2, text, ['/data/tree-b'])!;
    assert.match(other, /written for \/data\/tree-a \(not this tree\)/);
    assert.doesNotMatch(other + here, /start marked/);
    assert.equal(preloadMessage('/x/traces-exclude.txt', 0, null, ['/data/tree-b']), undefined);
  });

  it('reads and writes the exclusion file format', () => {
    const text = formatExcludeText(['a-1', 'b-2']);
    assert.ok(text.startsWith('#'));
    assert.deepEqual(parseExcludeText(text), ['a-1', 'b-2']);
    assert.deepEqual(parseExcludeText('# c\n\n  x \r\n#y\nz'), ['x', 'z']);
  });
});
