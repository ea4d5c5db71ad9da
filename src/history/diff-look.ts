// What `ckpt diff FROM` (to the present) adds from a look (DESIGN §10 "diff looks too"): the paths
// changed outside the agent since ckpt last looked that `restore FROM` would put back or refuse —
// the read-only look (scan/look-read.ts), filtered as the restore's plan filters its own look
// (restore.ts outsideChanges), so the diff lists exactly the look paths the restore plans.
import type { EventBase, FileImage } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import type { WorkspaceTimeline } from '../session/workspace-timeline.js';
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
  const outside = outsideChanges(look, timeline.captures, known, knownTimes, present).look;
  return outside ? { files: outside.before, content: look.content } : undefined;
}
