/**
 * A small pool of worker threads running jobs (see job.ts). Results come back in
 * the order the inputs were given, whatever order the workers finish in.
 */
import { availableParallelism } from 'node:os';
import { isMainThread, Worker } from 'node:worker_threads';
import { UserError } from '../errors.js';
import { printable } from '../format.js';
import type { Job } from './job.js';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** An error as a worker sends it (worker.ts): its message, stack, file-system fields and, for a user's error, its exit code. */
interface WorkerError {
  message: string;
  stack?: string;
  code?: string;
  path?: string;
  syscall?: string;
  errno?: number;
  userExitCode?: 1 | 2;
}

/** The error again on this thread: a user's error stays one (one line, its exit code), a file-system error keeps its fields. */
function errorFromWorker({ message, stack, userExitCode, ...fields }: WorkerError): Error {
  if (userExitCode !== undefined) return new UserError(message, userExitCode);
  const error = Object.assign(new Error(message), fields);
  error.stack = stack;
  return error;
}

/** Threads per core TRACES_WORKERS may ask for: more only compete for the cores, each with its own heap. */
const MAX_THREADS_PER_CORE = 4;

let warnedAboutWorkers = false;

function warnAboutWorkers(message: string): void {
  if (warnedAboutWorkers || !isMainThread) return;
  warnedAboutWorkers = true;
  process.stderr.write(`traces: ${printable(message)}\n`);
}

/**
 * The threads a run reads with: TRACES_WORKERS when it is a whole number (0 and 1: this thread
 * alone), at most MAX_THREADS_PER_CORE per core (500 threads once took 5 GB and 44 s on the
 * 200 MB bench tree, where 2 take 1.1 s); else one per core, up to 4.
 */
export function defaultWorkerCount(): number {
  const cores = Math.max(1, availableParallelism());
  const given = process.env.TRACES_WORKERS;
  if (given !== undefined && given.trim() !== '') {
    const asked = Number(given);
    if (!Number.isInteger(asked) || asked < 0) warnAboutWorkers(`TRACES_WORKERS=${given} is not a whole number of threads: it is ignored`);
    else if (asked > cores * MAX_THREADS_PER_CORE) {
      warnAboutWorkers(`TRACES_WORKERS=${given} is more threads than ${cores} cores can use: ${cores * MAX_THREADS_PER_CORE} are used`);
      return cores * MAX_THREADS_PER_CORE;
    } else return asked;
  }
  return Math.min(4, cores);
}

/**
 * Jobs handed to a worker before it finishes the one it runs: the next one is waiting when it
 * is done, even while this thread is busy with its own share and cannot answer at once.
 */
const JOBS_PER_WORKER = 2;

