// The workspace's timeline of captures as one session sees it (DESIGN §10 "Restore, diff and cat see
// every session of the workspace", issue 26). A restore to a tag of session S puts back every path
// any session of the workspace recorded after that point, not only S's own: after `/clear` (a new
// agent session in the same folder), a fork, or a second agent, the paths the other session wrote
// are part of "the workspace at prompt N" too. This module merges the other sessions' captures into
// S's own, placed by time: an other session's capture made at time t goes right after the last of
// S's events made at or before t (a fractional seq `base + 0.5`), so positions, which are S's seqs,
// keep their meaning and "the earliest capture after the position" (positions.ts `imagesAt`) is the
// path's image at that point, whoever recorded it.
//
// A fork's first record (tool `fork`, restore/fork-record.ts) is left out: its before-images are the
// workspace at the fork point, not at the time it was made; it only means something in the fork.
// Events one session holds as copies of another's (a fork's history up to its fork point) are taken
// once: from the session that made them. Another session's captures before its prune point may name
// blobs GC removed: their images become `skipped` (a restore leaves those paths and reports them).
import { FORK_TOOL, type CaptureEvent, type EventBase, type FileImage, type SessionEvent } from '../format/event.js';
import { parseTag } from '../format/tag.js';
import { prunedThrough, resolveTagSeq } from './positions.js';
import type { SessionHandle } from './session-handle.js';
import { createSessionStore } from './session-store.js';
import { removedHistories } from './removed-sessions.js';
import { sameImage } from '../format/same-image.js';
import { loadedPlan, loadPlans } from './restore-plans.js';
import { imageOfPlanEntry } from './replay.js';
import { checkMovedFrom } from './moved-from.js';
import type { CkptError } from '../errors.js';

/** A capture of the timeline; `session` is set on another session's capture (its tag is that session's). */
export type TimelineCapture = CaptureEvent & { session?: string };

export interface WorkspaceTimeline {
  /** The owner's captures and every other session's, ordered as they happened, by the owner's seqs. */
  captures: TimelineCapture[];
  /** Other sessions' events whose captures were merged (their inline content records are needed to read them). */
  sources: EventBase[];
}

export interface OtherHistory {
  id: string;
  events: readonly EventBase[];
  /** Events with a seq up to this are copies of another session's (a fork's copied history). */
  copiedThrough: number;
}

/**
 * Merges `others` into the captures of `events` (the history of session `owner`; see the header).
 * `ancestorCopies`: for each session whose early events `events` holds as copies, the last seq copied.
 */
