/**
 * The adversarial suite: real sample lines mutated the ways a disk, a crash or a careless
 * tool breaks them (truncation, byte flips, raw control bytes, invalid UTF-8, deep nesting,
 * repeated keys, huge numbers, lone surrogates), 10,000 and more of them, seeded, through
 * stats, verify, scan, dedupe and export. Every command must come through without a crash,
 * count each non-blank line once as a record or as damaged, call damaged exactly the lines
 * that Python's orjson refuses (or that are not Synalinks records), and write only lines
 * orjson loads. The CLI runs once per command over a tree holding every mutated line.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { runCli, SAMPLES, GOLDEN, seededRandom, tempDir, type CliResult } from './helpers.js';
import { hasOrjson, NO_ORJSON, traceFileTruth, unloadableLines, type FileTruth } from './strict-reference.js';

const SEED = 20261130;
const FILES = 40;
const LINES_PER_FILE = 260;


function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The sample and golden lines that are well-formed Synalinks records. */
function seedLines(): Buffer[] {
  const seeds: Buffer[] = [];
  for (const file of [...jsonlFiles(SAMPLES), ...jsonlFiles(GOLDEN)]) {
    for (const line of readFileSync(file).toString('utf8').split('\n')) {
      try {
        const value = JSON.parse(line) as Record<string, unknown>;
        if ('synalinks_version' in value && Array.isArray(value.messages)) seeds.push(Buffer.from(line, 'utf8'));
      } catch {
        // not a record: not a seed
      }
    }
  }
  return seeds;
}

