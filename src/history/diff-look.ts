// What `ckpt diff FROM` (to the present) and `ckpt cat TAG PATH` add from a look (DESIGN §10 "diff
// looks too", "cat looks too"): the paths changed outside the agent since ckpt last looked that
// `restore FROM` would put back or refuse — the read-only look (scan/look-read.ts), filtered as the
// restore's plan filters its own look (restore.ts outsideChanges), so the diff lists exactly the look
// paths the restore plans, and cat prints what the restore would write there.
import type { EventBase, FileImage } from '../format/event.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { SessionHandle } from '../session/session-handle.js';
import { timelinePosition, type WorkspaceTimeline } from '../session/workspace-timeline.js';
import { knownForPaths } from '../session/replay.js';
import { loadPlans, planOf } from '../session/restore-plans.js';
import { lookSince, outsideChanges } from '../restore/restore.js';
import { readOutsideLook } from '../scan/look-read.js';

export interface DiffLook {
  /** What ckpt last knew of each path changed unrecorded (the look's before-images): a capture after every other. */
  files: FileImage[];
  /** Content those images name that is in no store (read from git for this diff only). */
  content: ReadonlyMap<string, Buffer>;
}

/** The look for `diff from` with no TO; undefined when there is none (or nothing in it the restore would plan). */
export async function diffLook(session: SessionHandle, events: readonly EventBase[], timeline: WorkspaceTimeline, from: string): Promise<DiffLook | undefined> {
  const look = await readOutsideLook(session, lookSince(events, from));
  if (!look) return undefined;
  const knownTimes = new Map<string, number>();
  const known = await knownForPaths(events, look.before.map((i) => i.path), async (started) => {
    await loadPlans(session.ctx.blobs, [started]);
    return planOf(started);
  }, knownTimes);
  const present = new Map(look.after.map((i) => [i.path, i]));
  const { look: outside, byCall } = outsideChanges(look, timeline.captures, known, knownTimes, present, timelinePosition(events, from));
  // A path in flight that a call captured after FROM is that call's change (the diff shows it from
  // the capture), not an unrecorded one: the restore plans the same image for it either way.
  const files = outside?.before.filter((image) => !byCall.has(image.path)) ?? [];
  return files.length > 0 ? { files, content: look.content } : undefined;
}

/** Reads the look's content held in memory (git blobs read for this read only) before the store. */
export function withLookContent(blobs: BlobStore, content: ReadonlyMap<string, Buffer> | undefined): BlobStore {
  if (!content || content.size === 0) return blobs;
  return { ...blobs, get: async (id) => content.get(id) ?? blobs.get(id), has: async (id) => content.has(id) || blobs.has(id) };
}
