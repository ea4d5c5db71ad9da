// The retention policy (DESIGN §2, §3 `prune {before}`), pure: which early positions of a session a
// `prune` event retires. A `prune` event with `before: P` makes every position below P unrestorable
// (TAG_PRUNED; see positions.ts) and lets GC free what only the retired events referenced
// (gc/live-set.ts). Positions >= P keep working: a restore to them uses the earliest capture after
// them, which comes after P. Prune points fall on turn boundaries: `before` is the seq of a `turn`
// event, so tag `N` of the oldest kept turn stays valid.
//
// The automatic policy (default: the last 100 turns and nothing older than 30 days, per session) is
// applied when a turn starts (capture/turn.ts), from the retention index of the hot state: no log read;
// `ckpt prune` (gc/prune.ts) applies explicit limits. Both sit above this module, so it lives here.
import { invalidValue } from '../errors.js';
import { formatDuration, parseDuration } from '../format/duration.js';
import type { EventBase, NewEvent } from '../format/event.js';
import type { RetentionPolicy } from '../context.js';
import { prunedThrough } from './positions.js';

export interface PruneOptions {
  /** Keep the last N turns (N >= 1): positions before the start of the N-th latest turn retire. */
  keepTurns?: number;
  /** Retire the turns (turn 0 included) whose every event is older than this (ms); the current turn stays. */
  olderThanMs?: number;
  /** Keep the last N checkpoints (N >= 1): the turns before the one holding the N-th latest capture retire. */
  keepCheckpoints?: number;
  /** "Now" for `olderThanMs` (default Date.now()). */
  now?: number;
}


export const DEFAULT_RETENTION: Readonly<Required<Omit<RetentionPolicy, 'keepCheckpoints'>>> = { keepTurns: 100, olderThanMs: 30 * 86_400_000 };

export function assertPruneOptions(options: PruneOptions): void {
  const { keepTurns, olderThanMs, keepCheckpoints } = options;
  if (keepTurns !== undefined && (!Number.isSafeInteger(keepTurns) || keepTurns < 1)) {
    throw invalidValue('keepTurns', keepTurns, `keep-turns must be a whole number >= 1, got ${keepTurns}`, { keepTurns });
  }
  if (keepCheckpoints !== undefined && (!Number.isSafeInteger(keepCheckpoints) || keepCheckpoints < 1)) {
    throw invalidValue('keepCheckpoints', keepCheckpoints, `keep-checkpoints must be a whole number >= 1, got ${keepCheckpoints}`, { keepCheckpoints });
  }
  if (olderThanMs !== undefined && (!Number.isSafeInteger(olderThanMs) || olderThanMs < 0)) {
    throw invalidValue('olderThan', olderThanMs, `older-than must be a non-negative duration, got ${olderThanMs}`, { olderThanMs });
  }
}

/**
 * Pure: the position `options` retire history before (0 when they retire nothing) — always the start
 * of a turn, so the current turn is always kept. With both limits the later point wins (whatever
 * either limit retires is retired).
 */
export function prunePoint(events: readonly EventBase[], options: PruneOptions): number {
  assertPruneOptions(options);
  const turns = events.filter((e) => e.type === 'turn');
  let before = 0;
  if (options.keepTurns !== undefined && turns.length > options.keepTurns) {
    before = Math.max(before, turns[turns.length - options.keepTurns]!.seq);
  }
  if (options.keepCheckpoints !== undefined) {
    const captures = events.filter((e) => e.type === 'capture');
    const oldestKept = captures[captures.length - options.keepCheckpoints];
    if (oldestKept) {
      const start = turns.filter((t) => t.seq < oldestKept.seq).at(-1);
      if (start) before = Math.max(before, start.seq);
    }
  }
  if (options.olderThanMs !== undefined) {
    // A turn is old when all of it is: the event just before the next turn is older than the cutoff.
    const cutoff = (options.now ?? Date.now()) - options.olderThanMs;
    let previous: EventBase | undefined;
    for (const e of events) {
      if (e.type === 'turn' && previous && Date.parse(previous.at) < cutoff) before = Math.max(before, e.seq);
      previous = e;
    }
  }
  return before;
}

/** Pure: the `prune` event that applying `options` to `events` needs, or undefined when nothing new retires. */
export function pruneEvent(events: readonly EventBase[], options: PruneOptions): NewEvent | undefined {
  const before = prunePoint(events, options);
  if (before <= prunedThrough(events)) return undefined;
  return pruneEventFields(before, options);
}

function pruneEventFields(before: number, options: PruneOptions): NewEvent {
  return {
    type: 'prune',
    before,
    ...(options.keepTurns !== undefined ? { keepTurns: options.keepTurns } : {}),
    ...(options.olderThanMs !== undefined ? { olderThan: formatDuration(options.olderThanMs) } : {}),
    ...(options.keepCheckpoints !== undefined ? { keepCheckpoints: options.keepCheckpoints } : {}),
  };
}