const INVALID_UTF8 = [
  [0xc0, 0x80], // overlong NUL
  [0xc1, 0xbf], // overlong
  [0xe0, 0x80, 0xaf], // overlong '/'
  [0xed, 0xa0, 0x80], // an encoded high surrogate
  [0xed, 0xbf, 0xbf], // an encoded low surrogate
  [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
  [0xe2, 0x82], // cut short
  [0x80], // a stray continuation byte
  [0xff],
  [0xf0, 0x9f, 0x98], // an emoji cut short
].map((b) => Buffer.from(b));

const ESCAPES = ['\\ud800', '\\udc00', '\\ud800\\u0041', '\\udbff\\ud800', '\\uDFFF', '\\ud83d\\ude00', '\\u00e9', '\\u12', '\\x41', "\\'", '\\0', '\\U0041'];

const NUMBERS = [
  '18446744073709551615',
  '18446744073709551616',
  '-9223372036854775809',
  '1e400',
  '-1e400',
  '1E+309',
  '1e308',
  '1.7976931348623157e308',
  '1.7976931348623159e308',
  '1.5e-400',
  '0e99999',
  '123456789012345678901234567890.5',
  '1' + '0'.repeat(308),
  '2' + '0'.repeat(308),
  '9'.repeat(400),
  '01',
  '1.',
  '-',
  '1e',
  '.5',
];

const DEPTHS = [1000, 1022, 1023, 1024, 1025, 1030, 5000, 6000, 20000];

/** Byte offsets just after an opening quote of a string value (`":"` then `"`). */
function stringStarts(line: Buffer): number[] {
  const starts: number[] = [];
  for (let at = line.indexOf('":"'); at !== -1; at = line.indexOf('":"', at + 1)) starts.push(at + 3);
  return starts;
}

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

function splice(line: Buffer, at: number, remove: number, insert: Buffer | string): Buffer {
  return Buffer.concat([line.subarray(0, at), Buffer.from(insert as string), line.subarray(at + remove)]);
}

function nested(depth: number, random: () => number): string {
  if (random() < 0.5) return '['.repeat(depth) + ']'.repeat(depth);
  return '{"k":'.repeat(depth - 1) + '{"k":1}' + '}'.repeat(depth - 1);
}

/** One mutation of a seed line; every kind the suite covers, chosen at random. */
function mutate(seed: Buffer, random: () => number): Buffer {
  const kind = Math.floor(random() * 10);
  const at = () => Math.floor(random() * seed.length);
  const inString = () => pick(random, stringStarts(seed).length > 0 ? stringStarts(seed) : [1]);
  switch (kind) {
    case 0: // truncation
      return seed.subarray(0, at());
    case 1: {
      // byte flips (never a newline, which would make two lines)
      const out = Buffer.from(seed);
      const flips = 1 + Math.floor(random() * 3);
      for (let i = 0; i < flips; i++) {
        const p = at();
        const value = out[p] ^ (1 << Math.floor(random() * 8));
        out[p] = value === 0x0a ? 0x0b : value;
      }
      return out;
    }
    case 2: {
      // a raw control byte, inside a string or anywhere
      let byte = Math.floor(random() * 0x20);
      if (byte === 0x0a) byte = 0x09;
      return splice(seed, random() < 0.8 ? inString() : at(), 0, Buffer.from([byte]));
    }
    case 3:
      return splice(seed, random() < 0.8 ? inString() : at(), 0, pick(random, INVALID_UTF8));
    case 4: {
      // deep nesting as the value of a new key, or inside the messages list
      const deep = nested(pick(random, DEPTHS), random);
      if (random() < 0.5) return splice(seed, 1, 0, `"deep":${deep},`);
      const messages = seed.indexOf('"messages":[');
      return splice(seed, messages + '"messages":['.length, 0, `${deep},`);
    }
    case 5: {
      // a repeated key: top level (the later value wins) or inside a message
      const choice = Math.floor(random() * 4);
      if (choice === 0) return splice(seed, seed.length - 1, 0, ',"messages":"not a list"');
      if (choice === 1) return splice(seed, seed.length - 1, 0, ',"messages":[]');
      if (choice === 2) return splice(seed, 1, 0, '"synalinks_version":null,"messages":7,');
      const role = seed.indexOf('{"role":');
      return role === -1 ? seed : splice(seed, role + 1, 0, '"role":"duplicate","content":1,');
    }
    case 6: {
      // a huge or malformed number in place of a recorded one, or under a new key
      const number = pick(random, NUMBERS);
      const match = /"(timestamp|duration|cost|prompt_tokens)":(-?[0-9.eE+-]+)/.exec(seed.toString('latin1'));
      if (match === null || random() < 0.3) return splice(seed, 1, 0, `"big":${number},`);
      const start = match.index + match[1]!.length + 3;
      return splice(seed, start, match[2]!.length, number);
    }
    case 7:
      // an escape: lone surrogates, a valid pair, unknown escapes
      return splice(seed, inString(), 0, pick(random, ESCAPES));
    case 8: {
      // several at once
      return mutate(mutate(seed, random), random);
    }
    default:
      // untouched, or only spaces and a CR around it
      return random() < 0.5 ? seed : Buffer.concat([Buffer.from(' \t'), seed, Buffer.from(' \r')]);
  }
}

interface Tree {
  root: string;
  files: string[];
  truth: Record<string, FileTruth>;
  lines: number;
  damaged: Set<string>;
}

function buildTree(): Tree {
  const random = seededRandom(SEED);
  const seeds = seedLines();
  assert.ok(seeds.length >= 20, `expected sample lines to mutate, found ${seeds.length}`);
  const root = path.join(tempDir('traces-fuzz-'), 'tree');
  const files: string[] = [];
  for (let f = 0; f < FILES; f++) {
    const module = `module_${f % 8}`;
    const dir = path.join(root, `program_${f % 3}`, module);
    mkdirSync(dir, { recursive: true });
    const lines: Buffer[] = [];
    for (let i = 0; i < LINES_PER_FILE; i++) {
      lines.push(mutate(pick(random, seeds), random));
      if (random() < 0.01) lines.push(Buffer.from(random() < 0.5 ? '' : ' \t'));
    }
    const file = path.join(dir, `${module}_20260101-${String(100000 + f).slice(-6)}.jsonl`);
    // Most files end with a newline; some stop mid-line, as a crash leaves them.
    writeFileSync(file, Buffer.concat([Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])).subarray(0, random() < 0.8 ? undefined : -1)]));
    files.push(file);
  }
  const truth = traceFileTruth(files);
  let total = 0;
  const damaged = new Set<string>();
  for (const file of files) {
    total += truth[file]!.lines;
    for (const line of truth[file]!.damaged) damaged.add(`${file}:${line}`);
  }
  return { root, files, truth, lines: total, damaged };
}

const STACK_TRACE = /^\s+at .+:\d+:\d+\)?$/m;

function assertNoCrash(name: string, result: CliResult): void {
  assert.ok([0, 1, 2].includes(result.status), `${name} exited ${result.status}: ${result.stderr.slice(0, 2000)}`);
  assert.doesNotMatch(result.stderr, STACK_TRACE, `${name} printed a stack trace`);
  assert.doesNotMatch(result.stderr, /RangeError|SyntaxError|TypeError|Maximum call stack/, `${name}: ${result.stderr.slice(0, 2000)}`);
}

