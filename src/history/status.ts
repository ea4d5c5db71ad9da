// `ckpt status` (DESIGN §9, §10 "CLI"): where a session stands — its workspace, current turn, the paths
// a tool captured whose after-state was never recorded (no settle or scan since), and whether the
// workspace changed since ckpt last recorded it. Read-only: nothing is appended, stored or indexed.
//
// "Changed" is what the next scan would record: with a scan baseline, one stat walk against the
// workspace's scan index (and owner records newer than it), reading only files whose stat differs;
// without one, the paths ckpt recorded (owner records, this session's settles) compared one by one.
import type { FileImage } from '../format/event.js';
import { isStoredPath } from '../format/stored-path.js';
import type { SessionHandle } from '../session/session-handle.js';
import { replay } from '../session/replay.js';
import { loadPlans } from '../session/restore-plans.js';
import { compareWithKnown } from '../scan/scan-compare.js';
import { markSkipped, newerOwnerImages } from '../scan/known.js';
import { loadIndexCached } from '../scan/scan-persist.js';
import { HASH_GIT, HASH_SHA256, KIND_GONE, KIND_SKIPPED, KIND_SYMLINK, type ScanIndex } from '../scan/scan-index.js';
import { walkPhase } from '../scan/scan-walk.js';
import { gitBlobId } from '../workspace/git-repo.js';
import { createIgnoreRules } from '../workspace/ignore-rules.js';
import { readLinkTarget, TARGET_NOT_UTF8 } from '../workspace/link-target.js';
import { createListPool, readFilesSync, READ_FAILED, READ_GONE, type ListPool } from '../workspace/list-dir.js';
import { sha256 } from '../workspace/read-image.js';
import { sameImage } from '../format/same-image.js';
import { readPresent } from '../restore/present.js';
import { sessionLinks, type SessionLinks } from './links.js';

export interface SessionStatus {
  /** Real path of the workspace root. */
  workspace: string;
  session: string;
  /** The current turn (0 before the first). */
  turn: number;
  /** The session's last capture, if any. */
  lastCapture: { tag: string; at: string } | null;
  /** Paths a tool captured whose after-state was not recorded since (no settle, scan or restore). */
  unsettled: string[];
  /** Paths that differ from what ckpt last recorded (the first `limit` of them, sorted). */
  changed: { count: number; paths: string[] };
  /** A scan baseline exists: `changed` covers the whole workspace, not only the paths ckpt recorded. */
  baseline: boolean;
  /** The session an agent's `/clear` continued from (its earlier turns are there). */
  continues?: SessionLinks['continues'];
  /** A fork: its parent and point, and how many paths differed from the point when it was made. */
  forkedFrom?: SessionLinks['forkedFrom'];
}

export interface StatusOptions {
  /** How many changed paths to list (default 20; the count is always complete). */
  limit?: number;
}

const DEFAULT_LIMIT = 20;
const READ_BATCH = 256;
const PARALLEL_MIN_ENTRIES = 40_000;

export async function sessionStatus(session: SessionHandle, options: StatusOptions = {}): Promise<SessionStatus> {
  const events = await session.events();
  // `known` folds committed restores: a big restore keeps its plan in a blob, read here first.
  await loadPlans(session.ctx.blobs, events);
  const state = replay(events);
  const unsettled = [...state.known].filter(([, image]) => image === null).map(([path]) => path).sort();
  const last = state.captures.at(-1);
  const { index } = await loadIndexCached(session, 'bytes');
  const changed = index ? await changedSinceIndex(session, index) : await changedRecordedPaths(session, state.known);
  changed.sort();
  return {
    workspace: session.workspaceRoot,
    session: session.id,
    turn: state.turn,
    lastCapture: last ? { tag: last.tag, at: last.at } : null,
    unsettled,
    changed: { count: changed.length, paths: changed.slice(0, options.limit ?? DEFAULT_LIMIT) },
    baseline: index !== undefined,
    ...(await sessionLinks(session, events)),
  };
}

