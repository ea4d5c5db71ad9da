// Replay: folds a session's events into the state checkpoint operations need (DESIGN §2) — turns,
// captures, the next capture tag, what ckpt last recorded for each path (for drift), interrupted
// restores, the pruning watermark and the agent events still live after rewinds.
import type { CaptureEvent, EventBase, FileImage, RestorePlanEntry, RestoreStartedEvent, TurnEvent } from '../format/event.js';
import { CkptError } from '../errors.js';
import { prunedThrough } from './positions.js';
import { loadedPlan } from './restore-plans.js';

export interface ReplayState {
  lastSeq: number;
  /** The current turn number (0 before the first `turn` event). */
  turn: number;
  turns: TurnEvent[];
  /** K of the next capture in the current turn. */
  nextK: number;
  captures: CaptureEvent[];
  /**
   * What ckpt last recorded as the present state of each path (settle, scan, restore). `null` means
   * a tool captured the path and its after-state was not recorded yet: unknown, so never drift.
   * Reading it throws INTERNAL when a committed restore's plan is in a blob that was not loaded
   * (session/restore-plans.ts `loadPlans`): it would be wrong, and silently so.
   */
  known: Map<string, FileImage | null>;
  /** `restore_started` events with no `restore_committed`: to be finished before anything else. */
  openRestores: RestoreStartedEvent[];
  prunedBefore: number;
}

export function replay(events: readonly EventBase[]): ReplayState {
  const state: ReplayState = {
    lastSeq: events.at(-1)?.seq ?? 0,
    turn: 0,
    turns: [],
    nextK: 1,
    captures: [],
    known: new Map(),
    openRestores: [],
    prunedBefore: prunedThrough(events),
  };
  const open = new Map<string, RestoreStartedEvent>();
  let maxTurn = 0;
  let unloaded: RestoreStartedEvent | undefined;
  for (const e of events) {
    switch (e.type) {
      case 'turn': {
        const t = e as TurnEvent;
        state.turns.push(t);
        maxTurn = Math.max(maxTurn, t.turn);
        state.turn = t.turn;
        state.nextK = 1;
        break;
      }
      case 'capture': {
        const c = e as CaptureEvent;
        state.captures.push(c);
        if (c.turn === state.turn) state.nextK = Math.max(state.nextK, c.k + 1);
        // A recovery capture is followed by the restore's own record of what it wrote.
        if (c.tool !== 'restore') for (const f of c.files) state.known.set(f.path, null);
        break;
      }
      case 'settle':
        for (const f of (e.files as FileImage[]) ?? []) state.known.set(f.path, f);
        break;
      case 'restore_started':
        open.set(String(e.id), e as RestoreStartedEvent);
        break;
      case 'restore_committed': {
        const started = open.get(String(e.id));
        open.delete(String(e.id));
        if (!started) break;
        const plan = loadedPlan(started);
        if (plan) for (const entry of plan) state.known.set(entry.path, imageOfPlanEntry(entry));
        else unloaded ??= started;
        break;
      }
    }
  }
  state.turn = Math.max(state.turn, maxTurn);
  state.openRestores = [...open.values()];
  if (unloaded) {
    const missing = unloaded;
    Object.defineProperty(state, 'known', {
      get() {
        throw new CkptError('INTERNAL', `what ckpt knows of the workspace needs the plan of restore ${String(missing.id)} (seq ${missing.seq}), which was not loaded`, { seq: missing.seq });
      },
    });
  }
  return state;
}

/**
 * What ckpt last recorded for each of `paths` (replay's `known`, for a few paths): the log is walked
 * backwards and stops once every path is found, so old restore plans in blobs are loaded (by
 * `planFor`) only when a path's latest record is that restore. A path never recorded is not in the map.
 */
export async function knownForPaths(
  events: readonly EventBase[],
  paths: readonly string[],
  planFor: (started: RestoreStartedEvent) => Promise<RestorePlanEntry[]>,
  /** Filled with the time (ms) of the event each path's record comes from. */
  times?: Map<string, number>,
): Promise<Map<string, FileImage | null>> {
  const out = new Map<string, FileImage | null>();
  const want = new Set(paths);
  if (want.size === 0) return out;
  const started = new Map<string, RestoreStartedEvent>();
  for (const e of events) if (e.type === 'restore_started' && !started.has(String(e.id))) started.set(String(e.id), e as RestoreStartedEvent);
  let at = NaN;
  const found = (path: string, image: FileImage | null): void => {
    if (!want.has(path)) return;
    want.delete(path);
    out.set(path, image);
    times?.set(path, at);
  };
  for (let k = events.length - 1; k >= 0 && want.size > 0; k--) {
    const e = events[k]!;
    at = Date.parse(e.at);
    if (e.type === 'settle') {
      const files = (e.files as FileImage[]) ?? [];
      // Within one event the last record of a path wins, as in replay.
      for (let j = files.length - 1; j >= 0; j--) found(files[j]!.path, files[j]!);
    } else if (e.type === 'capture' && (e as CaptureEvent).tool !== 'restore') {
      for (const f of (e as CaptureEvent).files) found(f.path, null);
    } else if (e.type === 'restore_committed') {
      const s = started.get(String(e.id));
      if (!s || s.seq > e.seq) continue;
      const plan = await planFor(s);
      for (let j = plan.length - 1; j >= 0; j--) found(plan[j]!.path, imageOfPlanEntry(plan[j]!));
    }
  }
  return out;
}

/** The state a plan entry leaves its path in. */
export function imageOfPlanEntry(entry: RestorePlanEntry): FileImage {
  if (entry.action === 'write') return { path: entry.path, state: 'file', blob: entry.blob, ...(entry.bytes !== undefined ? { bytes: entry.bytes } : {}), mode: entry.mode };
  if (entry.action === 'symlink') return { path: entry.path, state: 'symlink', target: entry.target };
  if (entry.action === 'mkdir') return { path: entry.path, state: 'dir', ...(entry.mode !== undefined ? { mode: entry.mode } : {}) };
  return { path: entry.path, state: 'absent' };
}

/** The next turn number: one past the highest ever used, so tags stay unique even after a rewind. */
export function nextTurnNumber(state: ReplayState): number {
  return state.turns.reduce((max, t) => Math.max(max, t.turn), 0) + 1;
}
