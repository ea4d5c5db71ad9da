// The owner index rebuilt from the logs (DESIGN §10, third session of 2026-12-05): when owners.json is
// missing or cannot be parsed, every session's log is read from its start and what each recorded
// last — its settles (scans included) and its committed restores' plans — becomes the owner records,
// each with its event's time, so the latest recorder of a path across sessions wins as it did when
// the index was written. Without it a lost index made `owner` say no session wrote a path, let
// conflicts go unnoticed and made `status` list unchanged files as changed.
import type { WorkspaceContext } from '../context.js';
import type { FileImage } from '../format/event.js';
import { decodeInline } from '../storage/inline-store.js';
import { inlineRecords } from '../format/inline-blobs.js';
import { imageOfPlanEntry } from '../session/replay.js';
import { loadedPlan, loadPlans } from '../session/restore-plans.js';
import { SessionHandle } from '../session/session-handle.js';

/** What one event of a log left as the present state of its paths, at its time. */
export interface LoggedWrite {
  session: { id: string };
  images: readonly FileImage[];
  at: string;
}

/**
 * Every owner write the workspace's logs hold, in log order per session. Content a settle carries
 * inline is stored first (owners.json names stored blobs); content that does not match its id is
 * left out of the store, its record kept (as catchUpOwners does). A log that cannot be read adds
 * nothing; a restore whose plan blob cannot be read adds nothing for its paths.
 */
export async function ownerWritesFromLogs(ctx: WorkspaceContext): Promise<LoggedWrite[]> {
  const { backend, blobs } = ctx;
  const writes: LoggedWrite[] = [];
  for (const id of await backend.children(`${ctx.workspace.key}/sessions`)) {
    const session = new SessionHandle(ctx, id);
    let events;
    try {
      events = await session.log.read();
    } catch {
      continue;
    }
    // One plan at a time: a plan blob that cannot be read leaves the others loaded.
    for (const e of events) if (e.type === 'restore_started') await loadPlans(blobs, [e]).catch(() => {});
    const started = new Map<string, (typeof events)[number]>();
    const named = new Set<string>();
    for (const e of events) {
      let images: FileImage[] | undefined;
      if (e.type === 'settle') images = (e.files as FileImage[] | undefined) ?? [];
      else if (e.type === 'restore_started') started.set(String(e.id), e);
      else if (e.type === 'restore_committed') {
        const s = started.get(String(e.id));
        const plan = s && loadedPlan(s);
        if (plan) images = plan.map(imageOfPlanEntry);
      }
      if (!images?.length) continue;
      for (const image of images) if (image.state === 'file' && image.blob !== undefined) named.add(image.blob);
      writes.push({ session, images, at: e.at });
    }
    await storeInline(ctx, inlineRecords(events), named);
  }
  return writes;
}

async function storeInline(ctx: WorkspaceContext, records: ReadonlyMap<string, string>, named: ReadonlySet<string>): Promise<void> {
  for (const id of named) {
    const b64 = records.get(id);
    if (b64 === undefined || (await ctx.blobs.has(id))) continue;
    let data;
    try {
      data = decodeInline(id, b64);
    } catch {
      continue;
    }
    await ctx.blobs.put(data);
  }
}
