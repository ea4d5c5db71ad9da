// `ckpt prune` (DESIGN §2, §3 `prune {before}`): retiring a session's early history without rewriting
// its log, by appending one `prune` event. Which positions retire is the retention policy
// (session/retention.ts), shared with the automatic retention of a new turn (capture/turn.ts).
import { CkptError } from '../errors.js';
import type { EventBase } from '../format/event.js';
import { prunedThrough } from '../session/positions.js';
import { assertPruneOptions, pruneEvent, type PruneOptions } from '../session/retention.js';
import type { SessionHandle } from '../session/session-handle.js';
import { createSessionStore } from '../session/session-store.js';

export interface PruneResult {
  /** False when nothing new was retired (the point was not past the previous one). */
  pruned: boolean;
  /** The session's prune point now (0: nothing retired). */
  before: number;
  /** The prune point before this call. */
  previous: number;
  /** Seq of the appended prune event. */
  seq?: number;
  /** Captures at or before the prune point (their blobs are GC's once nothing else uses them). */
  retiredCaptures: number;
}

/** Retires the history of `session` that `options` select; appends one `prune` event (the log is never rewritten). */
export async function prune(session: SessionHandle, options: PruneOptions): Promise<PruneResult> {
  assertPruneOptions(options);
  if (options.keepTurns === undefined && options.olderThanMs === undefined && options.keepCheckpoints === undefined) {
    throw new CkptError('INVALID_ARGUMENT', 'prune needs --keep-turns, --keep-checkpoints and/or --older-than', {});
  }
  const result = await session.transaction(async (tx): Promise<PruneResult> => {
    const events = await tx.read();
    const event = pruneEvent(events, options);
    const previous = prunedThrough(events);
    if (!event) return { pruned: false, before: previous, previous, retiredCaptures: countCaptures(events, previous) };
    const [stored] = await tx.append([event]);
    const before = event.before as number;
    return { pruned: true, before, previous, seq: stored!.seq, retiredCaptures: countCaptures(events, before) };
  });
  // A removed session's captures this session's history no longer reaches may be no one's now.
  if (result.pruned) await createSessionStore(session.ctx).tidyRemoved();
  return result;
}

function countCaptures(events: readonly EventBase[], before: number): number {
  return events.filter((e) => e.type === 'capture' && e.seq <= before).length;
}
