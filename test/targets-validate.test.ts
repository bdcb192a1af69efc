/**
 * The validator on hand-made files: each file under fixtures/targets/validate/<target>/
 * is named after the one error class it holds; the table gives the bad line.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TARGETS, validateFile, validateLines, type TargetName } from '../src/targets/index.js';
import { tempDir } from './helpers.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/targets/', import.meta.url));

/** Target → error class → line of the bad example. */
const BAD_LINE: Record<TargetName, Record<string, number>> = {
  openai: {
    bom: 1,
    line_separator: 2,
    invalid_json: 2,
    blank_line: 3,
    data_type: 2,
    missing_messages_list: 2,
    message_missing_key: 2,
    message_unrecognized_key: 3,
    unrecognized_role: 2,
    missing_content: 2,
    example_missing_assistant_message: 4,
    content_type: 2,
    top_level_key: 2,
    weight_invalid: 2,
    tool_call_malformed: 2,
    tool_name_invalid: 2,
    arguments_type: 2,
    tool_call_id_unmatched: 2,
    tool_missing_tool_call_id: 2,
    tool_undeclared: 2,
    tool_definition_invalid: 2,
    parallel_tool_calls_conflict: 2,
    special_token: 2,
    tool_sequence: 2,
  },
  nemo: {
    line_separator: 2,
    last_message_not_assistant: 2,
    reasoning_not_string: 2,
    content_type: 2,
    tool_missing_tool_call_id: 2,
    tool_call_id_unmatched: 3,
    arguments_type: 2,
    unrecognized_role: 2,
    tool_sequence: 2,
  },
  'nemo-customizer': {
    line_separator: 2,
    content_and_thinking: 2,
    tool_definition_incomplete: 2,
    message_unrecognized_key: 2,
    arguments_type: 2,
    unrecognized_role: 2,
    missing_content: 2,
    reasoning_not_string: 2,
    schema_varies: 3,
  },
};

for (const [name, expectations] of Object.entries(BAD_LINE) as Array<[TargetName, Record<string, number>]>) {
  const target = TARGETS[name];
  describe(`validate ${name}: one file per error class`, () => {
    it('has a fixture for every class in the table and nothing else', () => {
      const files = readdirSync(`${FIXTURES}validate/${name}`).map((f) => f.replace(/\.jsonl$/, '')).sort();
      assert.deepEqual(files, Object.keys(expectations).sort());
    });
    for (const [code, line] of Object.entries(expectations)) {
      it(`${code} at line ${line}`, async () => {
        const report = await validateFile(`${FIXTURES}validate/${name}/${code}.jsonl`, target);
        const all = [...report.errors, ...report.warnings];
        const found = all.find((s) => s.code === code);
        assert.ok(found, `${code} not reported; got ${all.map((s) => s.code).join(', ')}`);
        assert.deepEqual(found.lines, [line]);
        assert.equal(found.count, 1);
        // The class explains the file: no other error rides along (but OpenAI's minimum of 10
        // training examples, a file-level class of its own: each fixture is a few lines).
        assert.deepEqual(report.errors.map((s) => s.code).filter((c) => c !== code && c !== 'too_few_examples'), []);
      });
    }
  });
}

describe('validate good files', () => {
  // Preference rows have golden pairs of their own (test/preference.test.ts validates what they write).
  for (const target of Object.values(TARGETS).filter((t) => t.preference === undefined)) {
    it(`${target.name}: our golden lines give zero errors`, async () => {
      const dir = `${FIXTURES}expected/${target.name}`;
      const lines = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()
        .map((f) => readFileSync(join(dir, f), 'utf8').trimEnd());
      // Repeat to reach OpenAI's 10-example minimum.
      while (lines.length < 10) lines.push(lines[0]);
      const file = join(tempDir('traces-validate-'), 'good.jsonl');
      writeFileSync(file, lines.join('\n') + '\n');
      const report = await validateFile(file, target);
      assert.deepEqual(report.errors, []);
      assert.equal(report.ok, true);
      assert.equal(report.examples, lines.length);
      assert.equal(report.tokens.total.count, lines.length);
      assert.ok(report.tokens.total.min > 0);
      assert.ok(report.tokens.assistant.max < report.tokens.total.max);
      assert.ok(report.warnings.every((w) => w.code === 'special_token' || w.code === 'schema_varies'));
    });
  }
});

