// Retention of sessions left behind (DESIGN §10 "Sessions left behind retire"). Automatic retention
// runs when a session's own turn starts, so a session ended by `/clear`, a new conversation or a
// crash kept everything, whatever the policy's age said. A turn's start of any session of the
// workspace applies the policy to the others too: after the answer (the store's after-call queue, a
// daemon's idle queue), at most once an hour per workspace (a marker file; sooner for an age limit
// under a day), and never waiting for a session in use (its lock held: its own turns retire its
// history). What it appends is what that session's next turn would have appended: the same `prune`
// event (`auto`), which keeps the session's last turn whatever its age.
import type { RetentionPolicy } from '../context.js';
import { isCkptError } from '../errors.js';
import { appendWithHotState, loadHotState } from '../session/hot-snapshot.js';
import { retentionEventFromIndex } from '../session/retention.js';
import { SessionHandle } from '../session/session-handle.js';
import { assertSessionId } from '../session/session-id.js';

/** How often a workspace's sessions are looked at: hourly, or a 24th of a shorter age limit (at least a second). */
export const IDLE_PASS_EVERY_MS = 3_600_000;
const passEvery = (policy: RetentionPolicy): number => Math.min(IDLE_PASS_EVERY_MS, Math.max(1_000, (policy.olderThanMs ?? Infinity) / 24));
/** A session whose lock is not free within this is in use: left to its own turns. */
const BUSY_MS = 50;

const markerKey = (session: SessionHandle): string => `${session.ctx.workspace.key}/idle-retention.json`;

/** When the last pass ran (ms), from the marker; undefined when there is none or it cannot be trusted. */
async function lastPass(session: SessionHandle, now: number): Promise<number | undefined> {
  const raw = await session.ctx.backend.read(markerKey(session)).catch(() => undefined);
  if (!raw || raw.length > 256) return undefined;
  try {
    const at = (JSON.parse(raw.toString('utf8')) as { at?: unknown }).at;
    // A time ahead of this clock (a forged or skewed marker) would hold every pass back: ignored.
    return typeof at === 'number' && Number.isSafeInteger(at) && at <= now + 60_000 ? at : undefined;
  } catch {
    return undefined;
  }
}

/** Ids of the workspace's other sessions whose history `policy` retired just now. */
export async function retireIdleSessions(session: SessionHandle, policy: RetentionPolicy | false, now = Date.now()): Promise<string[]> {
  if (!policy || session.ctx.workspace.foreign || (policy.keepTurns === undefined && policy.olderThanMs === undefined && policy.keepCheckpoints === undefined)) return [];
  const last = await lastPass(session, now);
  if (last !== undefined && now - last < passEvery(policy)) return [];
  // Marked first: another process starting a turn meanwhile need not do it again. Not durable: a
  // marker lost to a crash only makes the next turn look again.
  await session.ctx.backend.write(markerKey(session), Buffer.from(JSON.stringify({ at: now })), { durable: false });
  const retired: string[] = [];
  for (const id of await session.ctx.backend.children(`${session.ctx.workspace.key}/sessions`)) {
    if (id === session.id) continue;
    try {
      assertSessionId(id);
      const other = new SessionHandle(session.ctx, id);
      if ((await other.log.lastSeq()) === 0) continue; // not a session (yet): nothing to retire, no lock to make
      const appended = await other.transaction(async (tx) => {
        const hot = await loadHotState(other, tx);
        // A restore left unfinished (a crash) is finished when that session is next opened: not here.
        if (hot.openPlans.size > 0 || hot.unclosedRestores.size > 0) return [];
        const prune = retentionEventFromIndex(hot.retention, policy, now);
        return prune ? appendWithHotState(other, tx, [prune]) : [];
      }, { lockTimeoutMs: BUSY_MS });
      if (appended.length > 0) retired.push(id);
    } catch (err) {
      // In use (LOCKED), removed meanwhile, or a log that does not read: left as it is, as its own
      // turn would find it. Nothing here is the turn's failure.
      if (!isCkptError(err)) throw err;
    }
  }
  return retired;
}
