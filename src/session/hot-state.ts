// The "hot" replay state: the part of a session's fold that every hook call needs — the current turn
// and next capture K, what ckpt last recorded per path (drift and conflicts), the recent captures
// (a settle finds its capture by tool-call id) and whether a restore is unfinished. It folds
// incrementally, so a persisted copy (hot-snapshot.ts) plus the log's tail gives it without decoding
// the whole log. It must agree with `replay()` on what both compute (a property test checks it).
import { isRestoreId, type CaptureEvent, type EventBase, type FileImage, type FileState, type RestoreStartedEvent } from '../format/event.js';
import { imageOfPlanEntry } from './replay.js';
import type { RetentionIndex } from './retention.js';
import { loadedPlan } from './restore-plans.js';
import { isStoredPath, validateFileImage, validateFileImages, validateRestorePlan } from '../format/stored-path.js';

/** Captures kept for settles to find by tag or call id; an older one is looked up in the whole log. */
export const RECENT_CAPTURES = 256;

export interface RecentCapture {
  tag: string;
  seq: number;
  callId?: string;
  /** The capture's images: a settle records only the paths its capture recorded. */
  files: FileImage[];
}

export interface HotState {
  lastSeq: number;
  /** The current turn as replay() reports it: the highest ever started (a rewind never lowers it). */
  turn: number;
  /** The number of the last `turn` event (what next K counts captures against, as in replay()). */
  lastTurnEvent: number;
  maxTurn: number;
  nextK: number;
  known: Map<string, FileImage | null>;
  recent: RecentCapture[];
  /** Restore ids seen in `restore_started` or recovery captures and not closed (committed or aborted). */
  unclosedRestores: Set<string>;
  /** Plans of started, uncommitted restores (their paths become known when committed). */
  openPlans: Map<string, RestoreStartedEvent['plan']>;
  /**
   * Set while the last turn began with a scan (`looked`): the time of the event before it — what
   * changed since was not there when ckpt last looked at the whole workspace (capture.ts).
   */
  lookedSince?: string;
  /** When the last `turn` event was written (a scan's "there at the prompt" test for names un-ignored since: scan-find.ts). */
  turnAt?: string;
  /**
   * Folders ('' the root) above the paths this session's events named, with the time of the last such
   * event: a folder changed after it was changed by something else (a hand edit), since the agent's own
   * writes there came before their settles, and a turn's scan names what changed between prompts
   * (capture.ts). Kept across turns: cleared, the first capture below a folder the agent changed in the
   * last seconds of the previous turn would look (a round-3 probe counted ~0.5 such looks per turn).
   */
  foldersAt: Map<string, string>;
  /** What the automatic retention at a turn's start needs (retention.ts `retentionEventFromIndex`). */
  retention: RetentionIndex;
}

export function emptyHotState(): HotState {
  return { lastSeq: 0, turn: 0, lastTurnEvent: 0, maxTurn: 0, nextK: 1, known: new Map(), recent: [], unclosedRestores: new Set(), openPlans: new Map(), foldersAt: new Map(), retention: { prunedThrough: 0, lastAt: '', turns: [] } };
}

