// The digest of a restore plan and the present state it was made from (DESIGN §10 "MCP"): what the
// two-step adapters (MCP's confirmation token, HTTP's preview token) bind, so what runs is what was shown.
import { createHash } from 'node:crypto';
import type { PlanSnapshot } from './restore.js';

/**
 * sha256 over the plan (target, entries, what it leaves alone, drift) and the present image of every
 * path it considered: a change to any file the restore concerns changes the digest, even when the
 * plan's entries would stay the same (the user confirmed overwriting what the preview saw).
 */
export function planDigest(snapshot: Pick<PlanSnapshot, 'plan' | 'present'>): string {
  const { plan, present } = snapshot;
  const presentList = [...present.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, i]) => [path, i.state, i.blob ?? null, i.mode ?? null, i.target ?? null, i.why ?? null]);
  const canonical = JSON.stringify({
    toSeq: plan.toSeq,
    entries: plan.entries.map((e) => [e.path, e.action, e.blob ?? null, e.mode ?? null, e.target ?? null, e.newDirs ?? null]),
    unchanged: plan.unchanged,
    skipped: plan.skipped.map((s) => [s.path, s.why]),
    drift: plan.drift,
    present: presentList,
  });
  return createHash('sha256').update(canonical).digest('hex');
}