export class WorkerPool {
  private readonly workers: Worker[] = [];
  /** A worker appears once per job it can still take. */
  private readonly idle: Worker[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly pending = new Map<number, Pending>();
  /** Jobs each worker holds: a worker with none is unreferenced, so an idle pool never keeps the process alive. */
  private readonly load = new Map<Worker, number>();
  private nextId = 0;
  broken = false;

  /** `youngGenerationMb`: small keeps each worker's resident memory down (see job.ts' `youngGenerationMb`). */
  constructor(
    readonly size: number,
    youngGenerationMb = 4,
  ) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(new URL('./worker.js', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: youngGenerationMb } });
      worker.on('message', (message: { id: number; result?: unknown; error?: WorkerError }) => {
        const pending = this.pending.get(message.id);
        this.pending.delete(message.id);
        this.setLoad(worker, -1);
        this.release(worker);
        if (pending === undefined) return;
        if (message.error !== undefined) pending.reject(errorFromWorker(message.error));
        else pending.resolve(message.result);
      });
      worker.on('error', (error) => {
        this.broken = true;
        for (const p of this.pending.values()) p.reject(error);
        this.pending.clear();
      });
      worker.unref();
      this.load.set(worker, 0);
      this.workers.push(worker);
    }
    // Interleaved and taken from the front, so work spreads over the workers before queueing on one.
    for (let j = 0; j < JOBS_PER_WORKER; j++) this.idle.push(...this.workers);
  }

  private setLoad(worker: Worker, change: 1 | -1): void {
    const jobs = this.load.get(worker)! + change;
    this.load.set(worker, jobs);
    if (jobs === 0) worker.unref();
    else if (jobs === 1 && change === 1) worker.ref();
  }

  private release(worker: Worker): void {
    this.idle.push(worker);
    this.waiting.shift()?.();
  }

  private async acquire(): Promise<Worker> {
    while (this.idle.length === 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.idle.shift()!;
  }

  /**
   * Runs `job` on the next free worker. A free worker gets the job now, not after this
   * thread's next await: a caller that goes on with synchronous work meanwhile (curation
   * writing its drops while a worker copies) would otherwise hold the job back until it ends.
   */
  run<T>(job: Job, payload: unknown): Promise<T> {
    const worker = this.idle.shift();
    if (worker !== undefined) return this.post<T>(worker, job, payload);
    return this.acquire().then((next) => this.post<T>(next, job, payload));
  }

  private post<T>(worker: Worker, job: Job, payload: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.setLoad(worker, 1);
      worker.postMessage({ id, job, payload });
    });
  }

  /**
   * Runs `job` over every payload and yields the results in payload order. Each worker is a
   * lane taking the next payload; with `local`, this thread is one more lane, which starts at
   * once while the workers are still starting up. A lane runs at most a few payloads ahead
   * of the consumer, so results never pile up.
   *
   * This thread is also the consumer, and consuming comes first: its lane takes a payload only
   * while the next result is not in yet. Where consuming is heavy (export writes every line),
   * this thread then mostly consumes and the workers read; where it is light (stats), it
   * reads nearly as much as a worker. Taking shares regardless left export's worker idle a
   * third of the time while this thread fell behind.
   *
   * A payload is made (`payloadOf` its item) when a lane takes it, not all before the first
   * starts: made up front, export's payloads held a copy of every kept line at once.
   */
  async *map<T, I>(job: Job, items: readonly I[], payloadOf: (item: I) => unknown, local?: (payload: unknown) => Promise<T>, signal?: AbortSignal): AsyncGenerator<T> {
    const remote = (payload: unknown) => this.run<T>(job, payload);
    yield* inOrder(items, Array.from({ length: this.size * JOBS_PER_WORKER }, () => remote), local, signal, payloadOf as (item: unknown) => unknown);
  }

  /** Has each worker load a job's modules (and prepare it with `warm`) before its first payload arrives. */
  preload(job: Job, warm?: unknown): void {
    for (const worker of this.workers) worker.postMessage({ preload: job, warm });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/**
 * The scheduling of `WorkerPool.map`, apart from the threads: each of `lanes` (and `local`,
 * this thread's own lane) takes the next payload when free; results are yielded in payload order.
 * Once the consumer stops (returns, throws or `signal` aborts), no lane takes another payload,
 * and an abort rejects the result being waited for.
 */
export async function* inOrder<T>(
  payloads: readonly unknown[],
  lanes: readonly ((payload: unknown) => Promise<T>)[],
  local?: (payload: unknown) => Promise<T>,
  signal?: AbortSignal,
  /** Makes the payload of a lane's item as the lane takes it, in item order (a payload may number a file). */
  payloadOf: (item: unknown) => unknown = (item) => item,
): AsyncGenerator<T> {
  const n = payloads.length;
  const settled: (Deferred<T> | null)[] = payloads.map(() => deferred<T>());
  const ahead = (lanes.length + (local ? 1 : 0)) * 4;
  let next = 0;
  let consumed = 0;
  const blocked: (() => void)[] = [];
  /** 1 once a payload's result (or error) is in. */
  const ready = new Uint8Array(n);
  let wakeLocal: (() => void) | null = null;
  const wake = (): void => {
    const resume = wakeLocal;
    wakeLocal = null;
    resume?.();
  };
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    wake();
    for (const resume of blocked.splice(0)) resume();
  };
  const lane = async (run: (payload: unknown) => Promise<T>, isLocal: boolean) => {
    for (;;) {
      while (!stopped && next < n && next - consumed >= ahead) await new Promise<void>((resolve) => blocked.push(resolve));
      while (!stopped && isLocal && next < n && consumed < next && ready[consumed] === 1) await new Promise<void>((resolve) => (wakeLocal = resolve));
      if (stopped || next >= n) return;
      const i = next++;
      // The last payload is taken: a waiting local lane has nothing left to wait for.
      if (next === n) wake();
      try {
        const payload = payloadOf(payloads[i]);
        // This thread's payload waits for its thread to be free: a run stopped meanwhile does not start it.
        if (isLocal) await new Promise<void>((resolve) => setImmediate(resolve));
        if (stopped) throw new Error('stopped');
        settled[i]!.resolve(await run(payload));
      } catch (error) {
        settled[i]!.reject(error as Error);
      }
      ready[i] = 1;
    }
  };
  // An abort rejects the one result being waited for. A race against a promise that never
  // settles in a run that ends well would add a reaction to it per result, each holding its
  // race's promise and so the result itself: a whole export's shares, never freed.
  let waitingFor: Deferred<T> | null = null;
  const abort = (): void => {
    stop();
    waitingFor?.reject(signal!.reason as Error);
  };
  if (signal?.aborted === true) stop();
  else signal?.addEventListener('abort', abort, { once: true });
  // This thread's lane first: it takes the first payload while the workers are still booting.
  const running = local ? [lane(local, true)] : [];
  for (const remote of lanes) running.push(lane(remote, false));
  try {
    while (consumed < n) {
      // Nothing to consume until this result is in: this thread's lane may take a payload meanwhile.
      if (ready[consumed] === 0) wake();
      if (signal?.aborted === true) {
        stop();
        throw signal.reason;
      }
      waitingFor = settled[consumed]!;
      const result = await waitingFor.promise;
      waitingFor = null;
      // Handed over: holding every result until the end kept a whole export in memory.
      settled[consumed] = null;
      consumed++;
      for (const resume of blocked.splice(0)) resume();
      yield result;
    }
    wake();
    await Promise.all(running);
  } finally {
    signal?.removeEventListener('abort', abort);
    stop();
  }
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: Error) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Rejections are seen when the consumer reaches them; until then they are not "unhandled".
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
