/**
 * Every `traces` command the documentation shows works: each fenced shell block of README.md
 * and of every docs/*.md (found by listing the folder, so a new document is covered without
 * being named here) is run, command by command in the document's order, on a copy of the
 * samples, and must exit 0. A document's commands share one work folder, so `export --out ft`
 * followed by `validate ft/training.jsonl` works as a reader following along would see it.
 *
 * The work folder holds `samples/synalinks`, a home whose `~/.synalinks` is the samples too
 * (so `traces stats` and `~/.synalinks` read them), and `traces` on PATH. A command runs in
 * `sh`, so quotes, `~`, pipes and redirections mean what they mean to the reader.
 *
 * A block may carry annotations, each an HTML comment on a line of its own just before the
 * fence (several may stack); the reader of the rendered page never sees them:
 *
 *   <!-- docs-test: skip (why) -->               the block is not run
 *   <!-- docs-test: skip PREFIX (why) -->        its commands starting with PREFIX are not run
 *   <!-- docs-test: exit N -->                   its commands exit N instead of 0
 *   <!-- docs-test: exit N PREFIX -->            those starting with PREFIX exit N
 *
 * The README's quick start is also checked against the output it shows.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO, SAMPLES, tempDir } from './helpers.js';

/** Fence info strings of blocks a reader types into a shell. */
const SHELL_FENCES = new Set(['', 'sh', 'shell', 'bash', 'console', 'zsh']);

interface Annotation {
  kind: 'skip' | 'exit';
  code: number;
  /** Commands it applies to: those starting with this, or all when empty. */
  prefix: string;
}

export interface DocCommand {
  doc: string;
  /** 1-based line of the command in the document. */
  line: number;
  /** As run: `./bin/traces.js` and `npx traces` written as `traces`. */
  command: string;
  /** null: not run. */
  expectedExit: number | null;
}

/** `<!-- docs-test: exit 1 traces scan (why) -->` → its annotation; null for other comments. */
function parseAnnotation(line: string): Annotation | null {
  const match = /^<!--\s*docs-test:\s*(skip|exit)\b(.*?)-->\s*$/.exec(line.trim());
  if (match === null) return null;
  // A parenthesised reason, anywhere after the kind, is for the reader of the source only.
  let rest = match[2].replace(/\([^)]*\)/g, '').trim();
  let code = 0;
  if (match[1] === 'exit') {
    const number = /^(\d+)\s*(.*)$/.exec(rest);
    assert.ok(number !== null, `docs-test: exit needs a code: ${line}`);
    code = Number(number[1]);
    rest = number[2].trim();
  }
  return { kind: match[1] as 'skip' | 'exit', code, prefix: rest };
}

/** The command a documented line runs, or null when it runs no traces command. */
function tracesCommand(text: string): string | null {
  let command = text.trim().replace(/^\$\s+/, '');
  // The quick start installs first: the suite runs on the installed clone already.
  command = command.replace(/^npm ci\s*&&\s*/, '');
  command = command.replace(/^(?:\.\/bin\/traces\.js|npx traces)(?=\s)/, 'traces');
  return /^traces\s/.test(command) ? command : null;
}

/** Every traces command in the fenced shell blocks of a Markdown text, with what it must exit. */
export function documentedCommands(doc: string, text: string): DocCommand[] {
  const lines = text.split('\n');
  const commands: DocCommand[] = [];
  let annotations: Annotation[] = [];
  for (let i = 0; i < lines.length; i++) {
    const annotation = parseAnnotation(lines[i]);
    if (annotation !== null) {
      annotations.push(annotation);
      continue;
    }
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]);
    if (fence === null) {
      if (lines[i].trim() !== '') annotations = [];
      continue;
    }
    const [, , marker, info] = fence;
    const blockAnnotations = annotations;
    annotations = [];
    let j = i + 1;
    const body: { text: string; line: number }[] = [];
    while (j < lines.length && !lines[j].trim().startsWith(marker)) body.push({ text: lines[j], line: ++j });
    i = j;
    if (!SHELL_FENCES.has(info)) continue;
    for (let k = 0; k < body.length; k++) {
      let text = body[k].text;
      const line = body[k].line;
      while (text.endsWith('\\') && k + 1 < body.length) text = `${text.slice(0, -1)} ${body[++k].text.trim()}`;
      const command = tracesCommand(text);
      if (command === null) continue;
      let expectedExit: number | null = 0;
      for (const a of blockAnnotations) {
        if (a.prefix !== '' && !command.startsWith(a.prefix)) continue;
        expectedExit = a.kind === 'skip' ? null : a.code;
      }
      commands.push({ doc, line, command, expectedExit });
    }
  }
  return commands;
}

