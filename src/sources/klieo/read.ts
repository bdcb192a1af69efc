/**
 * klieo (Rust) runs: a `RunLog` JSON file (`{run_id, agent, status, steps, ...}`), a
 * `Capture` (`{run_id, run_log, llm_io: [...], ...}`), a JSON list of either, or one per
 * line. Each `llm_call` step becomes a record of the run's conversation:
 *
 * - its prompt and completion come from the capture's `llm_io` entry for that call (the
 *   i-th llm_call step pairs with `llm_io[i]`), else from the step's own
 *   `input.prompt` / `output`; a step with neither is a `no_output` record marked not
 *   exportable;
 * - the prompt holds only the last user turn: it is added as a user turn when it differs
 *   from the conversation's latest one, and a record after the run's first llm_call
 *   (whose earlier turns come from the run, not from the call's request) is `partial`;
 *   no turn is ever invented;
 * - the `tool_call` steps after an llm_call become tool messages answering its tool calls
 *   (from `llm_io` when it has them, else one call per following tool step);
 * - `summary_checkpoint` and `ops_event` steps are overhead: never records;
 * - every record of a failed or cancelled run, and a step with an error, is `exception`.
 *
 * `ref.line` is the 1-based position of the llm_call step among the file's llm_call steps.
 */
import type { DamagedLine, Message, Status, ToolCall, TraceRecord, Usage } from '../../record.js';
import type { TraceFile } from '../trace-file.js';
import { JsonStreamError, JsonTooLongError, streamJson } from '../json-stream.js';
import { RebuiltRecord } from '../rebuilt-record.js';
import type { SourceRun } from '../source-run.js';
import { count, isObject, num, str, type Json } from '../json-values.js';
import { writeJson } from '../../canonical/json-value.js';
import { epochSecondsOf, possibleDuration, possibleTime } from '../../time.js';
import { addCount } from '../../own.js';


export interface KlieoBatch {
  records: TraceRecord[];
  damaged: DamagedLine[];
  runs: SourceRun[];
  bytes: number;
}


function epoch(value: unknown): number | null {
  const text = str(value);
  if (text === null) return null;
  return epochSecondsOf(text);
}

function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (isObject(value)) return str(value.prompt) ?? str(value.content) ?? str(value.text);
  return null;
}

/** A completion: text as is; a structured output (any other JSON value) as compact JSON, as Synalinks records one. */
function completionText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const text = str((value as Json).content) ?? str((value as Json).text);
    if (text !== null) return text;
  }
  return writeJson(value);
}

function toolCallOf(call: Json, fallbackId: string): ToolCall {
  const fn = isObject(call.function) ? call.function : call;
  return {
    id: typeof call.id === 'string' && call.id !== '' ? call.id : fallbackId,
    type: str(call.type) ?? 'function',
    function: { name: str(fn.name) ?? '', arguments: fn.arguments ?? fn.input ?? {} },
  };
}

const OVERHEAD_KINDS = new Set(['summary_checkpoint', 'ops_event']);

/** Status of the run's records, from the run's own. */
function runStatus(status: string | null): SourceRun['status'] {
  if (status === 'failed' || status === 'cancelled') return 'exception';
  if (status === 'running') return 'running';
  return 'ok';
}

export function isRunLog(value: unknown): value is Json {
  return isObject(value) && Array.isArray(value.steps);
}

export function isCapture(value: unknown): value is Json {
  return isObject(value) && isRunLog(value.run_log);
}

