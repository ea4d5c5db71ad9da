// What ckpt last recorded of a path, for a past tag that no capture of the path follows (`cat`, `diff`):
// any session's owner record (another may have written it since this one did), else this session's
// replayed state. Such a tag's state is that record when the present differs from it (changed
// unrecorded since), else the present.
import type { EventBase, FileImage } from '../format/event.js';
import { replay, type ReplayState } from '../session/replay.js';
import { loadPlans } from '../session/restore-plans.js';
import type { BlobStore } from '../storage/blob-store.js';
import { sameImage } from '../format/same-image.js';

/** The last record of `rel` when `present` differs from it (and it is not skipped); undefined when the present holds it. */
export type RecordUnlessPresent = (rel: string, present: FileImage) => Promise<FileImage | undefined>;

export function recordUnlessPresent(events: readonly EventBase[], blobs: BlobStore, lastRecord?: (rel: string) => Promise<FileImage | undefined>): RecordUnlessPresent {
  let known: ReplayState['known'] | undefined;
  return async (rel, present) => {
    let recorded = await lastRecord?.(rel);
    if (!recorded) {
      if (!known) {
        await loadPlans(blobs, events); // `known` folds committed restores, whose big plans sit in blobs
        known = replay(events).known;
      }
      recorded = known.get(rel) ?? undefined;
    }
    return recorded && recorded.state !== 'skipped' && !sameImage(recorded, present) ? recorded : undefined;
  };
}
