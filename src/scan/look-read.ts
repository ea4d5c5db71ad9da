// The look a read makes (DESIGN §10 "diff looks too"): the restore's look (look-outside.ts) — what
// changed outside the agent since ckpt last looked — found the same way, with nothing written: no
// lock, no owner-index catch-up, the files read only hashed (scan-pack.ts createHashOnlyPack), and
// the before-content known only as a git blob read into memory for the caller instead of copied into
// the store. `ckpt diff N` shows these paths, so it lists what `restore N` would put back or refuse.
import { createHash } from 'node:crypto';
import { CLOCK_SLACK_MS } from '../workspace/changed-at.js';
import type { FileImage } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import type { GitObjects } from '../workspace/git-objects.js';
import { hasBaseline } from './baseline.js';
import { findChanges, withScanResources } from './scan-find.js';
import { changedSince, restorable, type OutsideLook } from './look-outside.js';
import type { Change } from './scan-compare.js';

export interface ReadLook extends Omit<OutsideLook, 'commit'> {
  /** Content the before- and after-images name that only git holds (sha256 id -> bytes), read for the caller. */
  content: ReadonlyMap<string, Buffer>;
}

/** The look from `sinceMs` (undefined: none — no baseline, capture off, no time to look from, or nothing changed). */
export async function readOutsideLook(session: SessionHandle, sinceMs: number | undefined): Promise<ReadLook | undefined> {
  const { ctx } = session;
  if (sinceMs === undefined || !ctx.options.captureEnabled || !(await hasBaseline(session))) return undefined;
  return withScanResources(async (resources) => {
    const found = await findChanges(session, {}, performance.now(), resources, true);
    if (!found || found.prev === undefined) return undefined;
    const changes = changedSince(session.workspaceRoot, found.changes, sinceMs - CLOCK_SLACK_MS);
    if (changes.length === 0) return undefined;
    changes.sort((a, b) => (a.after.path < b.after.path ? -1 : a.after.path > b.after.path ? 1 : 0));
    for (const [oid, data] of found.readResult.gitSeeds) found.objects()?.seedBlob(oid, data);
    const content = new Map<string, Buffer>();
    const git = gitReader(found.objects, ctx.options.maxBlobBytes, content);
    const before: FileImage[] = [];
    const after: FileImage[] = [];
    const knownAt = new Map<string, number>();
    for (const c of changes) {
      const image = c.before.gitOid !== undefined ? fromGit(c, git(c.before.gitOid)) : await restorable(session, c.before.image);
      before.push(image);
      after.push(afterImage(c, image, git));
      knownAt.set(c.after.path, found.ownerTimes.get(c.after.path) ?? found.prev.timeMs);
    }
    return { before, after, knownAt, content };
  });
}

type GitRead = { blob: string; bytes: number } | 'missing' | 'too-large';

/** Reads git blobs by id into `content` under their sha256 ids (each once). */
function gitReader(objects: () => GitObjects | undefined, maxBytes: number, content: Map<string, Buffer>): (oid: string) => GitRead {
  const seen = new Map<string, GitRead>();
  return (oid) => {
    let r = seen.get(oid);
    if (r) return r;
    const data = objects()?.readBlobs([oid])[0];
    if (!data) r = 'missing';
    else if (data.length > maxBytes) r = 'too-large';
    else {
      const blob = createHash('sha256').update(data).digest('hex');
      content.set(blob, data);
      r = { blob, bytes: data.length };
    }
    seen.set(oid, r);
    return r;
  };
}

/** A before-image known as a git blob, as the restore's look resolves it (scan-record.ts resolveChanges): skipped when git lost it. */
function fromGit(c: Change, read: GitRead): FileImage {
  const image = c.before.image;
  if (typeof read === 'object') return { ...image, blob: read.blob, bytes: read.bytes };
  const why = read === 'too-large' ? 'too-large' : 'git-object-missing';
  return { path: image.path, state: 'skipped', why, ...(image.bytes !== undefined ? { bytes: image.bytes } : {}) };
}

/** An after-state known only as a git blob (a mode-only change) gets its sha256 id, as a scan records it. */
function afterImage(c: Change, before: FileImage, git: (oid: string) => GitRead): FileImage {
  const now = c.after;
  if (c.afterGitOid === undefined || now.state !== 'file' || now.blob !== undefined) return now;
  if (c.afterGitOid === c.before.gitOid && before.state === 'file' && before.blob) return { ...now, blob: before.blob };
  const read = git(c.afterGitOid);
  return typeof read === 'object' ? { ...now, blob: read.blob } : now;
}
