/**
 * Runs: the calls of one agent run or session, grouped the way klieo's RunLog groups them.
 *
 * - Ask: one recording is one run.
 * - klieo: one `run_id` is one run (its RunLog's status, times, step kinds and overhead).
 * - Synalinks: records of a program are chained when one's input messages begin with
 *   another's whole conversation (completion included): an agent trajectory, where step
 *   k+1's input holds step k's messages. A record chained to none is a run of one call.
 *   Among records holding the same conversation, a step chains to the latest one that
 *   started no later than it did.
 *
 * Per run: steps, status, tokens, cost reported and estimated apart (and unpriced steps,
 * never counted as $0), duration, program. The browser groups its runs with `groupRuns` too.
 */
import type { SourceKind } from '../record.js';
import { runOverFiles } from '../parallel/run-shares.js';
import type { PriceTable } from '../pricing/table.js';
import type { Discovery, TraceFile } from '../sources/discover.js';
import type { SourceRun } from '../sources/source-run.js';
import { CallTable, COMPLETION, DURATION, ESTIMATED_COST, HAS_CONVERSATION, PARTIAL, PROMPT, REPORTED_COST, TIMESTAMP, TOTAL } from './call-facts.js';
import { KeyIndex } from '../pipeline/key-index.js';
import type { RunsShareResult } from './runs-share.js';
import type { RunSort } from './sorts.js';
import { addToList, appendAll } from '../lists.js';
import { JOBS } from '../parallel/jobs.js';

export interface RunCall {
  fileIndex: number;
  file: string;
  line: number;
  callId: string;
}

export interface Run {
  id: string;
  source: SourceKind;
  program: string;
  modules: string[];
  /** LLM calls (records) in the run. */
  steps: number;
  /** Steps by kind as the recorder lists them (klieo: llm_call, tool_call, …; Ask: provider, tool); null for Synalinks. */
  stepKinds: Record<string, number> | null;
  status: 'ok' | 'exception' | 'no_output' | 'running';
  /** The recorder's own status word (klieo), else null. */
  recorderStatus: string | null;
  partialSteps: number;
  tokens: { prompt: number; completion: number; total: number; stepsWithoutUsage: number };
  cost: {
    /** Sum of the costs the recorder reported; null when no step reported one. */
    reportedUsd: number | null;
    /** Sum of price-table estimates for steps without a reported cost; null when none was estimated. */
    estimatedUsd: number | null;
    /** Steps with neither: their cost is unknown. */
    unpricedSteps: number;
    /** The run-level total the recorder computed itself (klieo cost_estimate), when present. */
    recorderTotalUsd: number | null;
  };
  /** klieo summary checkpoints and ops events: kept out of the steps and their cost. */
  overhead: { steps: number; tokens: number; costUsd: number | null } | null;
  /** Epoch seconds. */
  startedAt: number | null;
  finishedAt: number | null;
  /** Seconds; null when unknown. */
  duration: number | null;
  /** The run's calls in order; the last holds the longest conversation. */
  calls: RunCall[];
}

/** Sets over 0..size-1, each element alone at first. */
class UnionFind {
  private readonly parent: Int32Array;
  constructor(size: number) {
    this.parent = Int32Array.from({ length: size }, (_, i) => i);
  }
  find(x: number): number {
    const parent = this.parent;
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
}

export class RunGrouper {
  private readonly calls = new CallTable();
  /** Runs the recorders describe, with the file they came from. */
  private readonly sourceRuns: { fileIndex: number; run: SourceRun }[] = [];

  constructor(private readonly files: readonly TraceFile[]) {}

  /** A share's calls; shares are added in file order. */
  add(share: Pick<RunsShareResult, 'calls' | 'sourceRuns'>): void {
    this.calls.append(share.calls);
    appendAll(this.sourceRuns, share.sourceRuns);
  }

