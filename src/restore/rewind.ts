// Rewind (DESIGN §2 "Rewind"): restore to a tag and move the conversation back. A `rewind` event
// {to, toSeq, watermark} supersedes the events after the tag — they are never deleted — and the
// watermark (the message count recorded by the turn at or before the tag) lets the agent truncate
// its own transcript. `fork` leaves this session as it is: a fork is made at the tag and the restore
// is recorded there. `liveEvents` replays which agent events are still live after rewinds.
import type { EventBase, TurnEvent } from '../format/event.js';
import { hiddenByRewind, type EventRef } from '../conversation/index.js';
import { resolveTagSeq } from '../session/positions.js';
import type { SessionHandle } from '../session/session-handle.js';
import { forkPointRecord } from './fork-record.js';
import { createSessionStore } from '../session/session-store.js';
import { withWarnings } from '../session/warnings.js';
import { driftError, type RestoreResult } from './apply-restore.js';
import { recoverInTx } from './recover.js';
import { lookSince, planAgainstWorkspace, restoreInTx, type CheckPlan } from './restore.js';
import { withOutsideLook } from '../scan/look-outside.js';

export interface Watermark {
  /** The turn at or before the tag (0: before the first turn). */
  turn: number;
  /** Messages in the agent's transcript when that turn began; null when the turn did not record it. */
  messageCount: number | null;
}

export interface RewindOptions {
  fork?: boolean;
  force?: boolean;
  dryRun?: boolean;
  /** As RestoreOptions.checkPlan; with `fork`, `lastSeq` is this session's (the one planned from). */
  checkPlan?: CheckPlan;
}

export interface RewindResult extends RestoreResult {
  watermark: Watermark;
  /** The session the restore was recorded in (the fork's id with `fork`). */
  session: string;
  forked?: true;
  /** The user's message of the turn rewound to, so an agent can put it back into its input box. */
  userMessage: { turn: number; text: string | null; id?: string } | null;
  /** Conversation entries the rewind hides (with a dry run: would hide); never deleted from the log. */
  hidden: EventRef[];
}

/** What a rewind to `toSeq` does to the conversation: the user message to hand back, the entries it hides. */
function conversationAt(events: readonly EventBase[], toSeq: number): Pick<RewindResult, 'userMessage' | 'hidden'> {
  let turn: TurnEvent | undefined;
  for (const e of events) {
    if (e.seq > toSeq) break;
    if (e.type === 'turn') turn = e as TurnEvent;
  }
  const userMessage = turn
    ? { turn: turn.turn, text: typeof turn.text === 'string' ? turn.text : null, ...(typeof turn.messageId === 'string' ? { id: turn.messageId } : {}) }
    : null;
  const hidden = hiddenByRewind(events, toSeq).map((e) => (typeof e.id === 'string' ? { seq: e.seq, type: e.type, id: e.id } : { seq: e.seq, type: e.type }));
  return { userMessage, hidden };
}

/** The watermark of position `toSeq`: the last `turn` event at or before it. */
export function watermarkAt(events: readonly EventBase[], toSeq: number): Watermark {
  let turn: TurnEvent | undefined;
  for (const e of events) {
    if (e.seq > toSeq) break;
    if (e.type === 'turn') turn = e as TurnEvent;
  }
  return { turn: turn?.turn ?? 0, messageCount: typeof turn?.messageCount === 'number' ? turn.messageCount : null };
}

export async function rewind(session: SessionHandle, tag: string, options: RewindOptions = {}): Promise<RewindResult> {
  if (options.fork) return rewindFork(session, tag, options);
  const warnings: string[] = [];
  const result = await withOutsideLook(session, (findLook) => session.transaction(async (tx) => {
    await recoverInTx(session, tx);
    const events = await tx.read();
    const toSeq = resolveTagSeq(events, tag);
    const watermark = watermarkAt(events, toSeq);
    const look = await findLook(lookSince(events, tag));
    const result = await restoreInTx(session, tx, { tag, events, force: options.force, dryRun: options.dryRun, checkPlan: options.checkPlan, reason: `rewind to ${tag}`, warnings, look });
    if (!options.dryRun) await tx.append([{ type: 'rewind', to: tag, toSeq, watermark }]);
    return { ...result, watermark, session: session.id, ...conversationAt(events, toSeq) };
  }, { warnings, readOnly: options.dryRun }), { readOnly: options.dryRun });
  return withWarnings(result, warnings);
}

/**
 * Fork at the tag; the restore is planned from this session's history and recorded in the fork. It
 * looks first as a rewind does (the look is recorded in the fork, before its recovery capture).
 */
async function rewindFork(session: SessionHandle, tag: string, options: RewindOptions): Promise<RewindResult> {
  return withOutsideLook(session, async (findLook) => {
    const events = await session.transaction(async (tx) => {
      await recoverInTx(session, tx);
      return tx.read();
    }, { readOnly: options.dryRun });
    const lastSeq = events.at(-1)?.seq ?? 0;
    const toSeq = resolveTagSeq(events, tag);
    const watermark = watermarkAt(events, toSeq);
    const look = await findLook(lookSince(events, tag));
    if (options.dryRun) {
      const result = await session.transaction((tx) => restoreInTx(session, tx, { tag, events, force: options.force, dryRun: true, checkPlan: options.checkPlan, reason: '', look }), { readOnly: true });
      return { ...result, watermark, session: session.id, ...conversationAt(events, toSeq) };
    }
    // Refuse before creating anything: a drift refusal (or a failed check) must leave no stray fork behind.
    const { plan, present } = await planAgainstWorkspace(session, events, tag, undefined, session.id, undefined, look);
    await options.checkPlan?.({ plan, present, lastSeq });
    if (plan.drift.length > 0 && !options.force) throw driftError(tag, plan.drift);
    // What the workspace holds beyond the fork point is recorded with the fork, so the restore's
    // recovery capture is not the earliest record after the point (a later `restore T` in the fork is
    // exact). The parent's history only: the rewind itself is planned from it.
    const atSeq = Math.max(1, toSeq);
    const record = () => forkPointRecord({ parent: session, parentEvents: events, atSeq, others: [] });
    const fork = await createSessionStore(session.ctx).fork(session.id, { atSeq, record });
    const warnings: string[] = [];
    const result = await fork.transaction(
      (tx) => restoreInTx(fork, tx, { tag, events, owner: session.id, force: options.force, checkPlan: options.checkPlan, lastSeq, reason: `rewind to ${tag} (fork of ${session.id})`, warnings, look }),
      { warnings },
    );
    return withWarnings({ ...result, watermark, session: fork.id, forked: true as const, ...conversationAt(events, toSeq) }, warnings);
  }, { readOnly: options.dryRun });
}
