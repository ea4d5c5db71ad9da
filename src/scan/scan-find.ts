// Finding what changed since ckpt last looked (DESIGN §2 "Capture"): a scan's walk + lstat, its
// content passes (reading new and changed files into the scan's pack) and the comparison with what
// ckpt last knew — everything before anything is recorded. A scan records what this finds (scan.ts);
// a restore's look plans with it first (look-outside.ts, DESIGN §10 "A restore looks first").
import { lstatQuiet } from '../workspace/changed-at.js';
import { join } from 'node:path';
import type { FileImage } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import { gitIndexStat, loadGitIndex, withUntrackedAttributes, type GitIndex } from '../workspace/git-index.js';
import { gitIndexChangedSince, uncarryGitReferences } from './git-carried.js';
import { openGitObjects, type GitObjects } from '../workspace/git-objects.js';
import { findGitDirs } from '../workspace/git-repo.js';
import { createIgnoreRules } from '../workspace/ignore-rules.js';
import { createListPool, type ListPool } from '../workspace/list-dir.js';
import { readAndStore, type StoreContentResult } from './store-content.js';
import { newerOwnerImages } from './known.js';
import type { ScanIndex } from './scan-index.js';
import { contentPass } from './content-pass.js';
import { compareWithKnown, type Change } from './scan-compare.js';
import { loadHotState } from '../session/hot-snapshot.js';
import { loadIndexCached, sameMap } from './scan-persist.js';
import { previousIgnoreRules } from './previous-rules.js';
import type { ScanOptions } from './scan-types.js';
import { walkPhase, type WalkPhase } from './scan-walk.js';
import { createHashOnlyPack, createScanPack, type ScanPack } from './scan-pack.js';

/** Entries changed this close before the previous scan started are not trusted (racily clean). */
const RACY_MS = 2_000;
/** The tree size from which a worker thread lists and stats some of the folders. */
const PARALLEL_MIN_ENTRIES = 40_000;
/** From this many files to read, a worker thread reads them. */
const READ_IN_WORKER_MIN = 1000;

/** What the caller closes: the list pool and the scan's pack (aborted unless committed). */
export interface ScanResources {
  pool?: ListPool;
  pack?: ScanPack;
}

/** Runs `fn` with a list pool and a scan pack that are closed (the pack aborted unless committed) after. */
export async function withScanResources<T>(fn: (resources: ScanResources) => Promise<T>): Promise<T> {
  const resources: ScanResources = {};
  try {
    return await fn(resources);
  } finally {
    resources.pool?.close(); // idempotent: normally closed once the files are read
    await resources.pack?.abort(); // a no-op once committed (before the capture)
  }
}

export interface Findings {
  /** The previous index as loaded (undefined: this is the baseline). */
  prev: ScanIndex | undefined;
  corrupt?: true;
  phase: WalkPhase;
  /** Owner records newer than the previous index (what ckpt last knew of their paths). */
  owners: ReadonlyMap<string, FileImage>;
  /** When each of `owners` was recorded (ms). */
  ownerTimes: ReadonlyMap<string, number>;
  changes: Change[];
  unbaselinedChanged: boolean;
  readResult: StoreContentResult;
  gitReferenced: number;
  /**
   * The scan index must be rewritten for git's sake: git's index changed since the previous scan (the
   * references carried by stat were checked against it), or a file whose reference it no longer
   * names was read.
   */
  gitRewrite: boolean;
  skipped: WalkPhase['skipped'];
  pack: ScanPack;
  /** Git's object store, opened on first use; its problems (unusable alternates) once opened. */
  objects: () => GitObjects | undefined;
  gitProblems: () => readonly string[];
}

/**
 * Walks, reads and compares; undefined for `onlyBaseline` when the workspace has a baseline already.
 * `readOnly` (a read's look): the content read is hashed, never stored (scan-pack.ts createHashOnlyPack).
 */
