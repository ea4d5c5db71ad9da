// The result of a GC run as the adapters report it (DESIGN §9 `ckpt gc`, `POST /gc`): one shape for
// the CLI's JSON and the HTTP route. `detail` adds what only the CLI shows: blobs referenced but
// missing, and (dry run) the candidates by name.
import type { GcResult } from './apply-gc.js';
import type { GcPlan } from './plan-gc.js';

export interface GcSummaryOptions {
  dryRun?: boolean;
  detail?: boolean;
}

export function gcSummary(plan: GcPlan, result: GcResult, options: GcSummaryOptions = {}) {
  const { dryRun, detail } = options;
  return {
    deleted: result.deleted,
    bytesFreed: result.bytesFreed,
    kept: result.kept,
    rescued: result.rescued,
    packsRewritten: result.packsRewritten,
    orphansRemoved: result.orphansRemoved,
    referenced: plan.referenced.length,
    grace: plan.grace,
    ...(detail && plan.missing.length ? { missing: plan.missing } : {}),
    ...(dryRun
      ? {
          dryRun: true as const,
          ...(detail
            ? {
                candidates: {
                  loose: plan.loose.map((c) => c.id),
                  packs: plan.packs.map((p) => ({ pack: p.pack, dead: p.dead })),
                  orphans: plan.orphans.map((o) => ({ kind: o.kind, key: o.key })),
                  young: plan.young,
                },
              }
            : {}),
        }
      : {}),
  };
}

export type GcSummary = ReturnType<typeof gcSummary>;
