// Recovery of interrupted restores (DESIGN §4), run when a session is opened and before any restore:
// - `restore_started` without `restore_committed`: the point of no return was passed, so the restore
//   is finished from its journaled plan (placed again from the store — idempotent) and committed —
//   once its recovery capture is found to cover the plan, and leaving a path written since the crash
//   (recovery-check.ts);
// - a recovery capture carrying a `restoreId` with neither `restore_started` nor `restore_aborted`:
//   the process died before its point of no return; `restore_aborted` is appended (and what older
//   versions staged before that point is removed: their staging files and the folders they made).
//   The workspace is then exactly as before that restore.
import type { CaptureEvent, EventBase, FileImage, RestoreStartedEvent } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import type { RecoveredRestore } from '../context.js';
import { restoreTargetOf } from '../format/restore-reason.js';
import { loadPlans, planOf, resultFields } from '../session/restore-plans.js';
import { loadHotState, rememberedHotState } from '../session/hot-snapshot.js';
import type { EventLogTx } from '../storage/event-log.js';
import { recordRestored } from './apply-restore.js';
import { placeEntries } from './place.js';
import type { PlannedEntry } from './plan-restore.js';
import { storeContent } from './plan-content.js';
import { removeEmptyFolders, removeStaged } from './stage.js';
import { CHANGED_DURING_RESTORE } from './place-guard.js';
import { changedSinceInterrupted, recoveryImagesOf } from './recovery-check.js';

export interface RecoveryReport {
  /** Ids of restores finished from their plan. */
  finished: string[];
  /** Ids of restores abandoned before their point of no return. */
  aborted: string[];
  /** Each of them, in words a user is told (CkptOptions.onRecovered). */
  restores: RecoveredRestore[];
}

interface Pending {
  open: RestoreStartedEvent[];
  abandoned: CaptureEvent[];
}

/** Pure: the restores of a log that need recovery. */
export function pendingRecovery(events: readonly EventBase[]): Pending {
  const started = new Map<string, RestoreStartedEvent>();
  const closed = new Set<string>();
  const captures: CaptureEvent[] = [];
  for (const e of events) {
    if (e.type === 'restore_started') started.set(String(e.id), e as RestoreStartedEvent);
    else if (e.type === 'restore_committed' || e.type === 'restore_aborted') closed.add(String(e.id));
    else if (e.type === 'capture' && typeof e.restoreId === 'string') captures.push(e as CaptureEvent);
  }
  return {
    open: [...started.values()].filter((s) => !closed.has(String(s.id))),
    abandoned: captures.filter((c) => !started.has(String(c.restoreId)) && !closed.has(String(c.restoreId))),
  };
}

function isEmpty(p: Pending): boolean {
  return p.open.length === 0 && p.abandoned.length === 0;
}

/**
 * Finishes or abandons interrupted restores of `session` under its lock; returns the session. Cheap
 * when there is nothing to do (one log read, no lock; none at all when `logBytes`, the log's size
 * as the caller just saw it, is where this process last read it).
 */
export async function recoverSession<S extends SessionHandle>(session: S, options: { logBytes?: number } = {}): Promise<S> {
  // Another machine's restore is finished by that machine: its folder is not here.
  if (session.ctx.workspace.foreign) return session;
  // The hot state says whether any restore is unclosed without decoding the whole log.
  const known = options.logBytes === undefined ? undefined : rememberedHotState(session, options.logBytes);
  if ((known ?? (await loadHotState(session))).unclosedRestores.size === 0) return session;
  if (isEmpty(pendingRecovery(await session.events()))) return session;
  const report = await session.transaction((tx) => recoverInTx(session, tx));
  if (report.restores.length > 0) session.ctx.options.onRecovered?.(session.id, report.restores);
  return session;
}