/** Turns one run into records; `nextLine` is the ordinal of its first llm_call in the file. */
export function runRecords(file: TraceFile, runLog: Json, io: unknown[] | null, nextLine: number, runIdFallback: string): { records: TraceRecord[]; run: SourceRun } {
  const runId = str(runLog.run_id) ?? runIdFallback;
  const agent = str(runLog.agent) ?? '';
  const recorderStatus = str(runLog.status);
  const failed = recorderStatus === 'failed' || recorderStatus === 'cancelled';
  const startedAt = epoch(runLog.started_at);
  const steps = (runLog.steps as unknown[])
    .filter(isObject)
    .map((step, position) => ({ step, position }))
    .sort((a, b) => (num(a.step.idx) ?? a.position) - (num(b.step.idx) ?? b.position) || a.position - b.position)
    .map(({ step }) => step);

  const records: TraceRecord[] = [];
  const lines: number[] = [];
  const stepKinds: Record<string, number> = {};
  const overhead = { steps: 0, tokens: 0, costUsd: null as number | null };
  const conversation: Message[] = [];
  let lastUser: string | null = null;
  let assistant: Message | null = null;
  let unanswered: ToolCall[] = [];
  let llmCalls = 0;
  let elapsedMs = 0;

  steps.forEach((step, position) => {
    const kind = str(step.kind) ?? 'unknown';
    addCount(stepKinds, kind);
    const idx = num(step.idx) ?? position;
    // In milliseconds; an impossible one (negative, or nanoseconds written as the latency) is unknown and moves no later step.
    const latency = possibleDuration(num(step.latency) === null ? null : num(step.latency)! / 1000);
    const timestamp = startedAt === null ? null : possibleTime(startedAt + elapsedMs / 1000);
    elapsedMs += latency === null ? 0 : latency * 1000;
    const promptTokens = count(step.prompt_tokens);
    const completionTokens = count(step.completion_tokens);
    if (OVERHEAD_KINDS.has(kind)) {
      overhead.steps++;
      overhead.tokens += (promptTokens ?? 0) + (completionTokens ?? 0);
      const cost = num(step.cost_usd);
      if (cost !== null) overhead.costUsd = (overhead.costUsd ?? 0) + cost;
      return;
    }
    if (kind === 'tool_call') {
      // A tool step follows the llm_call that asked for it; without that turn it has nothing to answer.
      if (assistant === null) return;
      const name = str(step.name);
      const byName = unanswered.findIndex((c) => c.function.name === name);
      const call = unanswered.length > 0 ? unanswered.splice(byName >= 0 ? byName : 0, 1)[0] : null;
      const error = step.error;
      const content = step.output !== undefined && step.output !== null ? step.output : error !== undefined && error !== null ? { error } : '';
      conversation.push({ role: 'tool', content, tool_call_id: call?.id ?? `call_${idx}` });
      return;
    }
    if (kind !== 'llm_call') return;

    const entry = io !== null && isObject(io[llmCalls]) ? (io[llmCalls] as Json) : null;
    const first = llmCalls === 0;
    llmCalls++;
    const prompt = textOf(entry?.prompt) ?? textOf(step.input);
    const answer = completionText(entry?.completion) ?? completionText(step.output);
    const model = str(entry?.model) ?? str(step.name);
    const provider = str(entry?.provider);
    const p = promptTokens ?? count(entry?.prompt_tokens);
    const c = completionTokens ?? count(entry?.completion_tokens);
    const usage: Usage | null =
      p === null && c === null
        ? null
        : { prompt_tokens: p ?? 0, completion_tokens: c ?? 0, total_tokens: (p ?? 0) + (c ?? 0), cached_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0 };
    const error = step.error !== undefined && step.error !== null ? (typeof step.error === 'string' ? step.error : writeJson(step.error)) : null;
    const hasIo = prompt !== null && answer !== null;
    const status: Status = failed || error !== null ? 'exception' : hasIo ? 'ok' : 'no_output';

    let inputs: Message[] = [];
    let completion: Message | null = null;
    if (hasIo) {
      if (prompt !== lastUser) {
        conversation.push({ role: 'user', content: prompt });
        lastUser = prompt;
      }
      inputs = conversation.slice();
      let toolCalls: ToolCall[];
      if (entry !== null && Array.isArray(entry.tool_calls)) {
        toolCalls = entry.tool_calls.filter(isObject).map((call, j) => toolCallOf(call, `call_${idx}_${j}`));
      } else {
        // The tool steps up to the next llm_call are the calls this completion made.
        toolCalls = [];
        for (let k = position + 1; k < steps.length; k++) {
          const next = steps[k];
          if (next.kind === 'llm_call') break;
          if (next.kind !== 'tool_call') continue;
          toolCalls.push({
            id: `call_${num(next.idx) ?? k}`,
            type: 'function',
            function: { name: str(next.name) ?? '', arguments: next.input ?? {} },
          });
        }
      }
      completion = { role: 'assistant', content: answer };
      if (toolCalls.length > 0) completion.tool_calls = toolCalls;
      conversation.push(completion);
      assistant = completion;
      unanswered = [...toolCalls];
    } else {
      // A call without a completion (failed, or projected without output) still sent its
      // prompt: keep it, so two failed calls with different prompts stay two records. The
      // conversation itself does not grow: nothing answered this turn.
      if (prompt !== null) inputs = prompt !== lastUser ? [...conversation, { role: 'user', content: prompt }] : conversation.slice();
      assistant = null;
      unanswered = [];
    }
    const line = nextLine + records.length;
    lines.push(line);
    records.push(
      new RebuiltRecord({
        source: 'klieo',
        ref: { file: file.display, line, offset: 0 },
        callId: `${runId}:${idx}`,
        parentCallId: runId,
        program: agent,
        module: str(step.name) ?? model ?? '',
        timestamp,
        duration: latency,
        usage,
        cost: num(step.cost_usd),
        status,
        model,
        provider,
        inputs,
        completion,
        exception: status === 'exception' ? (error ?? `run ${recorderStatus}`) : null,
        partial: prompt !== null && !first,
        notExportable: hasIo || error !== null ? null : `llm_call step ${idx} has no LLM I/O (the run was projected without it): not exportable`,
        stopReason: str(entry?.finish_reason) ?? str(entry?.stop_reason) ?? str(step.finish_reason),
      }),
    );
  });

  const tokens = isObject(runLog.tokens) ? runLog.tokens : null;
  const cost = isObject(runLog.cost_estimate) ? runLog.cost_estimate : null;
  const run: SourceRun = {
    id: runId,
    source: 'klieo',
    program: agent,
    recorderStatus,
    status: runStatus(recorderStatus),
    startedAt,
    finishedAt: epoch(runLog.finished_at),
    lines,
    stepKinds,
    reportedTokens: tokens === null ? null : { prompt: count(tokens.prompt_tokens), completion: count(tokens.completion_tokens) },
    reportedCost: cost === null ? null : num(cost.total_usd),
    overhead,
  };
  return { records, run };
}

