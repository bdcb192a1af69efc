/**
 * The sources besides Synalinks: one line each. Order matters only where two could claim
 * the same file: the first whose `detect` accepts it wins.
 */
import type { SourceKind } from '../record.js';
import type { Source } from './source.js';
import { askSource } from './ask/index.js';
import { klieoSource } from './klieo/index.js';
import { otlpSource } from './otlp/index.js';
import { langfuseSource } from './langfuse/index.js';
import { langsmithSource } from './langsmith/index.js';
import { claudeCodeSource } from './claude-code/index.js';
import { codexSource } from './codex/index.js';
import { piSource } from './pi/index.js';
import { stsSource } from './sts/index.js';

export const SOURCES: readonly Source[] = [askSource, klieoSource, otlpSource, langfuseSource, langsmithSource, claudeCodeSource, codexSource, piSource, stsSource];

/** The source named `kind`, or undefined (Synalinks, or unknown). */
export function sourceOf(kind: string | undefined): Source | undefined {
  return SOURCES.find((source) => source.kind === kind);
}

/** Every format `--source` accepts. */
export const SOURCE_KINDS: readonly string[] = ['synalinks', ...SOURCES.map((source) => source.kind)];

/** `Synalinks, Ask recording, klieo run`: what a message lists as the formats read. */
export function sourceLabels(withSynalinks = true): string {
  return [...(withSynalinks ? ['Synalinks'] : []), ...SOURCES.map((source) => source.label)].join(', ');
}

/**
 * What records of `kind` carry the version of (`TraceRecord.version`), as reports name it:
 * `synalinks` for Synalinks records (their `synalinks_version`), a source's `versionOf`, or
 * null when its records carry no version (no report then shows one for them).
 */
export function versionNameOf(kind: SourceKind | undefined): string | null {
  if (kind === undefined || kind === 'synalinks') return 'synalinks';
  return sourceOf(kind)?.versionOf ?? null;
}
