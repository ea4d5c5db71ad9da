// A change made outside the agent during a turn (issue 26, DESIGN §10 "Hand edits during a turn"):
// the user edits or deletes a file after sending prompt N, before the agent's next tool call on it.
// The tool's capture would take the hand-edited state as the path's before-image, so `restore N`
// gave the hand edit instead of the state at prompt N. Before a tool capture, a path whose present
// state differs from what ckpt last recorded (this session's record, or the workspace's newer owner
// record) is recorded first as the user's change: before-image = the last record, after = present.
// Costs nothing when nothing differs (no owner index read); only paths ckpt recorded are covered.
import type { FileImage } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import { sameImage } from '../format/same-image.js';
import { ownerImage, readOwners, type ReadOwners } from './owner-index.js';

export interface OutsideChanges {
  /** What ckpt last recorded of each changed path (the before-images of the user's capture). */
  before: FileImage[];
  /** What the paths hold now (its settle). */
  after: FileImage[];
}

/** Same state and content; a record without a mode (older writers) says nothing about it. */
function sameContent(recorded: FileImage, present: FileImage): boolean {
  if (recorded.state === 'file' && present.state === 'file' && recorded.mode === undefined) return recorded.blob === present.blob;
  return sameImage(recorded, present);
}

/** The outside changes among `images` (a tool capture's present images), or undefined when there are none. */
export async function outsideChanges(
  session: SessionHandle,
  known: ReadonlyMap<string, FileImage | null>,
  images: readonly FileImage[],
  read: ReadOwners = (options) => readOwners(session, options),
): Promise<OutsideChanges | undefined> {
  const candidates = images.filter((i) => {
    const k = known.get(i.path);
    return k && k.state !== 'skipped' && i.state !== 'skipped' && !sameContent(k, i);
  });
  if (candidates.length === 0) return undefined;
  // spilled: a before-image taken from the index must be restorable from the blob store (checked below).
  const owners = await read({ spilled: true });
  const out: OutsideChanges = { before: [], after: [] };
  for (const present of candidates) {
    const o = Object.hasOwn(owners, present.path) ? owners[present.path] : undefined;
    // The newest record of the path: the owner index's (any session's last write), else this session's.
    const last = o ? ownerImage(present.path, o) : known.get(present.path);
    if (!last || last.state === 'skipped' || sameContent(last, present)) continue;
    // The before-image must be restorable: its content in the store.
    if (last.state === 'file' && (typeof last.blob !== 'string' || !(await session.ctx.blobs.has(last.blob)))) continue;
    const { newDirs: _newDirs, ...now } = present;
    out.before.push({ ...last, path: present.path });
    out.after.push(now);
  }
  return out.before.length > 0 ? out : undefined;
}
