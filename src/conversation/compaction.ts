// Compaction (issue 15, like zero's sessions): a summary replaces the older part of the live
// conversation when it is replayed; nothing is deleted from the log. `planCompaction` (pure) says
// which live entries a compaction would summarise and which it keeps; `recordCompaction` appends the
// `compaction {summary, throughSeq, compacted, preserved}` event under the session lock, refusing if
// the conversation moved since the plan the caller saw.
import { CkptError } from '../errors.js';
import type { EventBase } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import { liveConversation } from './live.js';

export interface EventRef {
  seq: number;
  type: string;
  id?: string;
}

export interface CompactionPlan {
  /** The last live entry the summary replaces (0: nothing to compact). */
  throughSeq: number;
  compactable: EventRef[];
  preserved: EventRef[];
  preserveLast: number;
}

export interface CompactionOptions {
  /** Live entries kept verbatim at the end (default 0). */
  preserveLast?: number;
}

export function planCompaction(events: readonly EventBase[], options: CompactionOptions = {}): CompactionPlan {
  const preserveLast = options.preserveLast ?? 0;
  if (!Number.isSafeInteger(preserveLast) || preserveLast < 0) {
    throw new CkptError('INVALID_ARGUMENT', `preserveLast must be a whole number >= 0, not ${String(preserveLast)}`);
  }
  const live = liveConversation(events);
  const cut = Math.max(0, live.length - preserveLast);
  const compactable = live.slice(0, cut).map(ref);
  return { throughSeq: compactable.at(-1)?.seq ?? 0, compactable, preserved: live.slice(cut).map(ref), preserveLast };
}

export interface RecordCompactionOptions extends CompactionOptions {
  summary: string;
  /** The plan's throughSeq the summary was written for; refused (CONFLICT) if the plan changed since. */
  throughSeq?: number;
}

export async function recordCompaction(session: SessionHandle, options: RecordCompactionOptions): Promise<EventBase> {
  if (typeof options.summary !== 'string' || options.summary.trim() === '') {
    throw new CkptError('INVALID_ARGUMENT', 'a compaction needs a non-blank summary');
  }
  return session.transaction(async (tx) => {
    const plan = planCompaction(await tx.read(), options);
    if (plan.throughSeq === 0) throw new CkptError('INVALID_ARGUMENT', 'nothing to compact: the live conversation is empty or all preserved');
    if (options.throughSeq !== undefined && options.throughSeq !== plan.throughSeq) {
      throw new CkptError('CONFLICT', `the conversation changed since the compaction was planned (through @${options.throughSeq}, now @${plan.throughSeq}); plan again`, {
        planned: options.throughSeq,
        now: plan.throughSeq,
      });
    }
    const [event] = await tx.append([
      { type: 'compaction', summary: options.summary, throughSeq: plan.throughSeq, compacted: plan.compactable.length, preserved: plan.preserved.length },
    ]);
    return event!;
  });
}

function ref(e: EventBase): EventRef {
  return typeof e.id === 'string' ? { seq: e.seq, type: e.type, id: e.id } : { seq: e.seq, type: e.type };
}
