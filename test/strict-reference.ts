/**
 * Python's orjson as the strict reference for what a damaged line is, run once per batch:
 * a test hands it many lines or files and gets every verdict back from one process.
 */
import { spawnSync } from 'node:child_process';

export function hasOrjson(): boolean {
  return spawnSync('python3', ['-c', 'import orjson'], { stdio: 'ignore' }).status === 0;
}

export const NO_ORJSON = 'python3 with orjson not available: no strict reference to compare with';

/**
 * orjson refuses nesting deeper than 1024 since 3.9.15 ("Recursion limit reached"); older
 * versions load any depth (and crash on some), so the rule is applied here explicitly.
 */
const PYTHON_VERDICT = String.raw`
import orjson
MAX_DEPTH = 1024

def depth(value):
    deepest = 0
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v)
    return deepest

def too_deep(text):
    # Before parsing: orjson < 3.9.15 crashes on some texts nested far past the limit.
    level = 0
    in_string = False
    escaped = False
    for c in text:
        if in_string:
            if escaped: escaped = False
            elif c == 0x5c: escaped = True
            elif c == 0x22: in_string = False
        elif c == 0x22: in_string = True
        elif c == 0x5b or c == 0x7b:
            level += 1
            if level > MAX_DEPTH: return True
        elif c == 0x5d or c == 0x7d: level -= 1
    return False

def json_verdict(text):
    """None when a strict parser loads the text, else why not."""
    if text.count(b'[') + text.count(b'{') > MAX_DEPTH and too_deep(text): return 'too deep'
    try:
        value = orjson.loads(text)
    except Exception as e:
        return str(e) or 'rejected'
    if depth(value) > MAX_DEPTH: return 'too deep'
    return None

def record_verdict(line):
    """None when the line is a Synalinks record, else why not."""
    why = json_verdict(line)
    if why is not None: return why
    value = orjson.loads(line)
    if not isinstance(value, dict): return 'not an object'
    if 'synalinks_version' not in value: return 'no synalinks_version'
    if not isinstance(value.get('messages'), list): return 'no messages list'
    return None

def file_lines(data):
    """(line number, bytes) of the non-blank lines, split as traces splits them."""
    out = []
    for number, line in enumerate(data.split(b'\n'), 1):
        if line.endswith(b'\r'): line = line[:-1]
        if line.strip(b' \t\r') == b'': continue
        out.append((number, line))
    # A file ending with a newline has no line after it.
    return out
`;

function runPython(program: string, input: string): unknown {
  const result = spawnSync('python3', ['-c', `${PYTHON_VERDICT}\n${program}`], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (result.status !== 0) throw new Error(`python3 failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** For each JSON text: null when orjson loads it (nested at most 1024 deep), else its reason. */
export function strictVerdicts(texts: readonly Buffer[]): (string | null)[] {
  const program = String.raw`
import sys, json, base64
texts = [base64.b64decode(t) for t in json.load(sys.stdin)]
print(json.dumps([json_verdict(t) for t in texts]))
`;
  return runPython(program, JSON.stringify(texts.map((t) => t.toString('base64')))) as (string | null)[];
}

export interface FileTruth {
  /** Non-blank lines. */
  lines: number;
  /** Line numbers of the lines that are not Synalinks records a strict parser loads. */
  damaged: number[];
}

/** Per trace file: its non-blank lines and which of them are damaged, by orjson's reading. */
export function traceFileTruth(files: readonly string[]): Record<string, FileTruth> {
  const program = String.raw`
import sys, json
truth = {}
for path in json.load(sys.stdin):
    with open(path, 'rb') as f:
        lines = file_lines(f.read())
    truth[path] = {'lines': len(lines), 'damaged': [n for n, line in lines if record_verdict(line) is not None]}
print(json.dumps(truth))
`;
  return runPython(program, JSON.stringify(files)) as Record<string, FileTruth>;
}

/** Every line of the files that a strict parser refuses (file, line number, reason). */
export function unloadableLines(files: readonly string[]): { file: string; line: number; reason: string }[] {
  const program = String.raw`
import sys, json
bad = []
for path in json.load(sys.stdin):
    with open(path, 'rb') as f:
        data = f.read()
    for number, line in enumerate(data.split(b'\n'), 1):
        if line == b'' and number == data.count(b'\n') + 1: continue
        why = json_verdict(line)
        if why is not None: bad.append({'file': path, 'line': number, 'reason': why})
print(json.dumps(bad))
`;
  return runPython(program, JSON.stringify(files)) as { file: string; line: number; reason: string }[];
}
