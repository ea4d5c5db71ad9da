// A fork's first record (DESIGN §10 "Forks see the whole workspace", issue 26 item 3). A fork at a
// point before the end of its parent's history is made while the workspace holds what came after
// that point: the parent's later turns, other sessions' writes. The fork leaves the files as they
// are and records, as one capture (tool `fork`) with its settle, the image at the fork point of every
// path any session of the workspace recorded after it (before-images) and what the path holds now
// (after-images) — only paths whose present differs. Restore, diff and status in the fork then see
// those paths like any recorded change: `restore T` puts the fork point back exactly, with the usual
// recovery capture, and drift is judged against what the workspace held at the fork.
// The record is computed before the fork exists and written in the fork's own create (ForkOptions.record):
// a fork killed half-way leaves no fork, never one that believes the workspace is at its fork point.
import { nextCaptureEvent, readImages } from '../capture/capture.js';
import { inlineRecords } from '../format/inline-blobs.js';
import { FORK_TOOL, type CaptureEvent, type EventBase, type FileImage, type NewEvent } from '../format/event.js';
import { isStoredPath } from '../format/stored-path.js';
import { imagesAt } from '../session/positions.js';
import { replay } from '../session/replay.js';
import { removedHistories } from '../session/removed-sessions.js';
import { createSessionStore } from '../session/session-store.js';
import type { SessionHandle } from '../session/session-handle.js';
import { spillInline } from '../storage/inline-store.js';
import { sameImage } from '../format/same-image.js';
import { readPresentImages } from './present.js';

/** Why a fork-point image is `skipped`: its content was collected before the fork could keep it. */
const CONTENT_COLLECTED = 'content-collected';

export interface ForkRecordInput {
  /** The parent (any handle of the fork's workspace: its root, options and blob store). */
  parent: SessionHandle;
  /** The parent's whole history and the seq the fork is made at. */
  parentEvents: readonly EventBase[];
  atSeq: number;
  /** Every other session's history in the workspace (not the parent's). */
  others: readonly (readonly EventBase[])[];
  /**
   * A fork at a tag `N.K` is just before capture N.K: another session's capture made before that
   * capture's time (after the turn) is before the point, as on the timeline (`timelinePosition`). Its time.
   */
  pointAt?: string;
}

/** The fork-point record for a fork about to be made: a capture and its settle, or none when the workspace still holds the fork point. */
export async function forkPointRecord(input: ForkRecordInput): Promise<NewEvent[]> {
  const { parent, parentEvents, atSeq } = input;
  const forkAt = parentEvents.find((e) => e.seq === atSeq)?.at ?? '';
  // Captures after the fork point, in the order they happened: the parent's by seq, then every other
  // session's captured after the fork point's time (copies of the parent's events in other forks
  // repeat the parent's images, so taking the earliest is still right).
  const later: { at: string; rank: number; seq: number; c: CaptureEvent }[] = [];
  for (const e of parentEvents) if (e.type === 'capture' && e.seq > atSeq) later.push({ at: e.at, rank: 0, seq: e.seq, c: e as CaptureEvent });
  // Another fork's first record is left out, as on the timeline (workspace-timeline.ts): its images are
  // that fork's point, not the workspace when it was made (a fork at turn 1, then one at turn 3 with
  // nothing changed since took turn 1's files as turn 3's: its `restore 3` wrote them back).
  const afterPoint = (at: string) => (input.pointAt !== undefined ? at >= input.pointAt : at > forkAt);
  for (const events of input.others) for (const e of events) if (e.type === 'capture' && afterPoint(e.at) && (e as CaptureEvent).tool !== FORK_TOOL) later.push({ at: e.at, rank: 1, seq: e.seq, c: e as CaptureEvent });
  if (later.length === 0) return [];
  later.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.rank - b.rank || a.seq - b.seq));
  // The earliest capture after the point holds each path's image at the point (DESIGN §2 "Restore to a tag").
  const atPoint = imagesAt(later.map((l, i) => ({ ...l.c, seq: i + 1 })), 0);
  const candidates = [...atPoint.values()].filter((img) => !img.implied && img.state !== 'skipped' && isStoredPath(img.path));
  const root = parent.workspaceRoot;
  const present = await readPresentImages(root, candidates.map((c) => c.path), parent.ctx.options.maxBlobBytes);
  const changed = candidates.filter((img) => {
    const now = present.get(img.path);
    return now !== undefined && now.state !== 'skipped' && !sameImage(img, now);
  });
  if (changed.length === 0) return [];
  changed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // Every image's content is in the store before the fork's log names it (a source event may hold it inline only).
  const sources = [parentEvents, ...input.others].flat();
  await spillInline(parent.ctx.blobs, inlineRecords(sources), changed.map((c) => c.blob));
  // Freshened, so a concurrent GC keeps it until the fork's log names it. One GC already collected
  // (another session's capture its retention retired, or a session removed since) is not content ckpt
  // can put back: the path is recorded as not known at the point, never with a blob that is not there
  // (the soak: `verify` found the fork records naming missing blobs, and their restores failed).
  const before: FileImage[] = [];
  for (const { implied: _implied, ...img } of changed) {
    if (img.blob === undefined || (await parent.ctx.blobs.freshen(img.blob))) before.push(img);
    else before.push({ path: img.path, state: 'skipped', why: CONTENT_COLLECTED });
  }
  const after = await readImages(parent, changed.map((c) => ({ rel: c.path, abs: `${root}/${c.path}` })));
  // Tagged as a capture appended to the copied history would be: next in its last turn.
  const capture = nextCaptureEvent(replay(parentEvents.filter((e) => e.seq <= atSeq)), before, {
    tool: FORK_TOOL,
    reason: `workspace at fork: ${changed.length} path(s) differ from the fork point`,
  });
  return [capture, { type: 'settle', tag: capture.tag, files: after }];
}

/** Every other session's history in the workspace of `parent` (the parent left out). */
export async function otherHistories(parent: SessionHandle): Promise<EventBase[][]> {
  const sessions = createSessionStore(parent.ctx);
  const out: EventBase[][] = [];
  for (const meta of await sessions.list()) {
    if (meta.id === parent.id) continue;
    try {
      out.push(await (await sessions.get(meta.id)).events());
    } catch {
      // Removed meanwhile: its captures are among the removed sessions' (below), or were not needed.
    }
  }
  for (const r of await removedHistories(parent.ctx)) if (r.id !== parent.id) out.push([...r.events]);
  return out;
}