describe('validate report', () => {
  const good = '{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}';
  const noSystem = '{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}';

  it('splits a file at \\n only, as trainers read JSONL: a bare CR is whitespace inside a line; blank lines are numbered', async () => {
    const file = join(tempDir('traces-validate-'), 'cr.jsonl');
    writeFileSync(file, `${good.replace('"messages":', '"messages":\r')}\r\n \t\n${noSystem}\n\n`);
    const report = await validateFile(file, TARGETS.nemo);
    assert.equal(report.examples, 2);
    assert.deepEqual(report.errors.map((e) => [e.code, e.lines]), [['blank_line', [2, 4]]]);
  });

  it('counts examples without system or user message; a training file under 10 examples is no valid openai file, a validation file is', async () => {
    const report = await validateLines([good, noSystem, noSystem], TARGETS.openai);
    assert.equal(report.examples, 3);
    assert.equal(report.missingSystem, 2);
    assert.equal(report.missingUser, 0);
    assert.deepEqual(report.errors.map((w) => w.code), ['too_few_examples']);
    assert.equal(report.ok, false);
    const validation = await validateLines([good, noSystem, noSystem], TARGETS.openai, {}, 'ft/validation.jsonl');
    assert.deepEqual([...validation.errors, ...validation.warnings], []);
    assert.equal(validation.ok, true);
    const nemo = await validateLines([good], TARGETS.nemo);
    assert.deepEqual(nemo.warnings, []);
  });

  it('keeps the first five line numbers but counts them all', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? good : '{"messages":[]}'));
    const report = await validateLines(lines, TARGETS.openai);
    const summary = report.errors.find((s) => s.code === 'missing_messages_list');
    assert.ok(summary);
    assert.equal(summary.count, 6);
    assert.deepEqual(summary.lines, [2, 4, 6, 8, 10]);
    assert.equal(report.linesWithErrors, 6);
  });

  it('flags examples over the token limit', async () => {
    const long = JSON.stringify({ messages: [{ role: 'user', content: 'word '.repeat(200) }, { role: 'assistant', content: 'ok' }] });
    const report = await validateLines([good, long], TARGETS.nemo, { tokenLimit: 100 });
    assert.equal(report.overTokenLimit, 1);
    assert.deepEqual(report.warnings.find((w) => w.code === 'over_token_limit')?.lines, [2]);
    assert.equal(report.tokenLimit, 100);
  });

  it('counts cl100k_base when asked', async () => {
    const report = await validateLines([good], TARGETS.nemo, { encoding: 'cl100k_base' });
    assert.equal(report.tokens.encoding, 'cl100k_base');
    assert.ok(report.tokens.total.total > 0);
  });
});

describe('an empty file', () => {
  it('is no training file for any target, and a validation file only for the targets that take an empty one', async () => {
    const dir = tempDir();
    for (const name of Object.keys(TARGETS) as TargetName[]) {
      for (const file of ['training.jsonl', 'data.jsonl', 'validation.jsonl', 'validation-002.jsonl']) {
        const at = join(dir, name, file);
        mkdirSync(join(dir, name), { recursive: true });
        writeFileSync(at, '');
        const report = await validateFile(at, TARGETS[name]);
        const refused = !file.startsWith('validation') || TARGETS[name].rejectsEmptyValidation === true;
        assert.equal(report.examples, 0);
        assert.equal(report.ok, !refused, `${name} ${file}`);
        assert.deepEqual(report.errors.map((e) => e.code), refused ? ['no_examples'] : [], `${name} ${file}`);
      }
    }
  });
});