/** The same, inside a transaction the caller holds (the log is re-read under the lock). */
export async function recoverInTx(session: SessionHandle, tx: EventLogTx): Promise<RecoveryReport> {
  const events = await tx.read();
  const pending = pendingRecovery(events);
  // Without the lock (a dry run on a store not writable here) an interrupted restore cannot be
  // finished, and a plan made before it is finished would be wrong: it fails as the real run's would.
  if (tx.lockFree && (pending.abandoned.length > 0 || pending.open.length > 0)) await tx.append([]);
  // The journal of an open restore may be in a blob: read and checked (LOG_CORRUPT if bad) before anything is done from it.
  await loadPlans(session.ctx.blobs, pending.open);
  const report: RecoveryReport = { finished: [], aborted: [], restores: [] };
  for (const capture of pending.abandoned) {
    await abandon(session, tx, capture);
    report.aborted.push(String(capture.restoreId));
    report.restores.push({ id: String(capture.restoreId), to: restoreTargetOf(capture.reason) ?? '?', outcome: 'aborted' });
  }
  // Every open restore's journal is checked before anything is done from any of them.
  const recovered = new Map<string, Map<string, FileImage>>();
  for (const started of pending.open) recovered.set(started.id, await recoveryImagesOf(events, started, planOf(started) as PlannedEntry[], session.ctx.blobs));
  for (const started of pending.open) {
    const left = await finish(session, tx, started, recovered.get(started.id)!);
    report.finished.push(started.id);
    report.restores.push({ id: started.id, to: String(started.to), outcome: 'finished', ...(typeof started.recovery === 'string' ? { undo: started.recovery } : {}), left });
  }
  return report;
}

async function abandon(session: SessionHandle, tx: EventLogTx, capture: CaptureEvent): Promise<void> {
  const root = session.workspaceRoot;
  const id = String(capture.restoreId);
  await removeStaged(root, capture.files.map((f) => f.path), id);
  const stageDirs = Array.isArray(capture.stageDirs) ? (capture.stageDirs as unknown[]).filter((d): d is string => typeof d === 'string') : [];
  await removeEmptyFolders(root, stageDirs);
  await tx.append([{ type: 'restore_aborted', id, reason: 'interrupted before restore_started' }]);
}

/** Finishes `started`; answers the paths left as they are (written since it was interrupted). */
async function finish(session: SessionHandle, tx: EventLogTx, started: RestoreStartedEvent, recovered: ReadonlyMap<string, FileImage>): Promise<string[]> {
  const root = session.workspaceRoot;
  const planned = planOf(started) as PlannedEntry[];
  // Leftovers of the interrupted run are written again from the store: their content may be partial.
  await removeStaged(root, planned.map((e) => e.path), started.id);
  const changed = await changedSinceInterrupted(root, planned, recovered, session.ctx.options.maxBlobBytes);
  const entries = planned.filter((e) => !changed.has(e.path));
  const placed = await placeEntries(root, started.id, entries, storeContent(session.ctx.blobs, entries));
  const left = planned.filter((e) => changed.has(e.path)).map((e) => ({ path: e.path, why: CHANGED_DURING_RESTORE }));
  const result = {
    to: started.to,
    restored: placed.restored,
    deleted: placed.deleted,
    skipped: [...left, ...placed.skipped],
    drift: [],
    undo: started.recovery,
    id: started.id,
    recovered: true,
  };
  await tx.append([{ type: 'restore_committed', id: started.id, result: await resultFields(session.ctx.blobs, result) }]);
  // The paths left are as the recovery capture read them, for ckpt (so the next look takes what is
  // there for the user's change). Not the placing's own skips: a delete beneath a folder already
  // replaced by a file is one (what it removes is gone), and the crash-kill test holds them.
  const leftImages = left.map((l) => recovered.get(l.path)!);
  if (leftImages.length > 0 && typeof started.recovery === 'string') await tx.append([{ type: 'settle', tag: started.recovery, files: leftImages }]);
  await recordRestored(session, entries, placed);
  return left.map((l) => l.path);
}
