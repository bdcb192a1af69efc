import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { countExampleTokens, loadTokenCounter } from '../src/targets/tokens.js';
import { SAMPLES, runCli, runCliJson, synalinksLine, tempDir, UNWRAPPED } from './helpers.js';

type Example = { messages: { role: string; content?: unknown; tool_calls?: unknown[]; reasoning_content?: string }[]; tools?: unknown[] };

function examples(file: string): Example[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

function exportTo(args: string[]): { out: string; report: Record<string, any> } {
  const out = path.join(tempDir(), 'out');
  const result = runCli(['export', SAMPLES, '--out', out, '--json', ...args]);
  assert.equal(result.status, 0, result.stderr);
  return { out, report: JSON.parse(result.stdout) };
}

function firstUser(example: Example): string {
  return JSON.stringify(example.messages.find((m) => m.role === 'user')?.content ?? null);
}

describe('traces export', () => {
  for (const format of ['nemo', 'nemo-customizer', 'openai']) {
    it(`${format}: writes files its own validator accepts, accounting for every kept record`, () => {
      const { out, report } = exportTo(['--format', format]);
      for (const file of ['training.jsonl', 'validation.jsonl']) {
        const check = runCliJson<{ ok: boolean; errors: unknown[] }>(['validate', path.join(out, file), '--format', format]);
        assert.deepEqual(check.errors, [], `${format} ${file}`);
      }
      const written = report.examples.training + report.examples.validation;
      const exportDrops = ['not_representable', 'empty', 'no_completion', 'special_token', 'tool_sequence', 'too_long'].reduce((n, r) => n + (report.dropped[r] ?? 0), 0);
      assert.equal(written + exportDrops, report.kept_after_curation);
      assert.equal(examples(path.join(out, 'training.jsonl')).length, report.examples.training);
      const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').trim().split('\n');
      // Kept records a flagging stage found something in are listed too, with "flagged": true (the samples' refusal).
      const flagged = Object.values((report.quality?.flagged ?? {}) as Record<string, number>).reduce((n, c) => n + c, 0);
      assert.equal(manifest.length, report.records_read - report.kept_after_curation + exportDrops + report.damaged_lines + flagged);
    });
  }

  it('ends every example with its record completion, after dedupe and collapse', () => {
    const { out } = exportTo(['--format', 'nemo', '--validation-fraction', '0']);
    const written = examples(path.join(out, 'training.jsonl'));
    const kept = path.join(tempDir(), 'kept');
    runCliJson(['dedupe', SAMPLES, '--status', 'ok', '--trajectories', 'last', '--out', kept]);
    const completions: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory() && entry.name !== '_traces') walk(full);
        else if (entry.name.endsWith('.jsonl')) {
          for (const line of readFileSync(full, 'utf8').split('\n').filter(Boolean)) {
            const record = JSON.parse(line);
            if (JSON.stringify(record.messages).includes('image_url')) continue; // not representable for nemo
            completions.push(JSON.stringify(record.messages.at(-1).content));
          }
        }
      }
    };
    walk(kept);
    assert.equal(written.length, completions.length);
    assert.deepEqual(written.map((e) => JSON.stringify(e.messages.at(-1)!.content)).sort(), completions.sort());
    for (const example of written) assert.equal(example.messages.at(-1)!.role, 'assistant');
  });

  it('handles tool calls and reasoning as each target requires', () => {
    const nemo = examples(path.join(exportTo(['--format', 'nemo', '--validation-fraction', '0']).out, 'training.jsonl'));
    const agent = nemo.find((e) => e.messages.some((m) => m.role === 'tool'))!;
    const call = agent.messages.find((m) => m.tool_calls)!.tool_calls![0] as { function: { arguments: unknown } };
    // A string is what reaches AutoModel's chat template unchanged (objects are re-serialized by json.dumps).
    assert.equal(typeof call.function.arguments, 'string', 'nemo writes arguments as the JSON string');
    assert.ok(agent.tools && agent.tools.length > 0, 'examples with tool calls carry tools');
    assert.ok(nemo.some((e) => typeof e.messages.at(-1)!.reasoning_content === 'string'), 'nemo keeps reasoning');
    const openai = examples(path.join(exportTo(['--format', 'openai', '--validation-fraction', '0']).out, 'training.jsonl'));
    const openaiCall = openai.find((e) => e.messages.some((m) => m.tool_calls))!.messages.find((m) => m.tool_calls)!.tool_calls![0] as {
      function: { arguments: unknown };
    };
    assert.equal(typeof openaiCall.function.arguments, 'string', 'openai wants arguments as a JSON string');
    assert.ok(openai.every((e) => e.messages.every((m) => m.reasoning_content === undefined)), 'openai drops reasoning');
    const inline = examples(path.join(exportTo(['--format', 'nemo', '--reasoning', 'inline', '--validation-fraction', '0']).out, 'training.jsonl'));
    assert.ok(inline.some((e) => String(e.messages.at(-1)!.content).startsWith('<think>')));
  });

  it('splits by first user message: no group on both sides, and the same bytes twice', () => {
    const first = exportTo(['--format', 'openai', '--validation-fraction', '0.5', '--seed', '3']);
    const training = examples(path.join(first.out, 'training.jsonl'));
    const validation = examples(path.join(first.out, 'validation.jsonl'));
    assert.ok(training.length > 0 && validation.length > 0);
    const trainingGroups = new Set(training.map(firstUser));
    for (const example of validation) assert.ok(!trainingGroups.has(firstUser(example)), `group ${firstUser(example)} on both sides`);
    const second = exportTo(['--format', 'openai', '--validation-fraction', '0.5', '--seed', '3']);
    for (const file of ['training.jsonl', 'validation.jsonl']) {
      assert.ok(readFileSync(path.join(first.out, file)).equals(readFileSync(path.join(second.out, file))), file);
    }
    const none = exportTo(['--format', 'openai', '--validation-fraction', '0']);
    assert.equal(readFileSync(path.join(none.out, 'validation.jsonl'), 'utf8'), '');
  });

  it('reports tokens per split and drops examples over --max-example-tokens', () => {
    const { report } = exportTo(['--format', 'nemo', '--max-example-tokens', '150']);
    assert.ok(report.dropped.too_long > 0);
    const training = report.files.find((f: { split: string }) => f.split === 'training');
    assert.ok(training.tokens.total.max <= 150);
    assert.equal(training.tokens.encoding, 'o200k_base');
    assert.ok(training.tokens.assistant.median > 0);
  });

  it('says which tools were inferred, and uses supplied definitions', () => {
    const inferred = exportTo(['--format', 'openai']);
    assert.deepEqual(inferred.report.tools.inferred.sort(), ['add', 'multiply'].sort());
    const toolsFile = path.join(tempDir(), 'tools.json');
    writeFileSync(
      toolsFile,
      JSON.stringify([
        { type: 'function', function: { name: 'multiply', description: 'Multiply two numbers.', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } } },
      ]),
    );
    const supplied = exportTo(['--format', 'openai', '--tools', toolsFile]);
    assert.deepEqual(supplied.report.tools.supplied, ['multiply']);
    assert.ok(!supplied.report.tools.inferred.includes('multiply'));
  });

  it('--group-by module writes one dataset per program and module', () => {
    const { out } = exportTo(['--format', 'nemo', '--group-by', 'module']);
    const programs = readdirSync(out).filter((e) => !['_traces', 'report.json'].includes(e)).sort();
    assert.deepEqual(programs, ['language_model', 'math_agent', 'my_program']);
    assert.ok(readdirSync(path.join(out, 'math_agent', 'final_generator_math_agent')).includes('training.jsonl'));
  });

  it('--group-by module over many small modules says each kind of warning once, and report.json keeps each file\'s', () => {
    const tree = path.join(tempDir(), 'modules');
    const line = readFileSync(path.join(SAMPLES, 'my_program', 'generator', 'generator_20260707-101530.jsonl'), 'utf8').split('\n')[0]!;
    const modules = Array.from({ length: 6 }, (_, i) => `m${i}`);
    modules.forEach((module, i) => {
      mkdirSync(path.join(tree, 'p', module), { recursive: true });
      const own = line
        .replace('"program":"my_program","module":"generator"', `"program":"p","module":"${module}"`)
        .replace(/"call_id":"[0-9a-f]/, `"call_id":"${i}`)
        .replace(/"inputs_hash":"[0-9a-f]/, `"inputs_hash":"${i}`);
      writeFileSync(path.join(tree, 'p', module, `${module}_20260707-101530.jsonl`), `${own}\n`);
    });
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', tree, '--out', out, '--format', 'openai', '--group-by', 'module'], UNWRAPPED);
    assert.equal(result.status, 0, result.stderr);
    const warnings = result.stderr.split('\n').filter((l) => l.startsWith('warning: '));
    assert.deepEqual(
      warnings.map((w) => w.replace(/ \(.*$/, '')),
      ['warning: no validation file written in 6 datasets'],
    );
    // OpenAI refuses each one-example training file: said once, last.
    const last = result.stderr.trimEnd().split('\n').at(-1)!;
    assert.match(last, /^openai will refuse 6 training files as they are \(.*p\/m0\/training\.jsonl, .*p\/m1\/training\.jsonl, .*p\/m2\/training\.jsonl, … 3 more; report\.json lists each\), the first: 1 training example: openai refuses/);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as { refused_by_trainer: unknown[]; warnings: string[] };
    assert.equal(report.refused_by_trainer.length, modules.length);
    assert.equal(report.warnings.length, 1);
  });

  it('leaves out the records of an exclusion file, and what an earlier export already holds', () => {
    const base = exportTo(['--format', 'nemo']);
    const exclude = path.join(tempDir(), 'exclude.txt');
    writeFileSync(exclude, '# from traces browse\n78e42908-154a-4f33-9623-fdc459c8c999\n');
    const excluded = exportTo(['--format', 'nemo', '--exclude', exclude]);
    assert.equal(excluded.report.dropped.excluded, 1);
    const total = (r: Record<string, any>) => r.examples.training + r.examples.validation;
    const finalStep = readFileSync(path.join(SAMPLES, 'math_agent', 'final_generator_math_agent', 'final_generator_math_agent_20260708-163045.jsonl'), 'utf8').split('\n')[0];
    const answer = JSON.stringify(JSON.parse(finalStep).messages.at(-1).content);
    const lastContents = (out: string) => examples(path.join(out, 'training.jsonl')).concat(examples(path.join(out, 'validation.jsonl'))).map((e) => JSON.stringify(e.messages.at(-1)!.content));
    assert.ok(lastContents(base.out).includes(answer));
    assert.ok(!lastContents(excluded.out).includes(answer), 'the excluded final step is gone');
    // Its run's previous step is no longer contained in a kept record, so it comes back.
    assert.equal(total(excluded.report), total(base.report));
    // Nothing new since the earlier export: no empty dataset is written, and the run says why.
    const againOut = path.join(tempDir(), 'again');
    const again = runCli(['export', SAMPLES, '--out', againOut, '--format', 'nemo', '--against', base.out]);
    assert.equal(again.status, 1, again.stderr);
    // The target's verdict comes before --against (every stage a record decides alone does): the record nemo cannot write is not counted as seen.
    assert.match(again.stderr, /no example to write: all 24 records read were dropped \(seen 21, status 2, not_representable 1\)/);
    assert.ok(!existsSync(againOut));
  });

  it('fails with exit 2 on bad options, writing nothing', () => {
    const out = path.join(tempDir(), 'out');
    for (const args of [
      ['--format', 'alpaca'],
      ['--format', 'openai', '--reasoning', 'keep'],
      ['--format', 'nemo', '--validation-fraction', '1.5'],
      // Every group in validation: no training file a trainer takes.
      ['--format', 'openai', '--validation-fraction', '1'],
      ['--format', 'nemo', '--validation-fraction', '1.0'],
      ['--format', 'nemo', '--tools', '/no/such/tools.json'],
      ['--format', 'nemo', '--max-example-tokens', '-3'],
      // What Number() reads but no one writes as a number on a command line.
      ['--format', 'nemo', '--max-file-mb', '0x10'],
      ['--format', 'nemo', '--max-example-tokens', ' 5'],
      ['--format', 'nemo', '--min-tokens', '0b1'],
      ['--format', 'nemo', '--near-duplicates', 'Infinity'],
      // Options of a training set mean nothing to recordings: refused, not ignored.
      ['--format', 'ask-recording', '--validation-fraction', '0.2'],
      ['--format', 'ask-recording', '--max-example-tokens', '100'],
      ['--format', 'ask-recording', '--group-by', 'module'],
      ['--format', 'ask-recording', '--seed', '0'],
    ]) {
      const result = runCli(['export', SAMPLES, '--out', out, ...args]);
      assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /traces: |error: /);
    }
    assert.throws(() => readdirSync(out));
    // A fraction that is no number is quoted as given, as every option's is.
    for (const given of ['abc', '', ' ']) {
      const result = runCli(['export', SAMPLES, '--out', out, '--format', 'nemo', '--validation-fraction', given]);
      assert.equal(result.stderr, `traces: --validation-fraction ${JSON.stringify(given)}: expected a number from 0 to below 1 (at 1 nothing trains)\n`);
    }
  });
});