/**
 * The part of a log a retention policy looks at, kept without the log (issue 28: a turn's start read
 * and decoded the whole log for it; the hot state, session/hot-state.ts, folds this index): the prune
 * point, and each turn from it on (earlier turns cannot move it), with the time of the event before
 * it (`olderThan`) and its capture count (`keepCheckpoints`). Its size follows the turns retention
 * keeps (100 by default), not the events.
 */
export interface RetentionIndex {
  /** The highest `prune` point (0: none). */
  prunedThrough: number;
  /** `at` of the last event folded. */
  lastAt: string;
  /** The turns from the prune point on, in log order (captures before the first turn count nowhere: no policy prunes there). */
  turns: { seq: number; prevAt: string; captures: number }[];
}

/**
 * prunePoint from a retention index instead of the events: the same point whenever it is past the
 * index's prune point, which is all a prune event needs (a property test checks it).
 */
export function prunePointFromIndex(index: Readonly<RetentionIndex>, options: PruneOptions): number {
  assertPruneOptions(options);
  const turns = index.turns;
  let before = 0;
  if (options.keepTurns !== undefined && turns.length > options.keepTurns) before = Math.max(before, turns[turns.length - options.keepTurns]!.seq);
  if (options.keepCheckpoints !== undefined) {
    // The turn holding the keepCheckpoints-th latest capture: its start is where history retires.
    let seen = 0;
    for (let i = turns.length - 1; i >= 0; i--) {
      seen += turns[i]!.captures;
      if (seen >= options.keepCheckpoints) {
        before = Math.max(before, turns[i]!.seq);
        break;
      }
    }
  }
  if (options.olderThanMs !== undefined) {
    const cutoff = (options.now ?? Date.now()) - options.olderThanMs;
    for (const t of turns) if (Date.parse(t.prevAt) < cutoff) before = Math.max(before, t.seq);
  }
  return before;
}

/** Whether `policy` retires anything at all (off, or no limit set: it does not). */
export function retains(policy: RetentionPolicy | false | undefined): policy is RetentionPolicy {
  return !!policy && (policy.keepTurns !== undefined || policy.olderThanMs !== undefined || policy.keepCheckpoints !== undefined);
}

/** retentionEvent from a retention index: what a turn's start appends, reading no log. */
export function retentionEventFromIndex(index: Readonly<RetentionIndex>, policy: RetentionPolicy | false, now = Date.now()): NewEvent | undefined {
  if (!retains(policy)) return undefined;
  const before = prunePointFromIndex(index, { ...policy, now });
  if (before <= index.prunedThrough) return undefined;
  return { ...pruneEventFields(before, policy), auto: true };
}

/**
 * The policy in force: `configured` (store option) wins, else the environment — CKPT_RETENTION=off
 * switches it off; CKPT_KEEP_TURNS (a number or `off`) and CKPT_KEEP_AGE (a duration or `off`)
 * override the defaults; CKPT_KEEP_CHECKPOINTS (a number) adds a checkpoint-count limit. Invalid values are INVALID_ARGUMENT, never silently ignored.
 */
export function resolveRetention(configured: RetentionPolicy | false | undefined, env: NodeJS.ProcessEnv = process.env): RetentionPolicy | false {
  if (configured !== undefined) return configured;
  if (/^(off|0|false|no)$/i.test(env.CKPT_RETENTION ?? '')) return false;
  const policy: RetentionPolicy = { ...DEFAULT_RETENTION };
  const turns = env.CKPT_KEEP_TURNS;
  if (turns !== undefined && turns !== '') {
    if (/^off$/i.test(turns)) delete policy.keepTurns;
    else if (/^[1-9][0-9]{0,8}$/.test(turns)) policy.keepTurns = Number(turns);
    else throw invalidValue('CKPT_KEEP_TURNS', turns, `CKPT_KEEP_TURNS must be a whole number >= 1 or "off", got ${JSON.stringify(turns)}`, { env: 'CKPT_KEEP_TURNS' });
  }
  const checkpoints = env.CKPT_KEEP_CHECKPOINTS;
  if (checkpoints !== undefined && checkpoints !== '' && !/^off$/i.test(checkpoints)) {
    if (/^[1-9][0-9]{0,8}$/.test(checkpoints)) policy.keepCheckpoints = Number(checkpoints);
    else throw invalidValue('CKPT_KEEP_CHECKPOINTS', checkpoints, `CKPT_KEEP_CHECKPOINTS must be a whole number >= 1 or "off", got ${JSON.stringify(checkpoints)}`, { env: 'CKPT_KEEP_CHECKPOINTS' });
  }
  const age = env.CKPT_KEEP_AGE;
  if (age !== undefined && age !== '') {
    if (/^off$/i.test(age)) delete policy.olderThanMs;
    else policy.olderThanMs = parseDuration(age, 'CKPT_KEEP_AGE');
  }
  return policy;
}

/** Pure: the prune event the automatic policy wants after `events` (called when a turn starts). */
export function retentionEvent(events: readonly EventBase[], policy: RetentionPolicy | false, now = Date.now()): NewEvent | undefined {
  if (!retains(policy)) return undefined;
  const event = pruneEvent(events, { ...policy, now });
  return event && { ...event, auto: true };
}