/** README.md and every docs/*.md, by path relative to the repository. */
function documents(): string[] {
  const docs = readdirSync(path.join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** A work folder as a reader's: the samples, a home whose ~/.synalinks holds them, traces on PATH. */
function workFolder(): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = tempDir('traces-docs-');
  cpSync(SAMPLES, path.join(cwd, 'samples', 'synalinks'), { recursive: true });
  const home = path.join(cwd, '.home');
  cpSync(SAMPLES, path.join(home, '.synalinks'), { recursive: true });
  // Paths into the dependencies (a tokenizer folder a package ships) read as they do in a clone.
  symlinkSync(path.join(REPO, 'node_modules'), path.join(cwd, 'node_modules'));
  // And the chat templates traces ships (templates/), as in a clone.
  symlinkSync(path.join(REPO, 'templates'), path.join(cwd, 'templates'));
  const bin = path.join(cwd, '.bin');
  mkdirSync(bin);
  const shim = path.join(bin, 'traces');
  writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(REPO, 'bin', 'traces.js'))} "$@"\n`);
  chmodSync(shim, 0o755);
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
  delete env.SYNALINKS_HOME;
  return { cwd, env };
}

function run(command: string, work: { cwd: string; env: NodeJS.ProcessEnv }): { status: number; stdout: string; stderr: string } {
  const result = spawnSync('sh', ['-c', command], { cwd: work.cwd, env: work.env, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

describe('the annotations of documented commands', () => {
  it('finds traces commands in shell blocks only, joins continued lines, and applies skip and exit', () => {
    const text = [
      '```sh',
      'traces stats samples/synalinks',
      'npm ci && ./bin/traces.js export samples/synalinks --format nemo \\',
      '  --out dataset',
      'ls dataset',
      '```',
      '```sql',
      'traces is not a shell command here',
      '```',
      '<!-- docs-test: skip traces browse (needs a terminal) -->',
      '<!-- docs-test: exit 1 traces scan -->',
      '```',
      'traces browse samples/synalinks',
      '$ traces scan samples/synalinks',
      'traces runs samples/synalinks',
      '```',
      '',
      '```sh',
      'traces verify samples/synalinks',
      '```',
    ].join('\n');
    assert.deepEqual(
      documentedCommands('x.md', text).map((c) => [c.line, c.command, c.expectedExit]),
      [
        [2, 'traces stats samples/synalinks', 0],
        [3, 'traces export samples/synalinks --format nemo  --out dataset', 0],
        [13, 'traces browse samples/synalinks', null],
        [14, 'traces scan samples/synalinks', 1],
        [15, 'traces runs samples/synalinks', 0],
        // An annotation covers only the block right after it.
        [19, 'traces verify samples/synalinks', 0],
      ],
    );
  });
});

for (const doc of documents()) {
  const commands = documentedCommands(doc, readFileSync(path.join(REPO, doc), 'utf8'));
  describe(`the commands of ${doc}`, () => {
    const work = commands.some((c) => c.expectedExit !== null) ? workFolder() : null;
    for (const { line, command, expectedExit } of commands) {
      it(`${doc}:${line}: ${command}`, { skip: expectedExit === null ? 'annotated docs-test: skip' : false }, () => {
        const result = run(command, work!);
        assert.equal(result.status, expectedExit, `${doc}:${line}: ${command}\n${result.stderr}${result.stdout.slice(0, 2000)}`);
        assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
      });
    }
  });
}

describe("the README's quick start", () => {
  it('prints what the README shows it printing', () => {
    const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const shown = /<!-- quick-start output[^>]*-->\s*```text\n([\s\S]*?)```/.exec(readme);
    assert.ok(shown !== null, 'README.md shows the quick start output');
    const first = documentedCommands('README.md', readme)[0];
    assert.match(first.command, /^traces export samples\/synalinks /, 'the quick start is the first command');
    const result = run(first.command, workFolder());
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, shown[1]);
  });
});
