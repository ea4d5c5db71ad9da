// Size reports (`ckpt stats`, `ckpt session show`): what a session or workspace recorded (logical
// bytes: every captured and settled file counted in full, as a copy-per-checkpoint tool would store
// it) against what that costs on disk (each distinct live blob once, compressed) — so a user sees
// what deduplication and compression save, and how much GC could free.
import type { StoreContext } from '../context.js';
import type { EventBase, FileImage } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import { loadPlans } from '../session/restore-plans.js';
import { collectLiveSet, refsOfEvents } from './live-set.js';

export interface SizeReport {
  /** Bytes of every file image recorded (captures + settles), counted each time. */
  logicalBytes: number;
  capturedBytes: number;
  settledBytes: number;
  captures: number;
  /** Distinct live blobs. */
  blobs: number;
  /** Raw bytes of the distinct live blobs (what deduplication leaves). */
  uniqueBytes: number;
  /** Bytes on disk of those blobs (what compression leaves). */
  storedBytes: number;
  /** Live blobs with no copy in the store. */
  missing: number;
}

export interface SessionSize extends SizeReport {
  id: string;
  prunedBefore: number;
}

export interface WorkspaceSize extends SizeReport {
  id: string;
  root: string | null;
  sessions: SessionSize[];
}

export interface StoreStats {
  /** Every blob copy in the store and its bytes on disk. */
  store: { copies: number; blobs: number; storedBytes: number; referencedBytes: number; unreferencedBytes: number };
  workspaces: WorkspaceSize[];
}

const isImage = (f: unknown): f is FileImage => typeof f === 'object' && f !== null && typeof (f as FileImage).path === 'string';

/** Pure: the recorded sizes of a log, and raw sizes of the blobs it names (from the images' `bytes`). */
export function recordedSizes(events: readonly EventBase[]): { captured: number; settled: number; captures: number; rawOf: Map<string, number> } {
  let captured = 0;
  let settled = 0;
  let captures = 0;
  const rawOf = new Map<string, number>();
  for (const e of events) {
    if (e.type !== 'capture' && e.type !== 'settle' && e.type !== 'scan') continue;
    if (e.type === 'capture') captures++;
    for (const f of Array.isArray(e.files) ? e.files : []) {
      if (!isImage(f) || f.state !== 'file' || typeof f.bytes !== 'number') continue;
      if (e.type === 'settle') settled += f.bytes;
      else captured += f.bytes;
      if (f.blob) rawOf.set(f.blob, f.bytes);
    }
  }
  return { captured, settled, captures, rawOf };
}

function sizeOf(
  live: ReadonlySet<string>,
  recorded: { captured: number; settled: number; captures: number },
  rawOf: ReadonlyMap<string, number>,
  storedOf: ReadonlyMap<string, number>,
): SizeReport {
  let uniqueBytes = 0;
  let storedBytes = 0;
  let missing = 0;
  for (const id of live) {
    uniqueBytes += rawOf.get(id) ?? 0;
    const stored = storedOf.get(id);
    if (stored === undefined) missing++;
    else storedBytes += stored;
  }
  return {
    logicalBytes: recorded.captured + recorded.settled,
    capturedBytes: recorded.captured,
    settledBytes: recorded.settled,
    captures: recorded.captures,
    blobs: live.size,
    uniqueBytes,
    storedBytes,
    missing,
  };
}

/** The size report of one session (one stat per distinct blob). */
export async function sessionSize(session: SessionHandle): Promise<SessionSize> {
  const events = await session.events();
  await loadPlans(session.ctx.blobs, events);
  const refs = refsOfEvents(events);
  const rec = recordedSizes(events);
  const storedOf = new Map<string, number>();
  for (const id of refs.live) {
    const info = await session.ctx.blobs.info(id);
    if (info) storedOf.set(id, info.stored);
  }
  return { id: session.id, prunedBefore: refs.prunedBefore, ...sizeOf(refs.live, rec, rec.rawOf, storedOf) };
}

/** Sizes of every session and workspace of the store, and the store's blob totals. */
export async function storeStats(ctx: Pick<StoreContext, 'backend' | 'blobs'>): Promise<StoreStats> {
  const live = await collectLiveSet(ctx);
  const storedOf = new Map<string, number>();
  let copies = 0;
  let storedBytes = 0;
  for await (const b of ctx.blobs.listBlobs()) {
    copies++;
    storedBytes += b.stored;
    if (!storedOf.has(b.id)) storedOf.set(b.id, b.stored);
  }
  let referencedBytes = 0;
  for (const id of live.ids) referencedBytes += storedOf.get(id) ?? 0;

  const workspaces: WorkspaceSize[] = [];
  for (const wid of live.workspaces) {
    const raw = await ctx.backend.read(`workspaces/${wid}/workspace.json`);
    let root: string | null = null;
    try {
      root = raw ? String((JSON.parse(raw.toString('utf8')) as { root?: unknown }).root) : null;
    } catch {
      root = null;
    }
    const sessions: SessionSize[] = [];
    const union = new Set<string>();
    const rawOf = new Map<string, number>();
    const total = { captured: 0, settled: 0, captures: 0 };
    for (const s of live.sessions.filter((x) => x.workspace === wid)) {
      const rec = recordedSizes(s.events);
      for (const [id, n] of rec.rawOf) rawOf.set(id, n);
      for (const id of s.live) union.add(id);
      total.captured += rec.captured;
      total.settled += rec.settled;
      total.captures += rec.captures;
      sessions.push({ id: s.session, prunedBefore: s.prunedBefore, ...sizeOf(s.live, rec, rec.rawOf, storedOf) });
    }
    workspaces.push({ id: wid, root, ...sizeOf(union, total, rawOf, storedOf), sessions });
  }
  return {
    store: { copies, blobs: storedOf.size, storedBytes, referencedBytes, unreferencedBytes: storedBytes - referencedBytes },
    workspaces,
  };
}
