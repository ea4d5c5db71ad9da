// A persisted replay snapshot per session (`sessions/<id>/snapshot.json`, written atomically): the hot
// state (hot-state.ts) folded up to a log position, so a hook process decodes only the log's tail
// instead of the whole log. The file is a cache and untrusted: its shape is checked, its position
// must match the log byte for byte (the last line it names must sit at that offset and the tail must
// continue its seq), and on any mismatch the whole log is read and a new snapshot written.
import type { SessionHandle } from './session-handle.js';
import type { EventLogTx, LogPosition } from '../storage/event-log.js';
import type { EventBase, NewEvent } from '../format/event.js';
import { loadPlans } from './restore-plans.js';
import { decodeHotState, emptyHotState, encodeHotState, foldHot, type HotState } from './hot-state.js';

/** A new snapshot is written once a read had to decode at least this many events… */
export const SNAPSHOT_AFTER_EVENTS = 200;
/**
 * …or this many bytes of log. Captures carry their new content inline (tens of KB each), so 200 of
 * them were megabytes that every hook process read and parsed again; a snapshot (tens of KB, one
 * atomic write) is cheaper than a few of those reads.
 */
export const SNAPSHOT_AFTER_BYTES = 128 * 1024;
const VERSION = 3; // 3: the hot state has its retention index

/** Whether a read that decoded `events` events (`bytes` of log) should leave a snapshot for the next process. */
const worthSaving = (events: number, bytes: number): boolean => events >= SNAPSHOT_AFTER_EVENTS || bytes >= SNAPSHOT_AFTER_BYTES;

/** Per process: the last state of each session handle, so repeated calls decode only new events. */
const memory = new WeakMap<SessionHandle, { pos: LogPosition; state: HotState }>();

export function snapshotKey(session: SessionHandle): string {
  return `${session.key}/snapshot.json`;
}

/**
 * The hot state of the session's log as it is now (call under the session lock for read-decide-append).
 * It is this process's memory of the session, folded forward in place by its later reads and
 * appends: callers read it at once, or under the session lock until their own append, and never
 * change it. (A copy per call cost a hook call O(paths ckpt knows): ~0.1 ms at 700 paths.)
 */
export async function loadHotState(session: SessionHandle, tx?: Pick<EventLogTx, 'readSince'>): Promise<Readonly<HotState>> {
  // Through the transaction when there is one: its append then knows the tail without reading it again.
  const readSince = tx?.readSince ?? session.log.readSince;
  const mem = memory.get(session);
  if (mem) {
    const tail = await readSince(mem.pos);
    if (tail && tail.events.length === 0) return mem.state; // nothing new: the common case of a hook call
    if (tail) {
      await loadPlans(session.ctx.blobs, tail.events);
      // Another call of this process moved the memory meanwhile (it may have folded these very
      // events in place): start again from where it is now rather than fold them twice.
      if (memory.get(session) !== mem) return loadHotState(session, tx);
      return remember(session, tail.pos, foldInPlace(session, mem.state, tail.events));
    }
  }
  const snap = await readSnapshot(session);
  if (snap) {
    const tail = await readSince(snap.pos);
    if (tail) {
      const state = remember(session, tail.pos, await fold(session, snap.state, tail.events));
      if (worthSaving(tail.events.length, tail.pos.bytes - snap.pos.bytes)) await saveSnapshot(session, tail.pos, state);
      return state;
    }
  }
  const events = await session.log.read();
  const state = await fold(session, emptyHotState(), events);
  const pos = session.log.position();
  if (!pos) return state;
  remember(session, pos, state);
  if (worthSaving(events.length, pos.bytes)) await saveSnapshot(session, pos, state);
  return state;
}

/**
 * Appends through `tx` (after `loadHotState(session, tx)`) and moves this process's memory of the
 * hot state to the log's new end, so that its next call (the daemon's next hook call) has nothing
 * new to read and decode. A restore's start (whose fold may need its plan from the blob store)
 * leaves the memory where it was: the next read folds it as usual.
 */
export async function appendWithHotState(session: SessionHandle, tx: Pick<EventLogTx, 'append' | 'end'>, events: NewEvent[]): Promise<EventBase[]> {
  const from = tx.end?.();
  const stored = await tx.append(events);
  const to = tx.end?.();
  const mem = memory.get(session);
  if (from && to && mem && mem.pos.seq === from.seq && mem.pos.bytes === from.bytes && !stored.some((e) => e.type === 'restore_started')) {
    try {
      remember(session, to, foldInPlace(session, mem.state, stored));
    } catch {
      // past the commit point: the next read rebuilds it from the log
    }
  }
  return stored;
}

/** Folds into the memory's own state; a fold that fails half-way forgets it (the next read rebuilds it). */
function foldInPlace(session: SessionHandle, state: HotState, events: readonly EventBase[]): HotState {
  try {
    return foldHot(state, events);
  } catch (err) {
    memory.delete(session);
    throw err;
  }
}

/**
 * This process's hot state of the session if its log still ends where that state was read (`bytes`
 * long: the log is append-only, so nothing was appended since), else undefined. No I/O: for a
 * caller that has just stat'ed the log anyway (the daemon checking a cached session).
 */
export function rememberedHotState(session: SessionHandle, bytes: number): Readonly<HotState> | undefined {
  const mem = memory.get(session);
  return mem && mem.pos.bytes === bytes ? mem.state : undefined;
}

/** Folds events after loading the plans of the restores among them that keep their plan in a blob. */
async function fold(session: SessionHandle, state: HotState, events: readonly EventBase[]): Promise<HotState> {
  await loadPlans(session.ctx.blobs, events);
  return foldHot(state, events);
}

function remember(session: SessionHandle, pos: LogPosition, state: HotState): HotState {
  memory.set(session, { pos, state });
  return state;
}

async function readSnapshot(session: SessionHandle): Promise<{ pos: LogPosition; state: HotState } | undefined> {
  let value: unknown;
  try {
    const raw = await session.ctx.backend.read(snapshotKey(session));
    if (!raw) return undefined;
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { v?: unknown; pos?: Partial<LogPosition>; state?: unknown };
  if (v.v !== VERSION || typeof v.pos !== 'object' || v.pos === null) return undefined;
  const { seq, bytes, lastLine } = v.pos;
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(bytes) || typeof lastLine !== 'string') return undefined;
  const state = decodeHotState(v.state);
  if (!state || state.lastSeq !== seq) return undefined;
  return { pos: { seq: seq!, bytes: bytes!, lastLine }, state };
}

/** Best effort: a snapshot that cannot be written (read-only store, disk full) only costs a full read later. */
async function saveSnapshot(session: SessionHandle, pos: LogPosition, state: HotState): Promise<void> {
  const body = JSON.stringify({ v: VERSION, pos, state: encodeHotState(state) });
  await session.ctx.backend.write(snapshotKey(session), Buffer.from(body)).catch(() => undefined);
}
