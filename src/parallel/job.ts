/**
 * A job worker threads can run: a function a module exports, named by the module's URL and
 * the export's name, so a thread loads only the modules of the jobs it is handed. This layer
 * imports no job: jobs.ts names them by module path and export. A job takes plain data and returns
 * plain data.
 */

/** Any function of one payload: `never` takes every parameter type. */
type ShareFunction = (payload: never) => Promise<unknown>;

export interface Job<Payload = unknown, Result = unknown> {
  /** URL of the module that exports the job's function. */
  readonly module: string;
  /** The export that runs one payload. */
  readonly run: string;
  /** An export that prepares the job ahead of its first payload, given what it needs to know (a tokenizer to load). */
  readonly warm?: string;
  /** The young generation of a worker that runs it (MB): see `youngGenerationMb`. */
  readonly youngGenerationMb?: number;
  /** Never set: carries the payload and result types. */
  readonly types?: { payload: Payload; result: Result };
}

export type JobPayload<J> = J extends Job<infer P, unknown> ? P : never;
export type JobResult<J> = J extends Job<unknown, infer R> ? R : never;

/** The job of `run`, exported by the module at `module`: `defineJob<typeof statsShare>(url, 'statsShare')`. */
export function defineJob<F extends ShareFunction>(module: URL, run: string, options: { warm?: string; youngGenerationMb?: number } = {}): Job<Parameters<F>[0], Awaited<ReturnType<F>>> {
  return { module: module.href, run, ...options };
}

/** Reading jobs keep the worker's young generation small: 11 MB less resident per worker than V8's default, at no cost. */
const READING_YOUNG_GENERATION_MB = 4;

/** The young generation for workers that will run `jobs`: the largest any of them asks for. */
export function youngGenerationMb(jobs: readonly Job[]): number {
  return Math.max(READING_YOUNG_GENERATION_MB, ...jobs.map((job) => job.youngGenerationMb ?? 0));
}

async function exported(job: Job, name: string): Promise<(data: unknown) => Promise<unknown>> {
  const module = (await import(job.module)) as Record<string, unknown>;
  const found = module[name];
  if (typeof found !== 'function') throw new Error(`${job.module} exports no function ${name}`);
  return found as (data: unknown) => Promise<unknown>;
}

/** Loads a job's modules, and prepares it with `warm` when given, ahead of its first payload. */
export async function loadJob(job: Job, warm?: unknown): Promise<void> {
  await exported(job, job.run);
  if (warm !== undefined && job.warm !== undefined) await (await exported(job, job.warm))(warm);
}

export async function runJob<P, R>(job: Job<P, R>, payload: P): Promise<R> {
  return (await exported(job, job.run))(payload) as Promise<R>;
}