/** What a scan would record now: a stat walk against the index, content hashed (not stored) where the stat differs. */
async function changedSinceIndex(session: SessionHandle, prev: ScanIndex): Promise<string[]> {
  const { ctx } = session;
  const root = ctx.workspace.root;
  const maxBytes = ctx.options.maxBlobBytes;
  const owners = await newerOwnerImages(session, prev.timeMs);
  const rules = createIgnoreRules({ root, storeDir: ctx.dir });
  const resources: { pool?: ListPool } = {};
  try {
    const phase = await walkPhase({
      root,
      rules,
      prev,
      owners,
      startMs: Date.now(),
      racyBefore: prev.timeMs - 2_000,
      deadline: undefined,
      parallelAfter: prev.count >= PARALLEL_MIN_ENTRIES ? 0 : PARALLEL_MIN_ENTRIES,
      makePool: () => (resources.pool ??= createListPool()),
      resources,
      maxBytes,
    });
    const { next, work, workPrev, workAbs, skipped } = phase;
    const gitSha1 = new Map<number, string>();
    const toRead: number[] = [];
    for (let w = 0; w < work.length; w++) {
      const i = work[w] as number;
      if (next.kind[i] === KIND_SKIPPED) continue;
      if (next.kind[i] === KIND_SYMLINK) {
        try {
          const target = await readLinkTarget(workAbs[w] as string);
          if (target === undefined) markSkipped(next, i, TARGET_NOT_UTF8, skipped);
          else next.targets.set(i, target);
        } catch (err) {
          markSkipped(next, i, `unreadable: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, skipped);
        }
      } else if ((next.size[i] as number) > maxBytes) markSkipped(next, i, 'too-large', skipped);
      else toRead.push(w);
    }
    for (let from = 0; from < toRead.length; from += READ_BATCH) {
      const batchWork = toRead.slice(from, from + READ_BATCH);
      const batch = readFilesSync(
        batchWork.map((w) => workAbs[w] as string),
        batchWork.map((w) => next.size[work[w] as number] as number),
      );
      batchWork.forEach((w, k) => {
        const i = work[w] as number;
        const len = batch.lengths[k] as number;
        if (len === READ_GONE) next.kind[i] = KIND_GONE;
        else if (len === READ_FAILED) markSkipped(next, i, `unreadable: ${batch.errors[k] ?? 'error'}`, skipped);
        else if (len > maxBytes) markSkipped(next, i, 'too-large', skipped);
        else {
          const offset = batch.offsets[k] as number;
          const data = batch.data.subarray(offset, offset + len);
          next.setHash(i, HASH_SHA256, sha256(data));
          const p = workPrev[w] as number;
          if (p >= 0 && prev.hashKind[p] === HASH_GIT) gitSha1.set(i, gitBlobId(data));
        }
      });
    }
    return compareWithKnown({ root, phase, prev, owners, rules, gitSha1 }).changes.map((c) => c.after.path);
  } finally {
    resources.pool?.close();
  }
}

/** No baseline: each path ckpt recorded (the latest owner record, else this session's settle) against the present. */
async function changedRecordedPaths(session: SessionHandle, known: ReadonlyMap<string, FileImage | null>): Promise<string[]> {
  const expected = new Map<string, FileImage>();
  for (const [path, image] of known) if (image && image.state !== 'skipped') expected.set(path, image);
  for (const [path, image] of await newerOwnerImages(session, 0)) expected.set(path, image);
  const root = session.workspaceRoot;
  const out: string[] = [];
  for (const [path, image] of expected) {
    if (!isStoredPath(path)) continue; // a path that resolves outside the root is never read (DESIGN §6)
    const now = await readPresent(root, path, session.ctx.options.maxBlobBytes);
    const same = image.mode === undefined && now.state === 'file' ? now.state === image.state && now.blob === image.blob : sameImage(image, now);
    if (!same) out.push(path);
  }
  return out;
}