describe('tool inference in export', () => {
  // Two steps of one agent run: the second repeats the first's tool call and makes another.
  const call = (id: string, args: Record<string, number>) => ({ role: 'assistant', content: '', tool_calls: [{ id, type: 'function', function: { name: 'add', arguments: args } }] });
  const result = (id: string) => ({ role: 'tool', content: '{"result":3}', tool_call_id: id, name: 'add' });
  const record = (callId: string, messages: unknown[], n: number) =>
    JSON.stringify({
      synalinks_version: '0.9.014',
      call_id: callId,
      parent_call_id: null,
      program: 'agent',
      module: 'step',
      timestamp: 1783412130 + n,
      messages,
      inputs_hash: String(n).repeat(64),
      outputs: { answer: 'ok' },
      config: { config: { model: 'openai/gpt-4o-mini' } },
      config_hash: 'c'.repeat(64),
    });
  const start = [{ role: 'system', content: 'Use the tools.' }, { role: 'user', content: 'What is 1 + 2, then 3 + 0?' }];
  const first = '11111111-1111-4111-8111-111111111111';
  const tree = tempDir();
  mkdirSync(path.join(tree, 'agent', 'step'), { recursive: true });
  writeFileSync(
    path.join(tree, 'agent', 'step', 'step_20260101-000000.jsonl'),
    [
      record(first, [...start, call('c1', { a: 1, b: 2 })], 1),
      record('22222222-2222-4222-8222-222222222222', [...start, call('c1', { a: 1, b: 2 }), result('c1'), call('c2', { a: 3 })], 2),
    ].join('\n') + '\n',
  );
  const exclude = path.join(tempDir(), 'exclude.txt');
  writeFileSync(exclude, `${first}\n`);

  for (const trajectories of ['last', 'all']) {
    it(`counts every call of every kept record, whatever an excluded step held before it (--trajectories ${trajectories})`, () => {
      for (const extra of [[], ['--exclude', exclude]]) {
        const out = path.join(tempDir(), 'out');
        const run = runCli(['export', tree, '--out', out, '--json', '--format', 'openai', '--trajectories', trajectories, ...extra]);
        assert.equal(run.status, 0, run.stderr);
        const definitions = JSON.parse(run.stdout).tools.inferred_definitions;
        assert.equal(definitions.length, 1, `${extra}`);
        // Both calls (c1 again in the second step): `b` is not in every call.
        assert.equal(definitions[0].function.description, 'Inferred by traces from 2 recorded calls.', `${extra}`);
        assert.deepEqual(definitions[0].function.parameters.required, ['a'], `${extra}`);
      }
    });
  }
});