/** Folds `events` (which must continue the state's seq densely) into `state`, in place. */
export function foldHot(state: HotState, events: readonly EventBase[]): HotState {
  const r = state.retention;
  for (const e of events) {
    state.lastSeq = e.seq;
    switch (e.type) {
      case 'turn': {
        r.turns.push({ seq: e.seq, prevAt: r.lastAt, captures: 0 });
        if (e.looked === true) state.lookedSince = r.lastAt;
        else delete state.lookedSince;
        state.turnAt = e.at;
        const turn = e.turn as number;
        state.lastTurnEvent = turn;
        state.maxTurn = Math.max(state.maxTurn, turn);
        state.nextK = 1;
        break;
      }
      case 'capture': {
        const c = e as CaptureEvent;
        const last = r.turns.at(-1);
        if (last) last.captures++;
        if (c.turn === state.lastTurnEvent) state.nextK = Math.max(state.nextK, c.k + 1);
        if (c.tool !== 'restore') for (const f of c.files) state.known.set(f.path, null);
        touchFolders(state, c.files, e.at);
        state.recent.push({ tag: c.tag, seq: c.seq, ...(typeof c.callId === 'string' ? { callId: c.callId } : {}), files: c.files });
        if (state.recent.length > RECENT_CAPTURES) state.recent.splice(0, state.recent.length - RECENT_CAPTURES);
        if (typeof c.restoreId === 'string') state.unclosedRestores.add(c.restoreId);
        break;
      }
      case 'settle':
        for (const f of (e.files as FileImage[]) ?? []) state.known.set(f.path, f);
        touchFolders(state, (e.files as FileImage[]) ?? [], e.at);
        break;
      case 'restore_started':
        state.unclosedRestores.add(String(e.id));
        // A big plan is in a blob: loadHotState loads the plans of the events it folds first.
        state.openPlans.set(String(e.id), loadedPlan(e) ?? (e as RestoreStartedEvent).plan);
        break;
      case 'restore_committed': {
        const plan = state.openPlans.get(String(e.id));
        state.openPlans.delete(String(e.id));
        state.unclosedRestores.delete(String(e.id));
        if (plan) for (const entry of plan) state.known.set(entry.path, imageOfPlanEntry(entry));
        if (plan) touchFolders(state, plan, e.at);
        break;
      }
      case 'restore_aborted':
        state.unclosedRestores.delete(String(e.id));
        state.openPlans.delete(String(e.id));
        break;
      case 'prune':
        if (typeof e.before === 'number' && e.before > r.prunedThrough) {
          r.prunedThrough = e.before;
          // Turns before the prune point can no longer move it (it only grows).
          const keep = r.turns.findIndex((t) => t.seq >= r.prunedThrough);
          r.turns.splice(0, keep < 0 ? r.turns.length : keep);
        }
        break;
    }
    r.lastAt = e.at;
  }
  // As replay(): after a rewind the current turn is the highest ever started. Derived, never folded
  // from, so folding in parts gives what folding at once does.
  state.turn = Math.max(state.lastTurnEvent, state.maxTurn);
  return state;
}

/** Every folder above each of `files` ('' the root) was named by an event at `at`. */
function touchFolders(state: HotState, files: readonly { path: string }[], at: string): void {
  for (const f of files) {
    for (let i = f.path.lastIndexOf('/'); i > 0; i = f.path.lastIndexOf('/', i - 1)) state.foldersAt.set(f.path.slice(0, i), at);
    state.foldersAt.set('', at);
  }
}

// ---- persisted form (untrusted when read back: every field checked, anything odd is undefined) ----

const STATES = new Set<FileState>(['file', 'symlink', 'dir', 'absent', 'skipped']);

export function encodeHotState(s: HotState): Record<string, unknown> {
  return {
    lastSeq: s.lastSeq,
    turn: s.turn,
    lastTurnEvent: s.lastTurnEvent,
    maxTurn: s.maxTurn,
    nextK: s.nextK,
    known: [...s.known],
    recent: s.recent,
    unclosedRestores: [...s.unclosedRestores],
    openPlans: [...s.openPlans],
    retention: s.retention,
    ...(s.lookedSince !== undefined ? { lookedSince: s.lookedSince } : {}),
    ...(s.turnAt !== undefined ? { turnAt: s.turnAt } : {}),
    foldersAt: [...s.foldersAt],
  };
}

