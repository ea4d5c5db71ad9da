// Workspace scans (DESIGN §2 "Capture", §9 `ckpt scan`): record what shell commands and people
// changed since ckpt last looked. One walk + lstat per path; content is read only where the stat
// differs from the workspace's scan index. The changed paths become ONE capture (before-images,
// tool = the caller's, reason `scan`) followed by a settle (after-images) in one session transaction.
//
// "What ckpt last knew" of a path is, in order: an owner-index record (settle, restore, scan) newer
// than the scan index, else the scan index entry, else absent. The first scan of a workspace (no
// index yet) records nothing: it establishes the baseline — every file's content stored (packed,
// deduplicated, compressed), or, in a git work tree, a reference to git's blob for files whose stat
// matches git's index (copied into ckpt's store only when a later scan finds the file changed).
// A session's first scan when another session already built the index is a normal incremental scan:
// it records what changed since that index (and the owner records after it).
import type { SessionHandle } from '../session/session-handle.js';
import { KIND_SKIPPED, type ScanIndex } from './scan-index.js';
import { persistIndex } from './scan-persist.js';
import { afterCommit } from '../session/warnings.js';
import { recordChanges } from './scan-record.js';
import type { ScanOptions, ScanResult } from './scan-types.js';
import { scanChanged } from './scan-changed.js';
import { findChanges, withScanResources, type ScanResources } from './scan-find.js';

export { scanIndexKey } from './scan-persist.js';
export type { ScanChange, ScanChangeKind, ScanOptions, ScanResult } from './scan-types.js';

/** Said by a scan that found no baseline: whatever changed before it cannot be recorded or undone. */
export const BASELINE_WARNING =
  'this workspace had no scan baseline: this scan only recorded one, so changes made before it (e.g. by the last shell command) were not recorded';

export async function scan(session: SessionHandle, options: ScanOptions & { watchedOnly: true }): Promise<ScanResult | undefined>;
export async function scan(session: SessionHandle, options?: ScanOptions): Promise<ScanResult>;
export async function scan(session: SessionHandle, options: ScanOptions = {}): Promise<ScanResult | undefined> {
  const t0 = performance.now();
  if (!session.ctx.options.captureEnabled) {
    return { tag: null, files: [], scanned: 0, dirs: 0, hashed: 0, gitReferenced: 0, stored: 0, skipped: [], ms: 0, disabled: true };
  }
  const { backend } = session.ctx;
  // One scan of a workspace at a time: a second one then sees the first one's index and records.
  return backend.withLock(`${session.ctx.workspace.key}/scan`, async () => (await watchedScan(session, options, t0)) ?? (options.watchedOnly ? undefined : runScan(session, options, t0)), {
    timeoutMs: Math.max(session.ctx.options.lockTimeoutMs, 120_000),
  });
}

/** The watcher's paths only, when a watcher gave them and the result is sure to equal a full scan's. */
async function watchedScan(session: SessionHandle, options: ScanOptions, t0: number): Promise<ScanResult | undefined> {
  const touched = options.changedPaths ? await options.changedPaths() : undefined;
  return touched ? scanChanged(session, touched, options, t0) : undefined;
}

function runScan(session: SessionHandle, options: ScanOptions, t0: number): Promise<ScanResult> {
  return withScanResources((resources) => scanLocked(session, options, t0, resources));
}

async function scanLocked(session: SessionHandle, options: ScanOptions, t0: number, resources: ScanResources): Promise<ScanResult> {
  const found = await findChanges(session, options, t0, resources);
  if (!found) return { tag: null, files: [], scanned: 0, dirs: 0, hashed: 0, gitReferenced: 0, stored: 0, skipped: [], ms: Math.round(performance.now() - t0) };
  const { prev, phase, changes, unbaselinedChanged, readResult, gitReferenced, skipped, pack, objects } = found;
  const { next, work, walk } = phase;
  const baseline = prev === undefined;
  const { hashed, gitSeeds, dirtyBytes } = readResult;
  let { stored } = readResult;

  // ---- record: before-images, one capture + its settle ----
  const warnings = [...found.gitProblems()];
  const recorded = await recordChanges({ session, changes, gitObjects: objects, tool: options.tool ?? 'scan', pack, warnings, gitSeeds });
  stored += recorded.stored;
  const { tag, seq, files } = recorded;
  skipped.push(...recorded.lost);
  if (recorded.lost.length > 0) {
    warnings.push(`${recorded.lost.length} changed path(s) lost their previous content: it was only in git's object store and cannot be read there (recorded as skipped; a restore leaves them as they are)`);
  }

  // ---- persist the index (skipped when only a few paths were re-read: owner records carry them) ----
  // Once a capture is recorded the scan has happened: an index that cannot be written is a warning
  // (the next scan re-reads more). With nothing recorded (a baseline) the index is the result.
  const persist = () => persistIndex({
    session,
    next,
    prev,
    // A walk cut short before it listed the root applied no rule: the index keeps the rules it knew,
    // else the next scan took names the unapplied rules ignored for "there before, not recorded"
    // (a seed of the scan property test: a restore kept a file made after its tag).
    ruleTexts: walk.truncated && prev && walk.pending.includes('') ? prev.rules : walk.ruleTexts,
    workCount: work.length,
    seenPrev: phase.seenPrev,
    dirtyBytes,
    truncated: walk.truncated,
    unbaselinedChanged,
    skippedReRead: skippedReRead(next, work),
    always: options.rewriteIndex === 'always' || found.gitRewrite,
  });
  if (tag !== null) await afterCommit(warnings, 'scan index not updated', persist);
  else await persist();

  return {
    tag,
    ...(seq !== undefined ? { seq } : {}),
    files,
    ...(baseline ? { baseline: true as const } : {}),
    ...(baseline && !options.onlyBaseline ? { warning: BASELINE_WARNING } : {}),
    ...(found.corrupt ? { indexRebuilt: true as const } : {}),
    scanned: phase.scanned,
    dirs: walk.dirs,
    hashed,
    gitReferenced,
    stored,
    skipped,
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(walk.truncated ? { truncated: true as const, pending: walk.pending } : {}),
    ms: Math.round(performance.now() - t0),
  };
}

/**
 * True when a path the scan re-read is one ckpt cannot record (too large, unreadable). Owner records
 * never hold such a state, so the index must: else the next scan would take the path's older state
 * (or none: "created") as what ckpt knew, and a restore could delete what ckpt never recorded. That
 * holds for one skipped before and changed since too (a newcomer probe: a file over the size cap,
 * appended to once, was recorded as modified again by every later scan, and `status` always listed it).
 */
function skippedReRead(next: ScanIndex, work: readonly number[]): boolean {
  for (let w = 0; w < work.length; w++) if (next.kind[work[w] as number] === KIND_SKIPPED) return true;
  return false;
}