export async function findChanges(session: SessionHandle, options: ScanOptions, t0: number, resources: ScanResources, readOnly = false): Promise<Findings | undefined> {
  const { ctx } = session;
  const root = ctx.workspace.root;
  const maxBytes = ctx.options.maxBlobBytes;
  const startMs = Date.now();
  // git's index as this scan starts (one stat), recorded with the index it writes (git-carried.ts gitIndexChangedSince).
  const gitAtStart = gitIndexStat(root);
  const loaded = await loadIndexCached(session, 'bytes');
  const prev = loaded.index;
  const baseline = prev === undefined;
  if (options.onlyBaseline && !baseline) return undefined;
  const ownerTimes = new Map<string, number>();
  const owners = prev ? await newerOwnerImages(session, prev.timeMs, ownerTimes) : new Map<string, FileImage>();
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
  // The git references carried by stat, checked when git's index changed since the previous scan: one
  // it no longer names is read (git-carried.ts). The index is then rewritten, so the check runs once.
  const gitRechecked = prev !== undefined && phase.gitCarried.length > 0 && gitIndexChangedSince(prev, gitAtStart, prev.timeMs - (options.racyMs ?? RACY_MS));
  next.gitIndex = gitAtStart?.key ?? '';
  if (gitRechecked) uncarryGitReferences(root, phase, git());

  // ---- content of new and changed paths ----
  // Pass 1: symlinks, size cap and git references; what is left is read (pass 2).
  // A path below an untracked .gitattributes the walk saw is never referenced (withUntrackedAttributes).
  let gitSeen: GitIndex | undefined;
  const gitForContent = (): GitIndex | undefined => {
    const g = git();
    return g && (gitSeen ??= withUntrackedAttributes(g, phase.attributeFiles));
  };
  const pass = contentPass({ next, work, workPrev, workAbs, prev, owners, maxBytes, skipped, git: gitForContent, gitObjects: objects });
  const { toRead } = pass;
  const gitReferenced = phase.gitReferenced + pass.gitReferenced;

  // Pass 2: read and store (into the scan's one pack, committed before anything is recorded).
  const pack = (resources.pack = readOnly ? createHashOnlyPack() : createScanPack(ctx));
  let readResult: StoreContentResult;
  try {
    // Much to read (a first scan): the worker reads while the pack writer's threads hash and compress.
    const pool = parallelAfter !== Infinity && toRead.length >= READ_IN_WORKER_MIN ? makePool() : resources.pool;
    readResult = await readAndStore({ pack, next, work, workPrev, workAbs, toRead, prev, pool, maxBytes, skipped, onProgress: options.onProgress });
  } finally {
    resources.pool?.close();
  }

  // ---- compare with what ckpt last knew ----
  // The rules changed since the last scan (a .gitignore edited, a branch checked out): a path the old
  // ones ignored that was there before that scan (its inode born before it) is not "created"
  // (previous-rules.ts). One made since — the checkout that brought the new rules made it too — is.
  const previous = prev && prev.rules.size > 0 && !sameMap(prev.rules, walk.ruleTexts) ? previousIgnoreRules({ root, storeDir: ctx.dir, extra: options.ignore }, prev.rules) : undefined;
  // "There before" means at the prompt whose state this scan's before-images are: the session's last
  // turn (a turn's own scan runs before its turn event). The index's time is older when later scans
  // left it as it was: a file made while ignored after it, and un-ignored since, was "created", and
  // `restore N` deleted it although prompt N had it (a round-4 probe).
  const thereAt = previous ? Date.parse((await loadHotState(session)).turnAt ?? '') : NaN;
  const before = Number.isFinite(thereAt) ? thereAt : (prev?.timeMs ?? 0);
  const wasIgnored = previous ? (path: string, isDir: boolean) => previous.isIgnoredPath(path, isDir) && bornBefore(join(root, path), before) : undefined;
  const ignoredBefore = previous ? (path: string, isDir: boolean) => previous.isIgnoredPath(path, isDir) : undefined;
  const { changes, unbaselinedChanged } = compareWithKnown({ root, phase, prev, owners, rules, gitSha1: readResult.gitSha1, ...(wasIgnored ? { wasIgnored, ignoredBefore } : {}) });
  return {
    prev,
    ...(loaded.corrupt ? { corrupt: true as const } : {}),
    phase,
    owners,
    ownerTimes,
    changes,
    unbaselinedChanged,
    readResult,
    gitReferenced,
    gitRewrite: gitRechecked || pass.gitDropped > 0,
    skipped,
    pack,
    objects,
    gitProblems: () => opened.objects?.problems ?? [],
  };
}

/**
 * Whether the inode at `abs` was made before `ms`: its birth time where the file system keeps one (a
 * file edited in place since is still the one that was there), else its ctime (any change since counts
 * as new: a restore may then remove it, its content kept in the recovery capture).
 */
function bornBefore(abs: string, ms: number): boolean {
  const st = lstatQuiet(abs);
  if (!st) return false;
  return (st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs) < ms;
}