  finish(): Run[] {
    const calls = this.calls;
    const n = calls.count;
    const runs: Run[] = [];
    const claimed = new Uint8Array(n);
    if (this.sourceRuns.length > 0) {
      const byPosition = new Map<string, number>();
      for (let i = 0; i < n; i++) byPosition.set(`${calls.fileIndex.data[i]}:${calls.line.data[i]}`, i);
      for (const { fileIndex, run } of this.sourceRuns) {
        const members = run.lines.map((line) => byPosition.get(`${fileIndex}:${line}`)).filter((i): i is number => i !== undefined);
        for (const i of members) claimed[i] = 1;
        runs.push(this.build(members, run));
      }
    }
    // Synalinks (and any record no recorder run claimed): chain by conversation prefixes. A digest
    // covers the program's name too, so equal digests are of one program. The calls holding a
    // conversation are listed by digest: the first in `holders`, each next one in `nextHolder`.
    const holders = new KeyIndex();
    const nextHolder = new Int32Array(n).fill(-1);
    const lastHolder = new Int32Array(n).fill(-1);
    const conversations = calls.conversations.data;
    for (let i = 0; i < n; i++) {
      if (claimed[i] === 1 || (calls.flags.data[i] & HAS_CONVERSATION) === 0) continue;
      const first = holders.addIfAbsent(conversations.subarray(i * 4, i * 4 + 4), i);
      if (first === -1) lastHolder[i] = i;
      else {
        nextHolder[lastHolder[first]] = i;
        lastHolder[first] = i;
      }
    }
    const sets = new UnionFind(n);
    const prefixes = calls.prefixes.data;
    const starts = calls.prefixStarts.data;
    for (let i = 0; i < n; i++) {
      if (claimed[i] === 1) continue;
      const timestamp = calls.number(i, TIMESTAMP);
      // The longest prefix that is another call's whole conversation is the step before.
      for (let k = starts[i + 1] - 1; k >= starts[i]; k--) {
        let best = -1;
        for (let j = holders.get(prefixes.subarray(k * 4, k * 4 + 4)); j !== -1; j = nextHolder[j]) {
          if (j === i) continue;
          const t = calls.number(j, TIMESTAMP);
          if (timestamp !== null && t !== null && t > timestamp) continue;
          if (best === -1 || (t ?? -Infinity) > (calls.number(best, TIMESTAMP) ?? -Infinity)) best = j;
        }
        if (best === -1) continue;
        sets.union(i, best);
        break;
      }
    }
    const groups = new Map<number, number[]>();
    for (let i = 0; i < n; i++) if (claimed[i] === 0) addToList(groups, sets.find(i), i);
    const byTime = (a: number, b: number): number =>
      (calls.number(a, TIMESTAMP) ?? Infinity) - (calls.number(b, TIMESTAMP) ?? Infinity) ||
      calls.fileIndex.data[a] - calls.fileIndex.data[b] ||
      calls.line.data[a] - calls.line.data[b];
    for (const members of groups.values()) runs.push(this.build(members.sort(byTime), null));
    return runs;
  }