export function mergeTimeline(events: readonly EventBase[], others: readonly OtherHistory[], ancestorCopies: ReadonlyMap<string, number> = new Map()): WorkspaceTimeline {
  const own = events.filter((e): e is CaptureEvent => e.type === 'capture');
  // The owner's events by time, with the highest seq made at or before each time.
  const byTime = events.map((e) => ({ at: e.at, seq: e.seq })).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.seq - b.seq));
  const maxSeq: number[] = [];
  for (let i = 0, m = 0; i < byTime.length; i++) maxSeq.push((m = Math.max(m, byTime[i]!.seq)));
  const baseOf = (at: string): number => {
    let lo = 0;
    let hi = byTime.length; // first index with at > `at`
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byTime[mid]!.at <= at) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? 0 : maxSeq[lo - 1]!;
  };
  const merged: { c: TimelineCapture; key: number; at: string; rank: number }[] = own.map((c, i) => ({ c, key: c.seq, at: c.at, rank: i }));
  const sources: EventBase[] = [];
  let rank = own.length;
  const lookedTurns = events.filter((e) => e.type === 'turn' && e.looked === true).map((e) => e.at);
  // Every session's records by path: made once, when the first call across an owner's prompt needs them.
  let seenBy: Map<string, Observation[]> | undefined;
  const seen = () => (seenBy ??= observations(events, others, ancestorCopies));
  const used = new Set<string>();
  for (const other of others) {
    const skipThrough = Math.max(other.copiedThrough, ancestorCopies.get(other.id) ?? 0);
    const pruned = prunedThrough(other.events);
    const settled = settleImages(other.events);
    const taken = new Set(other.events.filter((e) => e.type === 'capture' && e.seq > skipThrough).map((e) => e.tag));
    for (const e of other.events) {
      if (e.type !== 'capture' || e.seq <= skipThrough) continue;
      const c = e as CaptureEvent;
      // A fork's record holds the images at its fork point, not the workspace at the time it was made;
      // a capture moved from an earlier call holds what its paths held at that session's prompt, its
      // write lay somewhere after: here the call is its first capture, settled by the moved one's settle
      // — unless that first capture is one the owner holds as a copy (a fork made in between: a
      // hook property seed), where the moved one is placed at its own time, as before.
      if (c.tool === FORK_TOOL || (c.movedFrom !== undefined && taken.has(c.movedFrom))) continue;
      const files = e.seq < pruned ? c.files.map(prunedImage(other.id)) : c.files;
      // The call's write came after a prompt of the owner: at that prompt the path held what ckpt last
      // saw of it (else the capture's before-image), which is placed again at the call's settle (as
      // settle.ts acrossPrompt does within one session; a race probe: B's call in flight across A's
      // prompt 1, and A's `restore 1` kept B's write).
      for (const [at, images] of writtenAfterOwnPrompt(c.at, files, settled.get(c.tag as string), lookedTurns, seen, used)) {
        const late = baseOf(at);
        merged.push({ c: { ...c, files: images, seq: late + 0.5, session: other.id }, key: late + 0.5, at, rank: rank++ });
        used.add(other.id);
      }
      const base = baseOf(c.at);
      if (base === 0) continue; // before the owner existed: before every position of it
      merged.push({ c: { ...c, files, seq: base + 0.5, session: other.id }, key: base + 0.5, at: c.at, rank: rank++ });
      used.add(other.id);
    }
  }
  for (const other of others) if (used.has(other.id)) sources.push(...other.events);
  merged.sort((a, b) => a.key - b.key || (a.at < b.at ? -1 : a.at > b.at ? 1 : 0) || a.rank - b.rank);
  return { captures: merged.map((m) => m.c), sources };
}

/**
 * Where `tag` lies on the timeline. A position is the seq of the last event before it, but on the
 * timeline `N.K` means "just before capture N.K": another session's capture made after event seq-1
 * and before capture N.K (placed at seq-0.5) happened before it, so the position is the capture's
 * seq - 0.25. `N` (just after the turn event) and `@S` (just after event S) are their seqs.
 */
export function timelinePosition(events: readonly EventBase[], tag: string): number {
  const seq = resolveTagSeq(events, tag);
  const parsed = parseTag(tag);
  return parsed.kind !== 'seq' && parsed.k > 0 ? seq + 0.75 : seq;
}

/**
 * For each capture tag of `events`, each path's settled image and when (the last settle naming it). A
 * settle of a capture moved from an earlier call (`movedFrom`) counts as that call's.
 */
function settleImages(events: readonly EventBase[]): Map<string, Map<string, { at: string; image: FileImage }>> {
  const out = new Map<string, Map<string, { at: string; image: FileImage }>>();
  const callOf = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'capture' && typeof e.tag === 'string' && typeof e.movedFrom === 'string') callOf.set(e.tag, callOf.get(e.movedFrom) ?? e.movedFrom);
    if (e.type !== 'settle' || typeof e.tag !== 'string') continue;
    const tag = callOf.get(e.tag) ?? e.tag;
    const paths = out.get(tag) ?? out.set(tag, new Map()).get(tag)!;
    for (const f of (e.files as FileImage[] | undefined) ?? []) paths.set(f.path, { at: e.at, image: f });
  }
  return out;
}

/** What a session's event saw of a path: a capture's before-image, a settle's after-image, a committed restore's placement. */
interface Observation {
  at: string;
  session: string;
  image: FileImage;
}

