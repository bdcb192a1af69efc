/** What a recorder says about a run as a whole (Ask: one recording; klieo: one RunLog). */
import type { SourceKind, Status } from '../record.js';

export interface SourceRun {
  id: string;
  source: SourceKind;
  program: string;
  /** The recorder's own word for the run's state (klieo: completed, failed, cancelled, running), or null. */
  recorderStatus: string | null;
  status: Status | 'running';
  /** Epoch seconds, or null when unknown. */
  startedAt: number | null;
  finishedAt: number | null;
  /** `ref.line` of the run's records, in order. */
  lines: number[];
  /** Steps of the run by kind (Ask: provider, tool; klieo: llm_call, tool_call, summary_checkpoint, ops_event). */
  stepKinds: Record<string, number>;
  /** Run-level totals the recorder kept, when it kept any. */
  reportedTokens: { prompt: number | null; completion: number | null } | null;
  reportedCost: number | null;
  /** Steps that are overhead, not reasoning (klieo summary checkpoints and ops events). */
  overhead: { steps: number; tokens: number; costUsd: number | null } | null;
}
