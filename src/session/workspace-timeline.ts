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
import type { SessionMetadata } from './metadata.js';
import type { SessionHandle } from './session-handle.js';
import { createSessionStore } from './session-store.js';
import { removedHistories } from './removed-sessions.js';

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
  const ownRecords = new Map<string, string[]>();
  for (const c of own) for (const f of c.files) (ownRecords.get(f.path) ?? ownRecords.set(f.path, []).get(f.path)!).push(c.at);
  for (const other of others) {
    const skipThrough = Math.max(other.copiedThrough, ancestorCopies.get(other.id) ?? 0);
    const pruned = prunedThrough(other.events);
    const settledAt = settleTimes(other.events);
    let used = false;
    for (const e of other.events) {
      if (e.type !== 'capture' || e.seq <= skipThrough) continue;
      const c = e as CaptureEvent;
      // A fork's record holds the images at its fork point, not the workspace at the time it was made.
      if (c.tool === FORK_TOOL) continue;
      const files = e.seq < pruned ? c.files.map(prunedImage(other.id)) : c.files;
      // The call's write came after a prompt of the owner whose scan saw the path as the capture did
      // (the owner recorded nothing of it since): at that prompt the path held the before-image, so it
      // is placed again at its settle (as settle.ts acrossPrompt does within one session; a race probe:
      // B's call in flight across A's prompt 1, and A's `restore 1` kept B's write).
      for (const [at, paths] of writtenAfterOwnPrompt(c, settledAt.get(c.tag as string), lookedTurns, ownRecords)) {
        const late = baseOf(at);
        merged.push({ c: { ...c, files: files.filter((f) => paths.has(f.path)), seq: late + 0.5, session: other.id }, key: late + 0.5, at, rank: rank++ });
        used = true;
      }
      const base = baseOf(c.at);
      if (base === 0) continue; // before the owner existed: before every position of it
      merged.push({ c: { ...c, files, seq: base + 0.5, session: other.id }, key: base + 0.5, at: c.at, rank: rank++ });
      used = true;
    }
    if (used) sources.push(...other.events);
  }
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

/** For each capture tag of `events`, when each path it names was settled (the last settle naming it). */
function settleTimes(events: readonly EventBase[]): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const e of events) {
    if (e.type !== 'settle' || typeof e.tag !== 'string') continue;
    const paths = out.get(e.tag) ?? out.set(e.tag, new Map()).get(e.tag)!;
    for (const f of (e.files as FileImage[] | undefined) ?? []) paths.set(f.path, e.at);
  }
  return out;
}

/**
 * The paths of another session's capture `c` settled after a looked prompt of the owner that came
 * after the capture, with no record of the owner in between, grouped by settle time.
 */
function writtenAfterOwnPrompt(c: CaptureEvent, settled: ReadonlyMap<string, string> | undefined, lookedTurns: readonly string[], ownRecords: ReadonlyMap<string, string[]>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  if (!settled) return out;
  for (const f of c.files) {
    const at = settled.get(f.path);
    if (at === undefined || at <= c.at || !lookedTurns.some((t) => t > c.at && t < at)) continue;
    if ((ownRecords.get(f.path) ?? []).some((t) => t > c.at && t < at)) continue;
    (out.get(at) ?? out.set(at, new Set()).get(at)!).add(f.path);
  }
  return out;
}

function prunedImage(session: string): (f: FileImage) => FileImage {
  return (f) => (f.state === 'file' ? { path: f.path, state: 'skipped', why: `pruned in session ${session}` } : f);
}

/**
 * The workspace timeline of session `owner` (default: `session`), whose history is `events`: every
 * other session of the workspace that changed anything after the owner began is read and merged.
 */
export async function workspaceTimeline(session: SessionHandle, events: readonly EventBase[], owner: string = session.id): Promise<WorkspaceTimeline> {
  const sessions = createSessionStore(session.ctx);
  const first = events[0] as SessionEvent | undefined;
  const since = events.reduce((min, e) => (e.at < min ? e.at : min), first?.at ?? '');
  let metas: SessionMetadata[];
  try {
    metas = await sessions.list();
  } catch {
    metas = [];
  }
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
    try {
      const otherEvents = await (await sessions.get(meta.id)).events();
      const copied = meta.forkedFrom ? meta.forkedFrom.seq : 0;
      others.push({ id: meta.id, events: otherEvents, copiedThrough: copied });
    } catch {
      // Removed meanwhile: its captures are among the removed sessions' (below), or were not needed.
    }
  }
  // A removed session's captures stay on the others' timelines (removed-sessions.ts).
  for (const r of await removedHistories(session.ctx, since)) {
    if (r.id !== owner && r.id !== session.id && r.lastAt >= since) others.push({ id: r.id, events: r.events, copiedThrough: 0 });
  }
  return mergeTimeline(events, others, ancestorCopies);
}