/**
 * Every image of every path the owner's and the other sessions' captures and settles recorded, by
 * path, in time order (events held as copies of another session's are taken from that session).
 */
function observations(events: readonly EventBase[], others: readonly OtherHistory[], ancestorCopies: ReadonlyMap<string, number>): Map<string, Observation[]> {
  const out = new Map<string, Observation[]>();
  const add = (session: string, list: readonly EventBase[], skipThrough: number, pruned: number) => {
    const committedAt = new Map(list.filter((e) => e.type === 'restore_committed').map((e) => [e.id, e.at]));
    for (const e of list) {
      if (e.seq <= skipThrough) continue;
      // A committed restore's plan (when loaded: workspaceTimeline): what it placed held from its commit.
      const plan = e.type === 'restore_started' && committedAt.has(e.id) ? loadedPlan(e) : undefined;
      if (plan) for (const entry of plan) (out.get(entry.path) ?? out.set(entry.path, []).get(entry.path)!).push({ at: committedAt.get(e.id) as string, session, image: imageOfPlanEntry(entry) });
      if ((e.type !== 'capture' && e.type !== 'settle') || (e.type === 'capture' && (e.tool === FORK_TOOL || e.movedFrom !== undefined))) continue;
      for (const f of (e.files as FileImage[] | undefined) ?? []) {
        // Before the prune point a blob may be gone (retention keeps only the latest after-states).
        const image = e.seq < pruned ? prunedImage(session)(f) : f;
        (out.get(f.path) ?? out.set(f.path, []).get(f.path)!).push({ at: e.at, session, image });
      }
    }
  };
  add('', events, 0, prunedThrough(events));
  for (const o of others) add(o.id, o.events, Math.max(o.copiedThrough, ancestorCopies.get(o.id) ?? 0), prunedThrough(o.events));
  for (const list of out.values()) list.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return out;
}

/**
 * The paths of another session's capture (`files`, made at `from`) written after the owner's last looked prompt before
 * their settle, with the image each held at that prompt, grouped by settle time. The image at the
 * prompt is the latest any session recorded after the capture and before the prompt (the prompt's
 * scan recorded a write made before it), else the capture's; the write came after the prompt when the
 * settled image differs from it (decided by content: whether some record exists in between told it
 * wrong when the record was a hand edit, another call's, or the call's own write: a two-session
 * model test). `used` gets the sessions whose records were taken (their inline content is needed).
 */
function writtenAfterOwnPrompt(
  /** The capture's time. */
  from: string,
  files: readonly FileImage[],
  settled: ReadonlyMap<string, { at: string; image: FileImage }> | undefined,
  lookedTurns: readonly string[],
  seen: () => ReadonlyMap<string, Observation[]>,
  used: Set<string>,
): Map<string, FileImage[]> {
  const out = new Map<string, FileImage[]>();
  if (!settled) return out;
  for (const f of files) {
    const s = settled.get(f.path);
    if (!s || s.at <= from) continue;
    const prompt = lastOf(lookedTurns, (t) => t > from && t < s.at);
    if (prompt === undefined) continue;
    const last = lastOf(seen().get(f.path) ?? [], (o) => o.at > from && o.at < prompt);
    const then = last?.image ?? f;
    if (then.state === 'skipped' || s.image.state === 'skipped' || sameImage(then, s.image)) continue;
    if (last && last.session !== '') used.add(last.session);
    (out.get(s.at) ?? out.set(s.at, []).get(s.at)!).push(then);
  }
  return out;
}

/** The last element of `list` that `ok` accepts (Array.prototype.findLast: not in this build's lib). */
function lastOf<T>(list: readonly T[], ok: (item: T) => boolean): T | undefined {
  for (let i = list.length - 1; i >= 0; i--) if (ok(list[i]!)) return list[i];
  return undefined;
}

function prunedImage(session: string): (f: FileImage) => FileImage {
  return (f) => (f.state === 'file' ? { path: f.path, state: 'skipped', why: `pruned in session ${session}` } : f);
}

