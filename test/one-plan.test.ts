/**
 * Issue 54's "one plan": the target's verdict is a stage of the plan, so no record others gave
 * way to is one the target refuses, and the verdict that depends on the whole run (tool
 * definitions inferred from every call) is settled without planning again.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli, synalinksLine, tempDir } from './helpers.js';

const call = (id: string, args: Record<string, unknown>) => ({ role: 'assistant', content: '', tool_calls: [{ id, type: 'function', function: { name: 'lookup', arguments: args } }] });

/**
 * A record asked twice (a duplicate names the first), and ten records calling the same tool
 * with two arguments of their own each: alone, each record's definition of `lookup` is short;
 * inferred from every call it lists 21 arguments.
 */
function toolTree(): string {
  const tree = path.join(tempDir(), 'tree');
  const dir = path.join(tree, 'prog', 'agent');
  mkdirSync(dir, { recursive: true });
  const asked = [{ role: 'user', content: 'find the capital of France' }, call('c0', { q: 'France' })];
  const lines = [
    synalinksLine({ index: 0, program: 'prog', module: 'agent', messages: asked }),
    synalinksLine({ index: 1, program: 'prog', module: 'agent', messages: asked }),
    ...Array.from({ length: 10 }, (_, k) => k + 2).map((i) =>
      synalinksLine({ index: i, program: 'prog', module: 'agent', messages: [{ role: 'user', content: `look up item ${i}` }, call(`c${i}`, { q: `item ${i}`, [`first_option_of_${i}`]: i, [`second_option_of_${i}`]: 'x' })] }),
    ),
  ];
  writeFileSync(path.join(dir, 'agent_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
  return tree;
}

interface ExampleEntry {
  call_id: string;
  tokens: number;
  merged: string[];
}

describe('one plan', () => {
  it('a kept record the run-wide tool definitions push over the limit is written with those it was judged with, not lost with its duplicate', () => {
    const tree = toolTree();
    const out = path.join(tempDir(), 'out');
    const limit = 150;
    const result = runCli(['export', tree, '--format', 'openai', '--max-example-tokens', String(limit), '--out', out, '--json']);
    assert.equal(result.status, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /\(pass \d+\)/);
    const report = JSON.parse(result.stdout) as { judged_tools_examples: { call_id: string; reason: string }[]; warnings: string[]; dropped: Record<string, number>; examples: Record<string, number> };
    const written = readFileSync(path.join(out, '_traces', 'examples.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as ExampleEntry);
    // The duplicate names the first record, which is written: every record is in the output or the manifest.
    const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { reason: string; kept?: string });
    const named = manifest.filter((d) => d.kept !== undefined).map((d) => d.kept!);
    assert.deepEqual(named, ['00000000-0000-4000-8000-000000000000']);
    for (const id of named) assert.ok(written.some((e) => e.call_id === id), `${id}, named as kept, is not written`);
    assert.equal(written.length + manifest.length, 12);
    // Every line keeps to the limit: those the run's definitions pushed over it carry their own calls' definitions.
    for (const entry of written) assert.ok(entry.tokens <= limit, `${entry.call_id}: ${entry.tokens} tokens`);
    assert.equal(report.judged_tools_examples.length, 11);
    assert.match(report.judged_tools_examples[0].reason, /^too_long: \d+ tokens > --max-example-tokens 150$/);
    assert.ok(report.warnings.some((w) => w.startsWith('11 example(s) carry the tool definitions inferred from their own calls')), report.warnings.join('\n'));
    const lines = ['training.jsonl', 'validation.jsonl'].flatMap((file) => readFileSync(path.join(out, file), 'utf8').split('\n'));
    assert.equal(lines.filter((line) => line.includes('capital of France')).length, 1);
  });

  it('with no limit the run-wide definitions are written and nothing is judged apart', () => {
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', toolTree(), '--format', 'openai', '--out', out, '--json']);
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { judged_tools_examples: unknown[]; tools: { inferred_definitions: { function: { parameters: { properties: object } } }[] } };
    assert.deepEqual(report.judged_tools_examples, []);
    assert.equal(Object.keys(report.tools.inferred_definitions[0].function.parameters.properties).length, 21);
    const lines = readFileSync(path.join(out, 'training.jsonl'), 'utf8').trim().split('\n');
    for (const line of lines) assert.equal(Object.keys((JSON.parse(line) as { tools: { function: { parameters: { properties: object } } }[] }).tools[0].function.parameters.properties).length, 21);
  });
});