function isValid(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

export function decodeHotState(v: unknown): HotState | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const ints = [o.lastSeq, o.turn, o.lastTurnEvent, o.maxTurn, o.nextK];
  if (!ints.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) return undefined;
  // What every fold keeps true (a forged turn 7 of a session with two was appended as tag 7.3).
  if (o.turn !== Math.max(o.lastTurnEvent as number, o.maxTurn as number) || (o.nextK as number) < 1) return undefined;
  if (!Array.isArray(o.known) || !Array.isArray(o.recent) || !Array.isArray(o.unclosedRestores) || !Array.isArray(o.openPlans)) return undefined;
  const known = new Map<string, FileImage | null>();
  // The snapshot is as untrusted as the log it caches: every path, image and plan passes the checks
  // the event decoder applies (stored-path.ts), or the whole log is read instead.
  for (const pair of o.known) {
    if (!Array.isArray(pair) || pair.length !== 2 || !isStoredPath(pair[0])) return undefined;
    const image = pair[1] as FileImage | null;
    if (image !== null && (typeof image !== 'object' || image.path !== pair[0] || !STATES.has(image.state) || !isValid(() => validateFileImage(image)))) return undefined;
    known.set(pair[0], image);
  }
  const recent: RecentCapture[] = [];
  for (const r of o.recent as RecentCapture[]) {
    if (typeof r !== 'object' || r === null || typeof r.tag !== 'string' || !Number.isSafeInteger(r.seq)) return undefined;
    if (r.callId !== undefined && typeof r.callId !== 'string') return undefined;
    try {
      validateFileImages(r.files, {});
    } catch {
      return undefined; // any doubt: the whole log is read instead
    }
    recent.push({ tag: r.tag, seq: r.seq, ...(r.callId !== undefined ? { callId: r.callId } : {}), files: r.files });
  }
  if (!o.unclosedRestores.every((id) => isRestoreId(id))) return undefined;
  const openPlans = new Map<string, RestoreStartedEvent['plan']>();
  for (const pair of o.openPlans) {
    if (!Array.isArray(pair) || !isRestoreId(pair[0]) || !Array.isArray(pair[1]) || !isValid(() => validateRestorePlan(pair[1]))) return undefined;
    openPlans.set(pair[0], pair[1] as RestoreStartedEvent['plan']);
  }
  // Older snapshots have none: every folder then counts as changed since the turn (a look, never a miss).
  const foldersAt = new Map<string, string>();
  if (o.foldersAt !== undefined) {
    if (!Array.isArray(o.foldersAt)) return undefined;
    for (const pair of o.foldersAt) {
      if (!Array.isArray(pair) || pair.length !== 2 || !(pair[0] === '' || isStoredPath(pair[0])) || typeof pair[1] !== 'string') return undefined;
      foldersAt.set(pair[0], pair[1]);
    }
  }
  const retention = decodeRetention(o.retention);
  if (!retention || (o.lookedSince !== undefined && typeof o.lookedSince !== 'string') || (o.turnAt !== undefined && typeof o.turnAt !== 'string')) return undefined;
  return {
    retention,
    ...(typeof o.lookedSince === 'string' ? { lookedSince: o.lookedSince } : {}),
    ...(typeof o.turnAt === 'string' ? { turnAt: o.turnAt } : {}),
    lastSeq: o.lastSeq as number,
    turn: o.turn as number,
    lastTurnEvent: o.lastTurnEvent as number,
    maxTurn: o.maxTurn as number,
    nextK: o.nextK as number,
    known,
    recent,
    unclosedRestores: new Set(o.unclosedRestores as string[]),
    openPlans,
    foldersAt,
  };
}

function decodeRetention(v: unknown): RetentionIndex | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (!Number.isSafeInteger(o.prunedThrough) || (o.prunedThrough as number) < 0 || typeof o.lastAt !== 'string' || !Array.isArray(o.turns)) return undefined;
  const turns: RetentionIndex['turns'] = [];
  for (const t of o.turns as Record<string, unknown>[]) {
    if (typeof t !== 'object' || t === null || !Number.isSafeInteger(t.seq) || typeof t.prevAt !== 'string' || !Number.isSafeInteger(t.captures) || (t.captures as number) < 0) return undefined;
    if ((turns.at(-1)?.seq ?? 0) >= (t.seq as number)) return undefined;
    turns.push({ seq: t.seq as number, prevAt: t.prevAt, captures: t.captures as number });
  }
  return { prunedThrough: o.prunedThrough as number, lastAt: o.lastAt, turns };
}
