// A restore's look (DESIGN §10 "A restore looks first"): what changed outside the agent since ckpt
// last looked — the user's hand edits after the agent's last record, a shell nobody scanned — found
// as a scan finds it but not recorded. The restore plans with it as the latest capture (so `restore
// N` puts those paths back too, and they are drift: the user's own work is never overwritten without
// `--force`) and records it in its own transaction only when it goes ahead; a dry run or a refused
// restore records nothing. The workspace's scan lock is held throughout, so no scan records the same
// change meanwhile, nor takes the restore's writes for hand edits.
import { changedAt, CLOCK_SLACK_MS, foldersChangedAt } from '../workspace/changed-at.js';
import type { FileImage } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import { hasBaseline } from './baseline.js';
import { findChanges, withScanResources, type ScanResources } from './scan-find.js';
import { lockUnlessReadOnly } from '../storage/lock-unless-read-only.js';
import { resolveChanges } from './scan-record.js';
import { loadIndexCached } from './scan-persist.js';
import { catchUpOwners } from '../capture/owner-index.js';
import type { Change } from './scan-compare.js';

export interface OutsideLook {
  /** What ckpt last knew of each changed path (before-images whose content is in the store, else `skipped`). */
  before: FileImage[];
  /** What each holds now, as the look read it (hashes: the owner records of paths a restore leaves). */
  after: FileImage[];
  /** When ckpt learned what `before` says (the owner record's time, else the scan index's), by path. */
  knownAt: ReadonlyMap<string, number>;
  /** Makes the before-images' content durable; called before the look is recorded. */
  commit(): Promise<void>;
}

/**
 * Runs `fn` under the workspace's scan lock with a function that finds the look (undefined when there
 * is nothing to look against: no scan baseline, capture switched off, or nothing changed). `readOnly`
 * (`fn` records nothing): without the lock where it cannot be made because the store is not writable.
 */
export async function withOutsideLook<T>(
  session: SessionHandle,
  fn: (look: (sinceMs: number | undefined) => Promise<OutsideLook | undefined>) => Promise<T>,
  options: { readOnly?: boolean } = {},
): Promise<T> {
  const { ctx } = session;
  if (!ctx.options.captureEnabled || !(await hasBaseline(session))) return fn(async () => undefined);
  const look = () => withScanResources((resources) => fn(lookWith(session, resources)));
  const locked = (enter?: () => void) =>
    ctx.backend.withLock(
      `${ctx.workspace.key}/scan`,
      () => {
        enter?.();
        return look();
      },
      { timeoutMs: Math.max(ctx.options.lockTimeoutMs, 120_000) },
    );
  // A dry run records nothing: where the scan lock cannot be made (the store is not writable here) it
  // looks without it — no scan can run through this process meanwhile, and the look is not kept.
  return options.readOnly ? lockUnlessReadOnly(locked, look) : locked();
}

/** The look of a restore planned from `sinceMs` (scan/scan-find.ts's resources of the caller's scan). */
function lookWith(session: SessionHandle, resources: ScanResources): (sinceMs: number | undefined) => Promise<OutsideLook | undefined> {
  const { ctx } = session;
  return async (sinceMs) => {
    if (sinceMs === undefined) return undefined;
    // Owner records a killed daemon never wrote are in the logs' settles: taken first, as an
    // in-process scan after a dead daemon does, else the look would take older states for the last known.
    const indexMs = (await loadIndexCached(session, 'bytes')).index?.timeMs;
    // Best effort, as for a scan: an owner index that cannot be written must not fail the restore.
    if (indexMs !== undefined) await catchUpOwners(ctx, indexMs).catch(() => {});
    const found = await findChanges(session, {}, performance.now(), resources);
    if (!found || found.prev === undefined) return undefined;
    const changes = changedSince(session.workspaceRoot, found.changes, sinceMs - CLOCK_SLACK_MS);
    if (changes.length === 0) return undefined;
    const resolved = await resolveChanges({ session, changes, gitObjects: found.objects, pack: found.pack, gitSeeds: found.readResult.gitSeeds });
    // Content copied from git now is in the scan's pack (durable on commit); the rest must be in the store already.
    const before: FileImage[] = [];
    for (const [i, image] of resolved.before.entries()) before.push(changes[i]!.before.gitOid !== undefined ? image : await restorable(session, image));
    const knownAt = new Map<string, number>();
    for (const c of changes) knownAt.set(c.after.path, found.ownerTimes.get(c.after.path) ?? found.prev.timeMs);
    // The owner records of what a restore leaves name the content read now: stored on commit with the rest.
    const commit = async () => {
      await found.pack.commit();
      await found.pack.loose.spill(() => true);
    };
    return { before, after: resolved.after, knownAt, commit };
  };
}

/**
 * The changes made after `fromMs`: a path whose inode is older held the same then (ctime cannot be set
 * back). A deleted path left no inode to ask: its nearest remaining folder's is (a removal changes it).
 * What a folder made since holds is new with it, whatever its own inodes say (a folder moved in by
 * hand keeps its files' times); so is what a folder changed since holds (a folder replaced by another
 * by hand, `rm -rf A; mv B A`, is a folder before and after, and A/f's inode is B/f's, older): the
 * root left out, as any top-level entry changes it. File times come from a coarse clock (a few ms
 * behind Date.now()).
 */
export function changedSince(root: string, changes: readonly Change[], fromMs: number): Change[] {
  const newFolders = new Set<string>();
  const out: Change[] = [];
  // Shallowest first, so a folder is judged before what it holds.
  for (const c of [...changes].sort((a, b) => depth(a.after.path) - depth(b.after.path))) {
    const path = c.after.path;
    if (!ancestors(path).some((d) => newFolders.has(d)) && changedAt(root, path) < fromMs && foldersChangedAt(root, path) < fromMs) continue;
    out.push(c);
    if (c.change === 'created' && c.after.state === 'dir') newFolders.add(path);
  }
  return out;
}

function depth(path: string): number {
  return path.split('/').length;
}

/** The folders above `path`, nearest first ('' is the root). */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) out.push(path.slice(0, i));
  return out;
}

/** A before-image whose content is not in the store (collected, or never stored) cannot be put back: skipped. */
export async function restorable(session: SessionHandle, image: FileImage): Promise<FileImage> {
  if (image.state !== 'file' || (typeof image.blob === 'string' && (await session.ctx.blobs.has(image.blob)))) return image;
  return { path: image.path, state: 'skipped', why: 'content-not-in-store', ...(image.bytes !== undefined ? { bytes: image.bytes } : {}) };
}
