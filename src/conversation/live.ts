// The live conversation (issue 15; zero's replay, oino's message-tied checkpoints): the conversation
// events of a session as the agent should see them now. The log is never rewritten: a `rewind`
// {toSeq} makes the conversation what it was at toSeq again, and a `compaction` {throughSeq} shows its
// summary in place of the live entries up to (in list order) the entry with seq throughSeq. Pure: events in, entries out.
import { CHECKPOINT_EVENT_TYPES, type EventBase } from '../format/event.js';
import { resolveTagSeq } from '../session/positions.js';

/** A conversation event (not one of ckpt's own types). */
export function isConversationEvent(e: EventBase): boolean {
  return !CHECKPOINT_EVENT_TYPES.has(e.type);
}

/**
 * The live conversation after the events given, in order: conversation events, and `compaction`
 * events standing for the entries they summarise. With `throughSeq`, as it was at that position.
 */
export function liveConversation(events: readonly EventBase[], throughSeq = Infinity): EventBase[] {
  let live: EventBase[] = [];
  for (const e of events) {
    if (e.seq > throughSeq) break;
    if (isConversationEvent(e)) {
      live.push(e);
    } else if (e.type === 'rewind') {
      const toSeq = rewindTarget(events, e);
      // The conversation as it was at toSeq (earlier rewinds and compactions included).
      if (toSeq !== undefined) live = liveConversation(events, toSeq);
    } else if (e.type === 'compaction') {
      // throughSeq names the last live entry summarised. Entries are not in seq order once a summary
      // stands first, so the cut is by place in the list, not by seq; a summary of nothing live is ignored.
      const cut = live.findIndex((x) => x.seq === e.throughSeq);
      if (cut >= 0) live = [e, ...live.slice(cut + 1)];
    }
  }
  return live;
}

/** The entries a rewind to `toSeq` would hide from the live conversation. */
export function hiddenByRewind(events: readonly EventBase[], toSeq: number): EventBase[] {
  const kept = new Set(liveConversation(events, toSeq).map((e) => e.seq));
  return liveConversation(events).filter((e) => !kept.has(e.seq));
}

/** Where a logged rewind went back to (old logs carry only the tag). */
function rewindTarget(events: readonly EventBase[], rewind: EventBase): number | undefined {
  if (Number.isSafeInteger(rewind.toSeq)) return rewind.toSeq as number;
  if (typeof rewind.to !== 'string') return undefined;
  try {
    return resolveTagSeq(events.filter((x) => x.seq < rewind.seq), rewind.to);
  } catch {
    return undefined; // an unresolvable old rewind changes nothing rather than everything
  }
}

export interface MessageTag {
  /** The conversation event's own id (its `id` field). */
  id: string;
  seq: number;
  type: string;
  /** Restoring to this tag puts the workspace back to just before the event (`@seq-1`). */
  before: string;
  /** …and to just after it. */
  after: string;
  /** The turn the event belongs to. */
  turn: number;
}

/** Every live conversation event that carries an `id`, with the tags around it (oino's message → checkpoint). */
export function messageTags(events: readonly EventBase[]): MessageTag[] {
  const turnAt = new Map<number, number>();
  let turn = 0;
  for (const e of events) {
    if (e.type === 'turn' && typeof e.turn === 'number') turn = e.turn;
    turnAt.set(e.seq, turn);
  }
  return liveConversation(events)
    .filter((e) => typeof e.id === 'string' && e.type !== 'compaction')
    .map((e) => ({ id: e.id as string, seq: e.seq, type: e.type, before: `@${e.seq - 1}`, after: `@${e.seq}`, turn: turnAt.get(e.seq) ?? 0 }));
}