function damagedInManifest(out: string): Set<string> {
  const found = new Set<string>();
  for (const text of readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').split('\n')) {
    if (text === '') continue;
    const entry = JSON.parse(text) as { file: string; line: number; reason: string };
    if (entry.reason === 'damaged') found.add(`${entry.file}:${entry.line}`);
  }
  return found;
}

function difference(a: Set<string>, b: Set<string>): string[] {
  return [...a].filter((x) => !b.has(x)).slice(0, 10);
}

describe('adversarial fuzz: mutated sample lines through every reading command', { skip: hasOrjson() ? false : NO_ORJSON }, () => {
  let tree: Tree;

  before(() => {
    tree = buildTree();
  });

  it('builds at least 10,000 mutated lines, of every kind, some damaged and some not', () => {
    assert.ok(tree.lines >= 10_000, `only ${tree.lines} non-blank lines`);
    assert.ok(tree.damaged.size > tree.lines * 0.3, `only ${tree.damaged.size} damaged lines`);
    assert.ok(tree.damaged.size < tree.lines * 0.9, `${tree.damaged.size} damaged lines of ${tree.lines}`);
  });

  it('stats: no crash; records plus damaged lines are the non-blank lines; damaged as orjson says', () => {
    const result = runCli(['stats', tree.root, '--json']);
    assertNoCrash('stats', result);
    const stats = JSON.parse(result.stdout) as { records: number; damaged_lines: number; damaged: { file: string; line: number }[] };
    assert.equal(stats.damaged_lines, tree.damaged.size);
    assert.equal(stats.records + stats.damaged_lines, tree.lines);
    for (const listed of stats.damaged) assert.ok(tree.damaged.has(`${listed.file}:${listed.line}`), `${listed.file}:${listed.line} is not damaged by orjson's reading`);
  });

  it('verify: no crash; checks every record and counts the same damaged lines', () => {
    const result = runCli(['verify', tree.root, '--json']);
    assertNoCrash('verify', result);
    const verify = JSON.parse(result.stdout) as { checked: number; damaged_lines: number };
    assert.equal(verify.damaged_lines, tree.damaged.size);
    assert.equal(verify.checked + verify.damaged_lines, tree.lines);
  });

  it('scan: no crash; scans every record', () => {
    const result = runCli(['scan', tree.root, '--json']);
    assertNoCrash('scan', result);
    const scan = JSON.parse(result.stdout) as { records: number; damaged_lines: number };
    assert.equal(scan.records, tree.lines - tree.damaged.size);
    assert.equal(scan.damaged_lines, tree.damaged.size);
  });

  it('dedupe: no crash; its manifest names exactly the damaged lines', () => {
    const out = path.join(tempDir('traces-fuzz-dedupe-'), 'out');
    const result = runCli(['dedupe', tree.root, '--out', out, '--json']);
    assertNoCrash('dedupe', result);
    const summary = JSON.parse(result.stdout) as { records_read: number; damaged_lines: number };
    assert.equal(summary.damaged_lines, tree.damaged.size);
    assert.equal(summary.records_read + summary.damaged_lines, tree.lines);
    const listed = damagedInManifest(out);
    assert.deepEqual(difference(listed, tree.damaged), [], 'listed as damaged, but orjson loads them as records');
    assert.deepEqual(difference(tree.damaged, listed), [], 'damaged by orjson, but not listed');
    // What dedupe copies is recorded lines as they stand: they load too.
    assert.deepEqual(unloadableLines(jsonlFiles(out).filter((f) => !f.includes('_traces'))), []);
  });

  it('export: no crash; its manifest names exactly the damaged lines; every written line loads in orjson', () => {
    const out = path.join(tempDir('traces-fuzz-export-'), 'out');
    const result = runCli(['export', tree.root, '--format', 'nemo', '--key', 'conversation', '--out', out, '--json']);
    assertNoCrash('export', result);
    const listed = damagedInManifest(out);
    assert.deepEqual(difference(listed, tree.damaged), [], 'listed as damaged, but orjson loads them as records');
    assert.deepEqual(difference(tree.damaged, listed), [], 'damaged by orjson, but not listed');
    const written = jsonlFiles(out);
    assert.ok(written.some((f) => f.endsWith('training.jsonl')), 'export wrote no training file');
    assert.deepEqual(unloadableLines(written), []);
  });
});