describe('an export with no example to write', () => {
  it('exits 1 naming what the records were dropped as, and leaves the output as it was', () => {
    const out = path.join(tempDir(), 'dataset');
    mkdirSync(out);
    writeFileSync(path.join(out, 'training.jsonl'), '{"messages":[]}\n');
    for (const format of ['openai', 'nemo', 'nemo-customizer']) {
      const run = runCli(['export', SAMPLES, '--format', format, '--program', 'no-such-program', '--out', out, '--force']);
      assert.equal(run.status, 1, format);
      assert.match(run.stderr, /^traces: no example to write: all 24 records read were dropped \(filter 22, status 2\), and a trainer refuses an empty training file; nothing was written\. --dry-run -v lists each drop with its reason\n$/);
      assert.deepEqual(readdirSync(out), ['training.jsonl']);
      assert.equal(readFileSync(path.join(out, 'training.jsonl'), 'utf8'), '{"messages":[]}\n');
    }
    const json = runCli(['export', SAMPLES, '--format', 'openai', '--status', 'no_output', '--out', path.join(tempDir(), 'none'), '--json']);
    assert.equal(json.status, 1);
    const failure = JSON.parse(json.stdout) as { error: string; exit_code: number };
    assert.equal(failure.exit_code, 1);
    assert.match(failure.error, /^no example to write: all 24 records read were dropped \(/);
  });
});

describe('--train-on last with an encoding', () => {
  it('counts as trained only the last assistant turn, for openai (weights in the file) and nemo (the trainer option) alike', async () => {
    const counter = await loadTokenCounter('o200k_base');
    const tree = path.join(tempDir(), 'tree');
    mkdirSync(path.join(tree, 'p', 'm'), { recursive: true });
    const lines = Array.from({ length: 12 }, (_, index) =>
      synalinksLine({
        index,
        program: 'p',
        module: 'm',
        messages: [
          { role: 'user', content: `question ${index}` },
          { role: 'assistant', content: `a long first answer, number ${index}, with many words in it` },
          { role: 'user', content: 'and then?' },
          { role: 'assistant', content: `last ${index}` },
        ],
      }),
    );
    writeFileSync(path.join(tree, 'p', 'm', 'm_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
    for (const format of ['openai', 'nemo']) {
      const out = path.join(path.dirname(tree), format);
      const result = runCli(['export', tree, '--out', out, '--json', '--format', format, '--train-on', 'last', '--validation-fraction', '0']);
      assert.equal(result.status, 0, result.stderr);
      const report = JSON.parse(result.stdout) as Record<string, any>;
      const written = examples(path.join(out, 'training.jsonl'));
      const lastTurns = written.reduce((n, e) => n + counter.count(e.messages.at(-1)!.content as string), 0);
      assert.equal(report.tokens_by_split.training.trained_tokens, lastTurns, format);
      assert.equal(report.files[0].tokens.assistant.total, lastTurns, format);
      assert.equal(report.tokens_by_split.training.tokens, written.reduce((n, e) => n + countExampleTokens(counter, e).total, 0), format);
    }
  });
});
