/**
 * Where each dataset's written examples came from, for a target that describes its datasets (the
 * hf dataset card): the recorders and their versions, programs and modules, models, and the
 * period of the calls. Tallies only, whatever the number of examples.
 */
import { compareText } from '../order.js';
import { isoTime } from '../time.js';
import type { SourcesSummary } from '../targets/index.js';
import type { ExampleOrigin } from './project-share.js';

class Tally {
  readonly recorders = new Map<string, Set<string>>();
  readonly modules = new Map<string, Map<string, number>>();
  readonly models = new Map<string, number>();
  from = Infinity;
  to = -Infinity;
}

export class Origins {
  private readonly byDataset = new Map<string, Tally>();

  add(dataset: string, origin: ExampleOrigin): void {
    let tally = this.byDataset.get(dataset);
    if (tally === undefined) this.byDataset.set(dataset, (tally = new Tally()));
    let versions = tally.recorders.get(origin.source);
    if (versions === undefined) tally.recorders.set(origin.source, (versions = new Set()));
    if (origin.version !== null) versions.add(origin.version);
    let modules = tally.modules.get(origin.program);
    if (modules === undefined) tally.modules.set(origin.program, (modules = new Map()));
    modules.set(origin.module, (modules.get(origin.module) ?? 0) + 1);
    if (origin.model !== null) tally.models.set(origin.model, (tally.models.get(origin.model) ?? 0) + 1);
    if (origin.timestamp !== null) {
      tally.from = Math.min(tally.from, origin.timestamp);
      tally.to = Math.max(tally.to, origin.timestamp);
    }
  }

  summaries(): Map<string, SourcesSummary> {
    const out = new Map<string, SourcesSummary>();
    for (const [dataset, t] of this.byDataset) {
      const from = isoTime(t.from === Infinity ? null : t.from);
      const to = isoTime(t.to === -Infinity ? null : t.to);
      out.set(dataset, {
        recorders: [...t.recorders].sort(([a], [b]) => compareText(a, b)).map(([source, v]) => ({ source, versions: [...v].sort(compareText) })),
        programs: [...t.modules]
          .sort(([a], [b]) => compareText(a, b))
          .map(([program, m]) => ({ program, modules: [...m].sort(([a], [b]) => compareText(a, b)).map(([module, examples]) => ({ module, examples })) })),
        models: [...t.models].sort(([a, x], [b, y]) => y - x || compareText(a, b)).map(([model, examples]) => ({ model, examples })),
        period: from !== null && to !== null ? { from, to } : null,
      });
    }
    return out;
  }
}
