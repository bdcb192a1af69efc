/**
 * A small pool of worker threads running named jobs (see jobs.ts). Results come back in
 * the order the inputs were given, whatever order the workers finish in.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export function defaultWorkerCount(): number {
  const fromEnv = Number(process.env.TRACES_WORKERS);
  if (Number.isInteger(fromEnv) && fromEnv >= 0) return fromEnv;
  return Math.min(4, Math.max(1, availableParallelism()));
}

export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(readonly size: number) {
    for (let i = 0; i < size; i++) {
      // A small young generation keeps each worker's resident memory down; records die young anyway.
      const worker = new Worker(new URL('./worker.js', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: 8 } });
      worker.on('message', (message: { id: number; result?: unknown; error?: { message: string; stack?: string } }) => {
        const pending = this.pending.get(message.id);
        this.pending.delete(message.id);
        this.release(worker);
        if (pending === undefined) return;
        if (message.error !== undefined) {
          const error = new Error(message.error.message);
          error.stack = message.error.stack;
          pending.reject(error);
        } else pending.resolve(message.result);
      });
      worker.on('error', (error) => {
        for (const p of this.pending.values()) p.reject(error);
        this.pending.clear();
      });
      this.workers.push(worker);
      this.idle.push(worker);
    }
  }

  private release(worker: Worker): void {
    this.idle.push(worker);
    this.waiting.shift()?.();
  }

  private async acquire(): Promise<Worker> {
    while (this.idle.length === 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.idle.pop()!;
  }

  private async submit<T>(job: string, payload: unknown): Promise<T> {
    const worker = await this.acquire();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, job, payload });
    });
  }

  /** Runs `job` over every payload, at most `size` at a time; yields results in payload order. */
  async *map<T>(job: string, payloads: readonly unknown[]): AsyncGenerator<T> {
    const results: Promise<T>[] = [];
    let submitted = 0;
    // Keep every worker busy, and a few results ahead, without holding them all in memory.
    const ahead = this.size * 2;
    const fill = () => {
      while (submitted < payloads.length && submitted - consumed < ahead) {
        const promise = this.submit<T>(job, payloads[submitted]);
        promise.catch(() => undefined);
        results[submitted++] = promise;
      }
    };
    let consumed = 0;
    fill();
    while (consumed < payloads.length) {
      const result = await results[consumed];
      delete results[consumed];
      consumed++;
      fill();
      yield result;
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
