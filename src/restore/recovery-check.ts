// What recovery may do with an interrupted restore's journal (DESIGN §4): its plan is carried out only
// when the restore's recovery capture (before `restore_started`, carrying its id) recorded every
// planned path, with that content in the store — else the plan is not one ckpt could undo (a forged or
// damaged log: LOG_CORRUPT, nothing done; found by a hostile-store probe, where a planted line deleted
// files no capture recorded). And a path is placed only while it holds what that capture read or what
// the plan puts there: anything else was written after the crash (the user's, with no recovery image)
// and is left as it is, as a running restore leaves a path changed under it (place-guard.ts).
import { CkptError } from '../errors.js';
import type { CaptureEvent, EventBase, FileImage, RestoreStartedEvent } from '../format/event.js';
import type { BlobStore } from '../storage/blob-store.js';
import { sameImage } from '../format/same-image.js';
import { imageOfPlanEntry } from '../session/replay.js';
import type { PlannedEntry } from './plan-restore.js';
import { mapLimit, readPresent } from './present.js';

/** The recovery capture's images of `started`'s planned paths; LOG_CORRUPT when any is missing or its content is not in the store. */
export async function recoveryImagesOf(events: readonly EventBase[], started: RestoreStartedEvent, entries: readonly PlannedEntry[], blobs: BlobStore): Promise<Map<string, FileImage>> {
  const capture = events.find((e): e is CaptureEvent => e.type === 'capture' && e.restoreId === started.id && e.seq < started.seq);
  const images = new Map<string, FileImage>();
  for (const f of capture?.files ?? []) if (f.state !== 'skipped') images.set(f.path, f);
  const unrecorded = entries.filter((e) => !images.has(e.path)).map((e) => e.path);
  const lost: string[] = [];
  for (const e of entries) {
    const image = images.get(e.path);
    if (image?.state === 'file' && !(typeof image.blob === 'string' && (await blobs.has(image.blob)))) lost.push(e.path);
  }
  if (!capture || unrecorded.length > 0 || lost.length > 0) {
    const why = !capture ? 'it has no recovery capture' : unrecorded.length > 0 ? `its recovery capture did not record ${unrecorded.slice(0, 5).join(', ')}` : `the recovery content of ${lost.slice(0, 5).join(', ')} is not in the store`;
    throw new CkptError('LOG_CORRUPT', `the interrupted restore ${started.id} cannot be finished: ${why}; nothing was done (the log was changed by something other than ckpt, or the store lost content)`, {
      restore: started.id,
      unrecorded,
      lost,
    });
  }
  return images;
}

/**
 * Planned paths that hold neither what the recovery capture read nor what the plan puts there: the
 * data a path holds is compared (a file's content and mode, a link's target); a folder or nothing
 * there holds none. What cannot be read is left too.
 */
export async function changedSinceInterrupted(root: string, entries: readonly PlannedEntry[], recovered: ReadonlyMap<string, FileImage>, maxBytes: number): Promise<Set<string>> {
  const changed = await mapLimit(entries, 16, async (entry) => {
    const present = await readPresent(root, entry.path, maxBytes);
    // Beneath a file or a link nothing is there (placing skips a path beneath a link no entry replaces);
    // anything else unreadable is left.
    if (present.state === 'skipped') return present.at === undefined;
    if (present.state !== 'file' && present.state !== 'symlink') return false;
    const target = imageOfPlanEntry(entry);
    const isTarget = target.state === 'file' && present.state === 'file' ? target.blob === present.blob && (target.mode === undefined || target.mode === present.mode) : sameImage(target, present);
    return !isTarget && !sameImage(recovered.get(entry.path), present);
  });
  return new Set(entries.filter((_, i) => changed[i]).map((e) => e.path));
}