  private build(members: number[], run: SourceRun | null): Run {
    const calls = this.calls;
    const first = members[0];
    const source: SourceKind = run?.source ?? (first !== undefined ? (this.files[calls.fileIndex.data[first]].source ?? 'synalinks') : 'synalinks');
    const tokens = { prompt: 0, completion: 0, total: 0, stepsWithoutUsage: 0 };
    let reported: number | null = null;
    let estimated: number | null = null;
    let unpriced = 0;
    let partial = 0;
    for (const c of members) {
      const total = calls.number(c, TOTAL);
      if (total === null) tokens.stepsWithoutUsage++;
      else {
        tokens.prompt += calls.number(c, PROMPT) ?? 0;
        tokens.completion += calls.number(c, COMPLETION) ?? 0;
        tokens.total += total;
      }
      const reportedCost = calls.number(c, REPORTED_COST);
      const estimatedCost = calls.number(c, ESTIMATED_COST);
      if (reportedCost !== null) reported = (reported ?? 0) + reportedCost;
      else if (estimatedCost !== null) estimated = (estimated ?? 0) + estimatedCost;
      else unpriced++;
      if ((calls.flags.data[c] & PARTIAL) !== 0) partial++;
    }
    // Loops, not Math.min(...): a run can hold more steps than a call can take arguments.
    let earliest: number | null = null;
    let latestEnd: number | null = null;
    let allTimed = members.length > 0;
    for (const c of members) {
      const timestamp = calls.number(c, TIMESTAMP);
      const duration = calls.number(c, DURATION);
      if (timestamp !== null && (earliest === null || timestamp < earliest)) earliest = timestamp;
      if (timestamp === null || duration === null) allTimed = false;
      else if (latestEnd === null || timestamp + duration > latestEnd) latestEnd = timestamp + duration;
    }
    const startedAt = run?.startedAt ?? earliest;
    const finishedAt = run?.finishedAt ?? (run === null && allTimed ? latestEnd : null);
    const statuses = members.map((c) => calls.status(c));
    const status: Run['status'] =
      run?.status ?? (statuses.includes('exception') ? 'exception' : statuses.includes('no_output') ? 'no_output' : 'ok');
    return {
      id: run?.id ?? (first !== undefined ? calls.callIds[first] : ''),
      source,
      program: run?.program ?? (first !== undefined ? calls.program(first) : ''),
      modules: [...new Set(members.map((c) => calls.module(c)))].sort(),
      steps: members.length,
      stepKinds: run?.stepKinds ?? null,
      status,
      recorderStatus: run?.recorderStatus ?? null,
      partialSteps: partial,
      tokens,
      cost: { reportedUsd: reported, estimatedUsd: estimated, unpricedSteps: unpriced, recorderTotalUsd: run?.reportedCost ?? null },
      overhead: run?.overhead ?? null,
      startedAt,
      finishedAt,
      duration: startedAt !== null && finishedAt !== null ? Math.max(0, finishedAt - startedAt) : null,
      calls: members.map((c) => ({ fileIndex: calls.fileIndex.data[c], file: this.files[calls.fileIndex.data[c]].display, line: calls.line.data[c], callId: calls.callIds[c] })),
    };
  }
}


/** Known cost of a run (reported plus estimated), or null when nothing is known. */
export function knownCost(run: Run): number | null {
  const { reportedUsd, estimatedUsd } = run.cost;
  return reportedUsd === null && estimatedUsd === null ? null : (reportedUsd ?? 0) + (estimatedUsd ?? 0);
}

/** Start order (unknown last), or the largest cost, tokens or duration first (unknown last). */
export function sortRuns(runs: Run[], by: RunSort): Run[] {
  const key = (run: Run): number | null => {
    switch (by) {
      case 'start':
        return run.startedAt === null ? null : -run.startedAt;
      case 'cost':
        return knownCost(run);
      case 'tokens':
        return run.tokens.total === 0 && run.tokens.stepsWithoutUsage === run.steps ? null : run.tokens.total;
      case 'duration':
        return run.duration;
    }
  };
  return runs
    .map((run, i) => ({ run, i, k: key(run) }))
    .sort((a, b) => (a.k === null ? 1 : 0) - (b.k === null ? 1 : 0) || (b.k ?? 0) - (a.k ?? 0) || a.i - b.i)
    .map(({ run }) => run);
}

/** Groups the records of the discovered files into runs; `quiet` keeps progress off a terminal someone else draws on. */
export async function groupRuns(discovery: Discovery, prices: PriceTable | null, quiet = false): Promise<Run[]> {
  const grouper = new RunGrouper(discovery.files);
  const shares = runOverFiles(
    JOBS.runs,
    discovery,
    (share) => ({ files: discovery.files, share, prices: prices === null ? null : { data: prices.data, origin: prices.origin } }),
    (result) => ({ records: result.records, bytes: result.bytes }),
    { quiet },
  );
  for await (const share of shares) grouper.add(share);
  return grouper.finish();
}
