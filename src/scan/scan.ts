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
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { FileImage } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import { loadGitIndex, type GitIndex } from '../workspace/git-index.js';
import { openGitObjects, type GitObjects } from '../workspace/git-objects.js';
import { findGitDirs } from '../workspace/git-repo.js';
import { createIgnoreRules } from '../workspace/ignore-rules.js';
import { createListPool, type ListPool } from '../workspace/list-dir.js';
import { readAndStore, type StoreContentResult } from './store-content.js';
import { newerOwnerImages } from './known.js';
import { KIND_SKIPPED, type ScanIndex } from './scan-index.js';
import { contentPass } from './content-pass.js';
import { compareWithKnown } from './scan-compare.js';
import { loadIndexCached, persistIndex, sameMap } from './scan-persist.js';
import { previousIgnoreRules } from './previous-rules.js';
import { afterCommit } from '../session/warnings.js';
import { recordChanges } from './scan-record.js';
import type { ScanOptions, ScanResult } from './scan-types.js';
import { walkPhase } from './scan-walk.js';
import { scanChanged } from './scan-changed.js';
import { createScanPack, type ScanPack } from './scan-pack.js';

export { scanIndexKey } from './scan-persist.js';
export type { ScanChange, ScanChangeKind, ScanOptions, ScanResult } from './scan-types.js';

/** Said by a scan that found no baseline: whatever changed before it cannot be recorded or undone. */
export const BASELINE_WARNING =
  'this workspace had no scan baseline: this scan only recorded one, so changes made before it (e.g. by the last shell command) were not recorded';

/** Entries changed this close before the previous scan started are not trusted (racily clean). */
const RACY_MS = 2_000;
/** The tree size from which a worker thread lists and stats some of the folders. */
const PARALLEL_MIN_ENTRIES = 40_000;
/** From this many files to read, a worker thread reads them. */
const READ_IN_WORKER_MIN = 1000;

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

interface Resources {
  pool?: ListPool;
  pack?: ScanPack;
}

async function runScan(session: SessionHandle, options: ScanOptions, t0: number): Promise<ScanResult> {
  const resources: Resources = {};
  try {
    return await scanLocked(session, options, t0, resources);
  } finally {
    resources.pool?.close(); // idempotent: normally closed once the files are read
    await resources.pack?.abort(); // a no-op once committed (before the capture)
  }
}