/** Records of a klieo file, one batch per run. */
export async function* readKlieoFile(file: TraceFile): AsyncGenerator<KlieoBatch> {
  let nextLine = 1;
  let documents = 0;
  const take = (value: unknown, where: string): KlieoBatch => {
    const batch: KlieoBatch = { records: [], damaged: [], runs: [], bytes: 0 };
    const values = Array.isArray(value) ? value : [value];
    values.forEach((item, i) => {
      const label = Array.isArray(value) ? `${where}[${i}]` : where;
      let runLog: Json | null = null;
      let io: unknown[] | null = null;
      if (isCapture(item)) {
        runLog = { ...(item.run_log as Json) };
        runLog.run_id ??= item.run_id;
        io = Array.isArray(item.llm_io) ? item.llm_io : null;
      } else if (isRunLog(item)) runLog = item;
      if (runLog === null) {
        batch.damaged.push({ file: file.display, line: 0, offset: 0, reason: `${label}: neither a klieo RunLog (steps) nor a Capture (run_log)` });
        return;
      }
      const { records, run } = runRecords(file, runLog, io, nextLine, label);
      nextLine += records.length;
      batch.records.push(...records);
      batch.runs.push(run);
    });
    return batch;
  };
  let current: Json = {};
  try {
    for await (const events of streamJson(file.path, { multiple: true })) {
      for (const event of events) {
        if (event.kind === 'member') current[event.key] = event.value;
        else if (event.kind === 'end' || event.kind === 'document') {
          const value = event.kind === 'end' ? current : event.value;
          current = {};
          yield take(value, `value ${++documents}`);
        }
      }
    }
  } catch (error) {
    if (!(error instanceof JsonStreamError)) throw error;
    yield {
      records: [],
      damaged: [{ file: file.display, line: nextLine, offset: 0, reason: `${error instanceof JsonTooLongError ? 'unreadable' : 'broken JSON'} after ${documents} run value(s): ${error.message}` }],
      runs: [],
      bytes: 0,
    };
  }
}
