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
import { readlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { isCkptError } from '../errors.js';
import type { FileImage, NewEvent } from '../format/event.js';
import { captureTag } from '../format/tag.js';
import { detectConflicts, recordOwnership } from '../capture/owner-index.js';
import type { Session } from '../session/session.js';
import { replay } from '../session/replay.js';
import { loadGitIndex, matchesGitEntry, readGitBlob, findGitDirs, type GitIndex } from '../workspace/git-index.js';
import { createIgnoreRules } from '../workspace/ignore-rules.js';
import { createListPool, UNREADABLE, type ListPool } from '../workspace/list-dir.js';
import { walkWorkspace, type WalkResult } from '../workspace/walk.js';
import { readAndStore, type StoreContentResult } from './store-content.js';
import { carryOwnerImage, compare, countNewDirs, imageOfSlot, markSkipped, newerOwnerImages, notRacy, type Known, type ScanChangeKind } from './known.js';
import {
  HASH_GIT,
  KIND_DIR,
  KIND_FILE,
  KIND_GONE,
  KIND_SKIPPED,
  KIND_SYMLINK,
  ScanIndex,
} from './scan-index.js';

export type { ScanChangeKind };

export interface ScanOptions {
  /** Tool name recorded on the capture (default `scan`). */
  tool?: string;
  /** Stop walking after this long; what was not reached is reported and nothing is recorded for it. */
  budgetMs?: number;
  /** Extra gitignore-style patterns (relative to the root) for this workspace. */
  ignore?: readonly string[];
  /** Reference git's blobs for files matching git's index (default true). */
  git?: boolean;
  /**
   * `auto` (default): the index is rewritten only when enough changed (a few re-read paths are carried
   * by owner records instead, saving the write of a large index); `always`: rewritten on every scan.
   */
  rewriteIndex?: 'auto' | 'always';
  /** Worker threads listing folders and reading files: 0 none, 1 one (default: one for baselines and trees of 40,000+ entries). */
  threads?: number;
  /**
   * Entries whose inode changed less than this long before the previous scan started are re-read
   * even when their stat matches (default 2 s: covers coarse filesystem timestamps). Tests lower it.
   */
  racyMs?: number;
}


/** One changed path: how it changed and its state now (the settle's after-image). */
export interface ScanChange extends FileImage {
  change: ScanChangeKind;
}

export interface ScanResult {
  /** Tag of the capture (`N.K`), or null when nothing changed (or for the baseline). */
  tag: string | null;
  seq?: number;
  files: ScanChange[];
  /** True for the first scan of the workspace: the baseline was stored, nothing recorded. */
  baseline?: true;
  /** The scan index could not be decoded: this scan rebuilt it as a new baseline (changes since the last scan were not recorded). */
  indexRebuilt?: true;
  /** Files and symlinks seen, folders walked. */
  scanned: number;
  dirs: number;
  /** Files read (stat differed or new), and those referenced from git's index without reading. */
  hashed: number;
  gitReferenced: number;
  /** Blobs newly written to the store. */
  stored: number;
  /** Files seen that ckpt cannot record (over the size cap, unreadable), and unreadable folders. */
  skipped: { path: string; why: string; bytes?: number }[];
  /** Set when the time budget ran out: `pending` folders were not walked and nothing was recorded for them. */
  truncated?: true;
  pending?: string[];
  ms: number;
  /** Set when capture is switched off (CKPT_DISABLE): nothing was scanned. */
  disabled?: true;
}

/** Entries changed this close before the previous scan started are not trusted (racily clean). */
const RACY_MS = 2_000;
/** Below this many re-read paths the index is left as is (owner records carry the changes). */
const REWRITE_MIN_DIRTY = 64;
const REWRITE_MIN_BYTES = 8 * 1024 * 1024;
/** The tree size from which a worker thread lists and stats some of the folders. */
const PARALLEL_MIN_ENTRIES = 40_000;
/** From this many files to read, a worker thread reads them. */
const READ_IN_WORKER_MIN = 1000;

export function scanIndexKey(session: Session): string {
  return `${session.ctx.workspace.key}/scan-index.bin`;
}

export async function scan(session: Session, options: ScanOptions = {}): Promise<ScanResult> {
  const t0 = performance.now();
  if (!session.ctx.options.captureEnabled) {
    return { tag: null, files: [], scanned: 0, dirs: 0, hashed: 0, gitReferenced: 0, stored: 0, skipped: [], ms: 0, disabled: true };
  }
  const { backend } = session.ctx;
  // One scan of a workspace at a time: a second one then sees the first one's index and records.
  return backend.withLock(`${session.ctx.workspace.key}/scan`, () => runScan(session, options, t0), {
    timeoutMs: Math.max(session.ctx.options.lockTimeoutMs, 120_000),
  });
}

/** The index, or undefined; `corrupt` when one exists but cannot be decoded (it is rebuilt as a new baseline). */
async function loadIndex(session: Session): Promise<{ index?: ScanIndex; corrupt?: true }> {
  const raw = await session.ctx.backend.read(scanIndexKey(session));
  if (!raw) return {};
  try {
    return { index: ScanIndex.decode(raw) };
  } catch (err) {
    if (isCkptError(err, 'LOG_CORRUPT')) return { corrupt: true };
    throw err;
  }
}

async function runScan(session: Session, options: ScanOptions, t0: number): Promise<ScanResult> {
  const resources: { pool?: ListPool } = {};
  try {
    return await scanLocked(session, options, t0, resources);
  } finally {
    resources.pool?.close(); // idempotent: normally closed once the files are read
  }
}

async function scanLocked(session: Session, options: ScanOptions, t0: number, resources: { pool?: ListPool }): Promise<ScanResult> {
  const { ctx } = session;
  const root = ctx.workspace.root;
  const maxBytes = ctx.options.maxBlobBytes;
  const startMs = Date.now();
  const loaded = await loadIndex(session);
  const prev = loaded.index;
  const baseline = prev === undefined;
  const owners = prev ? await newerOwnerImages(session, prev.timeMs) : new Map<string, FileImage>();
  const rules = createIgnoreRules({ root, storeDir: ctx.dir, extra: options.ignore });
  const next = new ScanIndex((prev?.count ?? 1024) + 256, startMs);
  const seenPrev = new Uint8Array(prev?.count ?? 0);
  const racyBefore = prev ? prev.timeMs - (options.racyMs ?? RACY_MS) : 0;
  /** Slots of `next` whose content must be read, with their previous-index slot (or -1). */
  const work: number[] = [];
  const workPrev: number[] = [];
  const workAbs: string[] = [];
  const skipped: ScanResult['skipped'] = [];
  let scanned = 0;
  const ownerSeen = new Set<string>();

  // ---- walk + lstat (the hot loop: no promises, no per-entry objects beyond the stat) ----
  // An unchanged folder lists its entries in the order the previous index recorded them (a folder's
  // children are one block of slots): the next slot of the block is checked first, then the block,
  // and the path map (built lazily) only for large or unknown blocks.
  let blockStart = 0;
  let blockEnd = -1;
  let cursor = -1;
  let childStart = 0;
  const knownSlot = (rel: string): number => {
    if (blockEnd < 0) return prev!.slotOf(rel);
    const expected = cursor + 1;
    if (expected < blockEnd && prev!.paths[expected] === rel) return (cursor = expected);
    if (blockEnd - blockStart > 256) return prev!.slotOf(rel);
    for (let j = blockStart; j < blockEnd; j++) if (prev!.paths[j] === rel) return (cursor = j);
    return -1;
  };
  const dirPrevSlot: number[] = [];
  const st = { size: 0, mtimeMs: 0, ctimeMs: 0, ino: 0, mode: 0 };
  // A worker thread lists folders (and reads files) on large trees: from the start when the previous
  // index says the tree is large, else once the walk has seen that many entries.
  const parallelAfter = options.threads === 0 ? Infinity : options.threads !== undefined || (prev?.count ?? 0) >= PARALLEL_MIN_ENTRIES ? 0 : PARALLEL_MIN_ENTRIES;
  const makePool = (): ListPool | undefined => (resources.pool ??= createListPool());
  let walk: WalkResult;
  try {
    walk = await walkWorkspace(
      {
        root,
        rules,
        previousRules: prev?.rules,
        deadline: options.budgetMs !== undefined ? t0 + options.budgetMs : undefined,
        parallel: parallelAfter === Infinity ? undefined : { after: parallelAfter, create: makePool },
      },
      {
        known: prev ? knownSlot : () => -1,
        enterDir(rel, token) {
          childStart = next.count;
          if (!prev) return;
          const p = token < 0 ? -1 : (dirPrevSlot[token] as number);
          const first = rel === '' ? 0 : p >= 0 && prev.kind[p] === KIND_DIR ? (prev.size[p] as number) : -1;
          const n = rel === '' ? prev.rootChildren : first >= 0 ? (prev.mtime[p] as number) : -1;
          if (first >= 0 && n >= 0 && first + n <= prev.count) {
            blockStart = first;
            blockEnd = first + n;
          } else blockEnd = -1;
          cursor = blockStart - 1;
        },
        leaveDir(token) {
          if (token < 0) next.rootChildren = next.count - childStart;
          else {
            next.size[token] = childStart;
            next.mtime[token] = next.count - childStart;
          }
        },
        dir(rel, slot) {
          if (slot >= 0) seenPrev[slot] = 1;
          const d = next.push(rel, KIND_DIR, undefined);
          next.flags[d] = 0;
          next.size[d] = -1;
          dirPrevSlot[d] = slot;
          return d;
        },
        entry(rel, abs, stats, o, slot) {
          const size = stats[o] as number;
          if (size === UNREADABLE) {
            if (slot >= 0) seenPrev[slot] = 1;
            const i = next.push(rel, KIND_SKIPPED, undefined);
            next.why.set(i, 'unreadable');
            skipped.push({ path: rel, why: 'unreadable' });
            work.push(i);
            workPrev.push(slot);
            workAbs.push(abs);
            return;
          }
          st.size = size;
          st.mtimeMs = stats[o + 1] as number;
          st.ctimeMs = stats[o + 2] as number;
          st.ino = stats[o + 3] as number;
          st.mode = stats[o + 4] as number;
          const type = st.mode & 0o170000;
          const kind = type === 0o100000 ? KIND_FILE : type === 0o120000 ? KIND_SYMLINK : -1;
          if (kind < 0) return; // sockets, fifos, devices: nothing ckpt can record or restore
          scanned++;
          if (slot >= 0) seenPrev[slot] = 1;
          const i = next.push(rel, kind, st);
          const owned = owners.size > 0 && owners.has(rel);
          if (owned) ownerSeen.add(rel);
          if (slot >= 0 && !owned && prev!.statEquals(slot, st) && prev!.kind[slot] !== KIND_DIR && notRacy(prev!, slot, racyBefore)) {
            next.copyContent(i, prev!, slot);
            if (prev!.kind[slot] === KIND_SKIPPED) skipped.push({ path: rel, why: prev!.why.get(slot) ?? 'skipped', bytes: size });
            return;
          }
          work.push(i);
          workPrev.push(slot);
          workAbs.push(abs);
        },
      },
    );
  } catch (err) {
    resources.pool?.close();
    throw err;
  }
  for (const u of walk.unreadable) skipped.push(u);

  // ---- content of new and changed paths ----
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
  let gitReferenced = 0;
  // Pass 1: symlinks, size cap and git references; what is left is read (pass 2).
  const toRead: number[] = [];
  for (let w = 0; w < work.length; w++) {
    const i = work[w] as number;
    const p = workPrev[w] as number;
    const path = next.paths[i] as string;
    const kind = next.kind[i];
    if (kind === KIND_SKIPPED) continue;
    if (kind === KIND_SYMLINK) {
      try {
        next.targets.set(i, readlinkSync(workAbs[w] as string));
      } catch (err) {
        markSkipped(next, i, `unreadable: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, skipped);
      }
      continue;
    }
    const size = next.size[i] as number;
    if (size > maxBytes) {
      markSkipped(next, i, 'too-large', skipped);
      continue;
    }
    // Git-aware: no previous state (a baseline) or previously the same git blob — reference git.
    const prevGit = p >= 0 && prev!.hashKind[p] === HASH_GIT && !owners.has(path) ? prev!.hashHex(p) : undefined;
    if ((baseline || prevGit !== undefined) && git()) {
      const e = gitIndex!.entries.get(path);
      const st = { size, mtimeMs: next.mtime[i] as number, ctimeMs: next.ctime[i] as number, ino: next.ino[i] as number, mode: next.mode[i] as number };
      if (e && (baseline || e.oid === prevGit) && matchesGitEntry(e, st, gitIndex!.indexMtimeMs)) {
        next.setHash(i, HASH_GIT, e.oid);
        gitReferenced++;
        continue;
      }
    }
    toRead.push(w);
  }

  // Pass 2: read and store.
  let readResult: StoreContentResult;
  try {
    // Much to read (a first scan): the worker reads while this thread hashes and stores.
    const pool = parallelAfter !== Infinity && toRead.length >= READ_IN_WORKER_MIN ? makePool() : resources.pool;
    readResult = await readAndStore({ ctx, next, work, workPrev, workAbs, toRead, prev, pool, maxBytes, skipped });
  } finally {
    resources.pool?.close();
  }
  const { hashed, gitSha1, dirtyBytes } = readResult;
  let { stored } = readResult;

  // ---- compare with what ckpt last knew ----
  const changes: { before: Known; after: FileImage; change: ScanChangeKind }[] = [];
  const knownOf = (path: string, p: number): Known | undefined => {
    const o = owners.get(path);
    if (o) return { image: o };
    return p >= 0 && prev!.kind[p] !== KIND_DIR ? imageOfSlot(prev!, p, path) : undefined;
  };
  // Folders a cut-short scan never reached while they held no known paths: what is found there later
  // is baseline, not "created" (a restore must not delete files that were there all along).
  const unbaselined = new Set(prev?.unbaselined ?? []);
  let adopted = 0;
  const within = (set: ReadonlySet<string>, path: string, self: boolean): boolean => {
    if (set.size === 0) return false;
    if (set.has('') || (self && set.has(path))) return true;
    for (let d = dirname(path); d !== '.' && d !== ''; d = dirname(d)) if (set.has(d)) return true;
    return false;
  };
  if (!baseline) {
    for (let w = 0; w < work.length; w++) {
      const i = work[w] as number;
      if (next.kind[i] === KIND_GONE) continue;
      const path = next.paths[i] as string;
      const previously = knownOf(path, workPrev[w] as number);
      if (!previously && within(unbaselined, path, false)) {
        adopted++;
        continue;
      }
      const known = previously ?? { image: { path, state: 'absent' } };
      const now = imageOfSlot(next, i, path);
      const change = compare(known, now, gitSha1.get(i));
      // A new file ckpt cannot store is reported, not recorded: a restore must not delete what it cannot bring back.
      if (change === 'created' && now.image.state === 'skipped') continue;
      if (change) changes.push({ before: known, after: now.image, change });
    }
  }

  // ---- paths not seen: deleted, ignored now, or beyond the walk (carried over) ----
  const pendingDirs = new Set(walk.pending);
  const underPending = (path: string): boolean => within(pendingDirs, path, false);
  next.unbaselined = [
    ...walk.pending.filter((d) => baseline || within(unbaselined, d, true)),
    ...[...unbaselined].filter((d) => within(pendingDirs, d, true) && !pendingDirs.has(d)),
  ];
  const handled = new Set<string>();
  const unseen = (path: string, p: number): void => {
    handled.add(path);
    if (underPending(path)) {
      // Not reached: carried over as ckpt knows it — a newer owner record wins (with its stat unknown).
      const owner = owners.get(path);
      if (owner) carryOwnerImage(next, owner);
      else if (p >= 0) next.copyEntry(prev!, p);
      return;
    }
    if (rules.isIgnoredPath(path)) return;
    const known = knownOf(path, p);
    if (!known || known.image.state === 'absent') return;
    changes.push({ before: known, after: { path, state: 'absent' }, change: 'deleted' });
  };
  if (prev) {
    for (let p = 0; p < prev.count; p++) {
      if (seenPrev[p]) continue;
      if (prev.kind[p] === KIND_DIR) {
        if (underPending(prev.paths[p] as string)) next.copyEntry(prev, p);
        continue;
      }
      unseen(prev.paths[p] as string, p);
    }
    for (const path of owners.keys()) {
      if (ownerSeen.has(path) || handled.has(path)) continue; // seen in this walk, or handled above
      unseen(path, -1);
    }
  }

  // ---- before-images: content known only to git is copied into the store now ----
  const files: ScanChange[] = [];
  const before: FileImage[] = [];
  const after: FileImage[] = [];
  if (changes.length > 0) {
    changes.sort((a, b) => (a.after.path < b.after.path ? -1 : a.after.path > b.after.path ? 1 : 0));
    const gitDirs = changes.some((c) => c.before.gitOid !== undefined) ? (gitIndex?.objectsGitdir ?? findGitDirs(root)?.commondir) : undefined;
    for (const c of changes) {
      let image = c.before.image;
      if (c.before.gitOid !== undefined) {
        const data = gitDirs ? await readGitBlob(gitDirs, c.before.gitOid) : undefined;
        if (data && data.length <= maxBytes) {
          const r = await ctx.blobs.put(data);
          if (r.created) stored++;
          image = { ...image, blob: r.id, bytes: data.length };
        } else {
          image = { path: image.path, state: 'skipped', why: data ? 'too-large' : 'git-object-missing' };
        }
      }
      if (image.state === 'absent') {
        const newDirs = countNewDirs(image.path, prev);
        image = { path: image.path, state: 'absent', ...(newDirs > 0 ? { newDirs } : {}) };
      }
      before.push(image);
      after.push(c.after);
      files.push({ ...c.after, change: c.change });
    }
  }

  // ---- record: one capture + its settle, in one transaction ----
  let tag: string | null = null;
  let seq: number | undefined;
  if (files.length > 0) {
    const tool = options.tool ?? 'scan';
    ({ tag, seq } = await session.transaction(async (tx) => {
      const state = replay(await tx.read());
      const captureTagValue = captureTag(state.turn, state.nextK);
      const event: NewEvent = { type: 'capture', tag: captureTagValue, turn: state.turn, k: state.nextK, tool, reason: 'scan', files: before };
      const conflicts = await detectConflicts(session, state, before);
      const stored = await tx.append([event, ...conflicts, { type: 'settle', tag: captureTagValue, files: after }]);
      return { tag: captureTagValue, seq: stored[0]?.seq };
    }));
    await recordOwnership(session, after);
  }

  // ---- persist the index (skipped when only a few paths were re-read: owner records carry them) ----
  next.rules = walk.ruleTexts;
  const rulesChanged = !prev || !sameMap(prev.rules, walk.ruleTexts);
  const dirty = work.length + (prev ? prev.count - countSeen(seenPrev) : 0);
  const unbaselinedChanged = adopted > 0 || next.unbaselined.length !== unbaselined.size;
  if (options.rewriteIndex === 'always' || baseline || walk.truncated || unbaselinedChanged || rulesChanged || dirty >= REWRITE_MIN_DIRTY || dirtyBytes >= REWRITE_MIN_BYTES) {
    await ctx.backend.write(scanIndexKey(session), next.compact().encode());
  }

  return {
    tag,
    ...(seq !== undefined ? { seq } : {}),
    files,
    ...(baseline ? { baseline: true as const } : {}),
    ...(loaded.corrupt ? { indexRebuilt: true as const } : {}),
    scanned,
    dirs: walk.dirs,
    hashed,
    gitReferenced,
    stored,
    skipped,
    ...(walk.truncated ? { truncated: true as const, pending: walk.pending } : {}),
    ms: Math.round(performance.now() - t0),
  };
}

function countSeen(seen: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < seen.length; i++) n += seen[i] as number;
  return n;
}

function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