/**
 * The workspace timeline of session `owner` (default: `session`), whose history is `events`: every
 * other session of the workspace that changed anything after the owner began is read and merged.
 */
export async function workspaceTimeline(session: SessionHandle, events: readonly EventBase[], owner: string = session.id): Promise<WorkspaceTimeline> {
  checkMovedFrom(events, owner);
  const sessions = createSessionStore(session.ctx);
  const first = events[0] as SessionEvent | undefined;
  const since = events.reduce((min, e) => (e.at < min ? e.at : min), first?.at ?? '');
  // A session that cannot be read fails the caller (LOG_CORRUPT naming it), as a removed session's
  // damaged file does: left out, a restore would miss its records (a probe: exit 0, a wrong workspace).
  const metas = await sessions.list();
  const byId = new Map(metas.map((m) => [m.id, m]));
  // Sessions whose early events the owner holds as copies, and through which seq.
  const ancestorCopies = new Map<string, number>();
  let from = first?.type === 'session' ? first.forkedFrom : undefined;
  let limit = from && from.workspace === undefined ? from.seq : 0;
  for (let cur = from?.session; cur && limit > 0 && !ancestorCopies.has(cur) && from?.workspace === undefined; ) {
    ancestorCopies.set(cur, limit);
    from = byId.get(cur)?.forkedFrom;
    if (!from || from.workspace !== undefined) break;
    limit = Math.min(limit, from.seq);
    cur = from.session;
  }
  const others: OtherHistory[] = [];
  for (const meta of metas) {
    if (meta.id === owner || meta.id === session.id || meta.updatedAt < since) continue;
    let otherEvents: EventBase[];
    try {
      otherEvents = await (await sessions.get(meta.id)).events();
    } catch (err) {
      // Removed meanwhile: its captures are among the removed sessions' (below), or were not needed.
      if ((err as CkptError).code === 'SESSION_NOT_FOUND') continue;
      throw err;
    }
    checkMovedFrom(otherEvents, meta.id);
    others.push({ id: meta.id, events: otherEvents, copiedThrough: meta.forkedFrom ? meta.forkedFrom.seq : 0 });
  }
  // A removed session's captures stay on the others' timelines (removed-sessions.ts).
  for (const r of await removedHistories(session.ctx, since)) {
    if (r.id === owner || r.id === session.id || r.lastAt < since) continue;
    checkMovedFrom(r.events, r.id, true);
    others.push({ id: r.id, events: r.events, copiedThrough: 0 });
  }
  // What a restore committed placed is a record too (observations below): plans kept in blobs are
  // loaded only when another session's call was settled after a prompt of the owner that came after it.
  if (others.length > 0 && straddling(events, others)) {
    for (const list of [events, ...others.map((o) => o.events)]) {
      const committed = new Set(list.filter((e) => e.type === 'restore_committed').map((e) => e.id));
      // A plan that cannot be read is left out here: what needs it (a restore's drift check) reports it.
      await loadPlans(session.ctx.blobs, list, (e) => e.type === 'restore_started' && committed.has(e.id)).catch(() => {});
    }
  }
  return mergeTimeline(events, others, ancestorCopies);
}

/** Whether some other session's call was settled after a looked prompt of the owner that came after its capture. */
function straddling(events: readonly EventBase[], others: readonly OtherHistory[]): boolean {
  const looked = events.filter((e) => e.type === 'turn' && e.looked === true).map((e) => e.at);
  if (looked.length === 0) return false;
  for (const o of others) {
    const captured = new Map<string, string>();
    for (const e of o.events) {
      if (e.type === 'capture' && typeof e.tag === 'string') captured.set(e.tag, (typeof e.movedFrom === 'string' ? captured.get(e.movedFrom) : undefined) ?? e.at);
      else if (e.type === 'settle' && typeof e.tag === 'string') {
        const from = captured.get(e.tag);
        if (from !== undefined && looked.some((t) => t > from && t < e.at)) return true;
      }
    }
  }
  return false;
}