async function scanLocked(session: SessionHandle, options: ScanOptions, t0: number, resources: Resources): Promise<ScanResult> {
  const { ctx } = session;
  const root = ctx.workspace.root;
  const maxBytes = ctx.options.maxBlobBytes;
  const startMs = Date.now();
  const loaded = await loadIndexCached(session, 'bytes');
  const prev = loaded.index;
  const baseline = prev === undefined;
  if (options.onlyBaseline && !baseline) {
    return { tag: null, files: [], scanned: 0, dirs: 0, hashed: 0, gitReferenced: 0, stored: 0, skipped: [], ms: Math.round(performance.now() - t0) };
  }
  const owners = prev ? await newerOwnerImages(session, prev.timeMs) : new Map<string, FileImage>();
  const rules = createIgnoreRules({ root, storeDir: ctx.dir, extra: options.ignore });
  const useGit = options.git !== false;
  let gitIndex: GitIndex | undefined;
  let gitLoaded = false;
  const git = (): GitIndex | undefined => {
    if (!gitLoaded) {
      gitLoaded = true;
      gitIndex = useGit ? loadGitIndex(root) : undefined;
    }
    return gitIndex;
  };
  // Git's object store (with its alternates), opened once per scan: a git blob is referenced only when
  // it is really there, and changed files' before-content is read from it (one pack cache per scan).
  const opened: { objects?: GitObjects | undefined } = {};
  const objects = (): GitObjects | undefined => {
    if (!('objects' in opened)) {
      const dir = gitIndex?.objectsGitdir ?? findGitDirs(root)?.commondir;
      opened.objects = dir !== undefined ? openGitObjects(dir) : undefined;
    }
    return opened.objects;
  };

  // A baseline references git's blobs for files matching git's index: matched during the walk.
  const baselineGit = baseline ? git() : undefined;

  // ---- walk + lstat ----
  // A worker thread lists folders (and reads files) on large trees: from the start when the previous
  // index (or, for a baseline, git's index) says the tree is large, else once the walk has seen that
  // many entries.
  const sizeHint = prev?.count ?? baselineGit?.table.count ?? 0;
  const parallelAfter = options.threads === 0 ? Infinity : options.threads !== undefined || sizeHint >= PARALLEL_MIN_ENTRIES ? 0 : PARALLEL_MIN_ENTRIES;
  const makePool = (): ListPool | undefined => (resources.pool ??= createListPool());
  const phase = await walkPhase({
    root,
    rules,
    prev,
    owners,
    startMs,
    racyBefore: prev ? prev.timeMs - (options.racyMs ?? RACY_MS) : 0,
    deadline: options.budgetMs !== undefined ? t0 + options.budgetMs : undefined,
    parallelAfter,
    makePool,
    resources,
    git: baselineGit,
    gitObjects: baselineGit ? objects() : undefined,
    maxBytes,
  });
  const { next, work, workPrev, workAbs, skipped, walk } = phase;

  // ---- content of new and changed paths ----
  // Pass 1: symlinks, size cap and git references; what is left is read (pass 2).
  const pass = contentPass({ next, work, workPrev, workAbs, prev, owners, maxBytes, skipped, git, gitObjects: objects });
  const { toRead } = pass;
  const gitReferenced = phase.gitReferenced + pass.gitReferenced;

  // Pass 2: read and store (into the scan's one pack, committed before anything is recorded).
  const pack = (resources.pack = createScanPack(ctx));
  let readResult: StoreContentResult;
  try {
    // Much to read (a first scan): the worker reads while the pack writer's threads hash and compress.
    const pool = parallelAfter !== Infinity && toRead.length >= READ_IN_WORKER_MIN ? makePool() : resources.pool;
    readResult = await readAndStore({ pack, next, work, workPrev, workAbs, toRead, prev, pool, maxBytes, skipped, onProgress: options.onProgress });
  } finally {
    resources.pool?.close();
  }
  const { hashed, gitSha1, gitSeeds, dirtyBytes } = readResult;
  let { stored } = readResult;

  // ---- compare with what ckpt last knew ----
  // The rules changed since the last scan (a .gitignore edited, a branch checked out): a path the old
  // ones ignored that was there before that scan (its inode unchanged since) is not "created"
  // (previous-rules.ts). One made since — the checkout that brought the new rules made it too — is.
  const previous = prev && prev.rules.size > 0 && !sameMap(prev.rules, walk.ruleTexts) ? previousIgnoreRules({ root, storeDir: ctx.dir, extra: options.ignore }, prev.rules) : undefined;
  const wasIgnored = previous
    ? (path: string, isDir: boolean) => previous.isIgnoredPath(path, isDir) && (lstatSync(join(root, path), { throwIfNoEntry: false })?.ctimeMs ?? Infinity) < prev!.timeMs
    : undefined;
  const { changes, unbaselinedChanged } = compareWithKnown({ root, phase, prev, owners, rules, gitSha1, ...(wasIgnored ? { wasIgnored } : {}) });

  // ---- record: before-images, one capture + its settle ----
  const warnings = [...(opened.objects?.problems ?? [])];
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
    ruleTexts: walk.ruleTexts,
    workCount: work.length,
    seenPrev: phase.seenPrev,
    dirtyBytes,
    truncated: walk.truncated,
    unbaselinedChanged,
    skippedNew: newlySkipped(next, work, workPrev, prev, owners),
    always: options.rewriteIndex === 'always',
  });
  if (tag !== null) await afterCommit(warnings, 'scan index not updated', persist);
  else await persist();

  return {
    tag,
    ...(seq !== undefined ? { seq } : {}),
    files,
    ...(baseline ? { baseline: true as const } : {}),
    ...(baseline && !options.onlyBaseline ? { warning: BASELINE_WARNING } : {}),
    ...(loaded.corrupt ? { indexRebuilt: true as const } : {}),
    scanned: phase.scanned,
    dirs: walk.dirs,
    hashed,
    gitReferenced,
    stored,
    skipped,
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(walk.truncated ? { truncated: true as const, pending: walk.pending } : {}),
    ms: Math.round(performance.now() - t0),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/**
 * True when a path became one ckpt cannot record (too large, unreadable). Owner records never hold
 * such a state, so the index must: else the next scan would take the path's older state (or none:
 * "created") as what ckpt knew, and a restore could delete what ckpt never recorded.
 */
function newlySkipped(next: ScanIndex, work: readonly number[], workPrev: readonly number[], prev: ScanIndex | undefined, owners: ReadonlyMap<string, FileImage>): boolean {
  for (let w = 0; w < work.length; w++) {
    const i = work[w] as number;
    if (next.kind[i] !== KIND_SKIPPED) continue;
    const p = workPrev[w] as number;
    if (p < 0 || prev!.kind[p] !== KIND_SKIPPED || owners.has(next.paths[i] as string)) return true;
  }
  return false;
}
