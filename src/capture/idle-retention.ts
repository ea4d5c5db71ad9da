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
import { retains, retentionEventFromIndex } from '../session/retention.js';
import { SessionHandle } from '../session/session-handle.js';
import { assertSessionId } from '../session/session-id.js';

/** How often a workspace's sessions are looked at: hourly, or a 24th of a shorter age limit (at least a second). */
export const IDLE_PASS_EVERY_MS = 3_600_000;
const passEvery = (policy: RetentionPolicy): number => Math.min(IDLE_PASS_EVERY_MS, Math.max(1_000, (policy.olderThanMs ?? Infinity) / 24));
/** A session whose lock is not free within this is in use: left to its own turns. */
const BUSY_MS = 50;
/** What one pass may take (a hook process waits for it before it exits); the next turn goes on from there. */
export const IDLE_PASS_BUDGET_MS = 100;

const markerKey = (session: SessionHandle): string => `${session.ctx.workspace.key}/idle-retention.json`;

/** The marker: when the last pass began, and the session it stopped before when its budget ran out. */
interface Marker {
  at: number;
  from?: string;
}

/** The marker as stored; undefined when there is none or it cannot be trusted. */
async function readMarker(session: SessionHandle, now: number): Promise<Marker | undefined> {
  const raw = await session.ctx.backend.read(markerKey(session)).catch(() => undefined);
  if (!raw || raw.length > 512) return undefined;
  try {
    const { at, from } = JSON.parse(raw.toString('utf8')) as { at?: unknown; from?: unknown };
    // A time ahead of this clock (a forged or skewed marker) would hold every pass back: ignored.
    if (typeof at !== 'number' || !Number.isSafeInteger(at) || at > now + 60_000) return undefined;
    return { at, ...(typeof from === 'string' ? { from } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * Ids of the workspace's other sessions whose history `policy` retired just now. A pass goes through
 * the sessions in name order for `budgetMs` at most (one session at least); a pass cut short is
 * taken up at the next turn, from where it stopped, whatever the interval.
 */
export async function retireIdleSessions(session: SessionHandle, policy: RetentionPolicy | false, now = Date.now(), budgetMs = IDLE_PASS_BUDGET_MS): Promise<string[]> {
  if (!retains(policy) || session.ctx.workspace.foreign) return [];
  // A workspace of one session (the common case) has nothing to look at, and nothing is written.
  const ids = (await session.ctx.backend.children(`${session.ctx.workspace.key}/sessions`)).filter((id) => id !== session.id);
  if (ids.length === 0) return [];
  const marker = await readMarker(session, now);
  if (marker && marker.from === undefined && now - marker.at < passEvery(policy)) return [];
  const mark = (m: Marker) => session.ctx.backend.write(markerKey(session), Buffer.from(JSON.stringify(m)), { durable: false });
  // Marked first: another process starting a turn meanwhile need not do it again. Not durable: a
  // marker lost to a crash only makes the next turn look again.
  await mark({ at: now });
  const started = performance.now();
  const retired: string[] = [];
  let looked = 0;
  for (const id of marker?.from !== undefined ? ids.filter((i) => i >= marker.from!) : ids) {
    if (looked > 0 && performance.now() - started > budgetMs) {
      await mark({ at: now, from: id });
      break;
    }
    looked++;
    if (await retireOne(session, id, policy, now)) retired.push(id);
  }
  return retired;
}

/** Applies `policy` to session `id` unless it is in use; whether it appended a `prune` event. */
async function retireOne(session: SessionHandle, id: string, policy: RetentionPolicy, now: number): Promise<boolean> {
  try {
    assertSessionId(id);
    const other = new SessionHandle(session.ctx, id);
    if ((await other.log.lastSeq()) === 0) return false; // not a session (yet): nothing to retire, no lock to make
    const appended = await other.transaction(async (tx) => {
      const hot = await loadHotState(other, tx);
      // A restore left unfinished (a crash) is finished when that session is next opened: not here.
      if (hot.openPlans.size > 0 || hot.unclosedRestores.size > 0) return [];
      const prune = retentionEventFromIndex(hot.retention, policy, now);
      return prune ? appendWithHotState(other, tx, [prune]) : [];
    }, { lockTimeoutMs: BUSY_MS });
    return appended.length > 0;
  } catch (err) {
    // In use (LOCKED), removed meanwhile, or a log that does not read: left as it is, as its own
    // turn would find it. Nothing here is the turn's failure.
    if (!isCkptError(err)) throw err;
    return false;
  }
}
