// Turns (DESIGN §2): a `turn` event marks the moment the user sent a message; its number names the
// tag `N`. Numbers only grow, even after a rewind, so every tag stays unique in its session.
import { CkptError } from '../errors.js';
import type { SessionHandle } from '../session/session-handle.js';
import { appendWithHotState, loadHotState } from '../session/hot-snapshot.js';
import { resolveRetention, retains, retentionEventFromIndex } from '../session/retention.js';
import { afterAnswerIdle } from '../session/after-call.js';
import { withWarnings } from '../session/warnings.js';
import { retireIdleSessions } from './idle-retention.js';

export interface TurnOptions {
  /** Messages in the agent's transcript when the turn began: the watermark a rewind returns. */
  messageCount?: number;
  text?: string;
  /** The id of the user's message that starts the turn (ties the turn to the agent's transcript). */
  messageId?: string;
  /** A scan recorded what changed outside the agent just before (see TurnEvent.looked). */
  looked?: true;
}

export async function startTurn(session: SessionHandle, options: TurnOptions = {}): Promise<{ turn: number; tag: string; seq: number; warnings?: string[] }> {
  const { messageCount, text, messageId, looked } = options;
  if (messageId !== undefined && (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > 256)) {
    throw new CkptError('INVALID_ARGUMENT', 'a message id must be a string of 1 to 256 characters');
  }
  if (messageCount !== undefined && (!Number.isSafeInteger(messageCount) || messageCount < 0)) {
    throw new CkptError('INVALID_ARGUMENT', `message count must be a non-negative integer, got ${messageCount}`, { messageCount });
  }
  const retention = resolveRetention(session.ctx.options.retention);
  const warnings: string[] = [];
  const result = await session.transaction(async (tx) => {
    // From the hot state (the log's tail since this process's last read, or since the snapshot), not
    // the whole log: a turn costs the same at the 100,000th event as at the 100th (issue 28).
    const hot = await loadHotState(session, tx);
    const turn = hot.maxTurn + 1; // one past the highest ever used, so tags stay unique even after a rewind
    const [stored] = await appendWithHotState(session, tx, [
      { type: 'turn', turn, ...(messageCount !== undefined ? { messageCount } : {}), ...(text !== undefined ? { text } : {}), ...(messageId !== undefined ? { messageId } : {}), ...(looked ? { looked } : {}) },
    ]);
    // Automatic retention (session/retention.ts) from the retention index the hot state keeps, with this turn.
    const pruneEvent = retentionEventFromIndex((await loadHotState(session, tx)).retention, retention);
    if (pruneEvent) await appendWithHotState(session, tx, [pruneEvent]);
    return { turn, tag: String(turn), seq: stored!.seq };
  }, { warnings });
  // The workspace's sessions left behind retire by the same policy, after the answer (idle-retention.ts).
  if (retains(retention)) afterAnswerIdle(session.ctx, async () => void (await retireIdleSessions(session, retention)));
  return withWarnings(result, warnings);
}
