// `ckpt export SESSION TAG DIR` (issue 33): the whole tree a tag names, materialised into an empty
// folder — from any machine that reaches the store, never touching the workspace. The plan is data
// (`planExport`): what ckpt knows of every path at the tag, i.e. the workspace's last known state (the
// scan index, with owner records newer than it) with every capture after the tag undone (`imagesAt`).
// Applying it (`applyExport`) writes folders, then files (exclusive creates, no symlink followed), then
// symlinks last, so no later write can pass through a link the export made; everything is fsynced.
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { CkptError } from '../errors.js';
import type { FileImage } from '../format/event.js';
import { inlineRecords } from '../format/inline-blobs.js';
import { isStoredPath } from '../format/stored-path.js';
import { imagesAt } from '../session/positions.js';
import type { SessionHandle } from '../session/session-handle.js';
import { withInlineBlobs } from '../storage/inline-store.js';
import type { BlobStore } from '../storage/blob-store.js';
import { timelinePosition, workspaceTimeline } from '../session/workspace-timeline.js';
import { imageOfSlot, newerOwnerImages } from '../scan/known.js';
import { KIND_GONE } from '../scan/scan-index.js';
import { loadIndexCached } from '../scan/scan-persist.js';
import { openGitObjects, type GitObjects } from '../workspace/git-objects.js';
import { findGitDirs } from '../workspace/git-repo.js';
import { fsyncDir, mapLimit } from './present.js';

export interface ExportEntry {
  path: string;
  state: 'file' | 'symlink' | 'dir';
  mode?: number;
  bytes?: number;
  target?: string;
  /** Content in ckpt's store. */
  blob?: string;
  /** Content referenced in the workspace's git object store only (readable on its machine). */
  gitOid?: string;
}

export interface ExportPlan {
  session: string;
  tag: string;
  position: number;
  /** Root of the workspace the session records (on its own machine). */
  root: string;
  entries: ExportEntry[];
  /** Paths ckpt knows but cannot bring back (recorded as skipped, or content out of reach). */
  skipped: { path: string; why: string }[];
}

export interface ExportResult extends ExportPlan {
  dir: string;
  files: number;
  dirs: number;
  symlinks: number;
  bytes: number;
}

/** What a tag names, path by path (sorted): the plan `applyExport` carries out. */
export async function planExport(session: SessionHandle, tag: string): Promise<ExportPlan> {
  const events = await session.events();
  // Where restore places it: `N.K` is just before capture N.K, after other sessions' captures made
  // between the turn and it (a restore's undo tag `N.1` names the workspace before that restore).
  const position = timelinePosition(events, tag);
  // Every session's captures: what another session of the workspace changed after the tag is undone too.
  const { captures } = await workspaceTimeline(session, events);
  const known = new Map<string, FileImage & { gitOid?: string }>();
  const { index } = await loadIndexCached(session, 'bytes');
  if (index) {
    for (let i = 0; i < index.count; i++) {
      if (index.kind[i] === KIND_GONE) continue;
      const path = index.paths[i] as string;
      const k = imageOfSlot(index, i, path);
      known.set(path, { ...k.image, ...(k.gitOid ? { gitOid: k.gitOid } : {}) });
    }
  }
  // Settles, restores and small scans record their results in owner records rather than the index.
  for (const [path, image] of await newerOwnerImages(session, index?.timeMs ?? 0)) known.set(path, image);
  for (const [path, image] of imagesAt(captures, position)) {
    // A folder implied by what it held only exists where nothing else says otherwise.
    if (image.implied && known.has(path)) continue;
    known.set(path, image);
  }
  const entries: ExportEntry[] = [];
  const skipped: ExportPlan['skipped'] = [];
  for (const [path, image] of [...known].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!isStoredPath(path)) {
      skipped.push({ path, why: 'invalid-path' });
    } else if (image.state === 'skipped') {
      skipped.push({ path, why: image.why ?? 'skipped' });
    } else if (image.state === 'dir') {
      entries.push({ path, state: 'dir', ...(image.mode !== undefined ? { mode: image.mode } : {}) });
    } else if (image.state === 'symlink') {
      entries.push({ path, state: 'symlink', target: image.target ?? '' });
    } else if (image.state === 'file') {
      entries.push({
        path,
        state: 'file',
        ...(image.mode !== undefined ? { mode: image.mode } : {}),
        ...(image.bytes !== undefined ? { bytes: image.bytes } : {}),
        ...(image.blob ? { blob: image.blob } : {}),
        ...(image.gitOid ? { gitOid: image.gitOid } : {}),
      });
    }
  }
  return { session: session.id, tag, position, root: session.workspaceRoot, entries, skipped };
}

/**
 * Materialises the plan into `dir` (created; must be missing or an empty folder). Files whose content
 * is out of reach (a git object of another machine's repository) are reported in `skipped`.
 */
export async function applyExport(session: SessionHandle, plan: ExportPlan, dir: string): Promise<ExportResult> {
  await prepareTarget(dir);
  const blobs = await exportBlobs(session);
  let git: GitObjects | undefined | null = null;
  const gitObjects = (): GitObjects | undefined => {
    if (git === null) {
      const dirs = findGitDirs(plan.root);
      git = dirs ? openGitObjects(dirs.commondir) : undefined;
    }
    return git;
  };
  const skipped = [...plan.skipped];
  const written: string[] = [];
  let bytes = 0;
  // A path whose parent the plan does not make a folder (a file or link there, or missing) is skipped:
  // nothing is written through something that is not a folder this export made.
  const folders = new Set([''].concat(plan.entries.filter((e) => e.state === 'dir').map((e) => e.path)));
  const parentOk = (path: string): boolean => folders.has(path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
  for (const e of plan.entries) {
    if (e.state !== 'dir') continue;
    if (!parentOk(e.path)) {
      folders.delete(e.path);
      skipped.push({ path: e.path, why: 'parent-not-a-folder' });
      continue;
    }
    await mkdir(join(dir, e.path), { mode: 0o755 });
  }
  const files = plan.entries.filter((e) => e.state === 'file' && parentOk(e.path));
  for (const e of plan.entries) if (e.state !== 'dir' && !parentOk(e.path)) skipped.push({ path: e.path, why: 'parent-not-a-folder' });
  await mapLimit(files, 16, async (e) => {
    let content: Buffer | undefined;
    if (e.blob) content = await blobs.get(e.blob);
    else if (e.gitOid) content = await gitObjects()?.readBlob(e.gitOid);
    if (content === undefined) {
      skipped.push({ path: e.path, why: e.gitOid ? 'git-object-missing' : 'no-content' });
      return;
    }
    const abs = join(dir, e.path);
    const handle = await open(abs, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, (e.mode ?? 0o644) & 0o777);
    try {
      await handle.writeFile(content);
      await handle.chmod((e.mode ?? 0o644) & 0o7777);
      await handle.sync();
    } finally {
      await handle.close();
    }
    bytes += content.length;
    written.push(e.path);
  });
  let symlinks = 0;
  for (const e of plan.entries) {
    if (e.state !== 'symlink' || !parentOk(e.path)) continue;
    await symlink(e.target ?? '', join(dir, e.path));
    symlinks++;
  }
  await mapLimit([...folders], 16, (rel) => fsyncDir(join(dir, rel)));
  // Folder modes last, deepest first: a folder without write permission is filled before it gets it.
  const modes = plan.entries.filter((e) => e.state === 'dir' && e.mode !== undefined && folders.has(e.path));
  for (const e of modes.sort((a, b) => b.path.split('/').length - a.path.split('/').length)) await chmod(join(dir, e.path), e.mode! & 0o7777);
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { ...plan, skipped, dir, files: written.length, dirs: folders.size - 1, symlinks, bytes };
}

async function prepareTarget(dir: string): Promise<void> {
  const st = await lstat(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!st) {
    await mkdir(dir, { recursive: true, mode: 0o755 });
    return;
  }
  if (!st.isDirectory()) throw new CkptError('INVALID_ARGUMENT', `${dir} exists and is not a folder; export needs a new or empty folder`, { dir });
  if ((await readdir(dir)).length > 0) throw new CkptError('INVALID_ARGUMENT', `${dir} is not empty; export needs a new or empty folder`, { dir });
}

/** The blob store with the inline content of every capture a plan's images may come from (this session's and the timeline's). */
export async function exportBlobs(session: SessionHandle): Promise<BlobStore> {
  const events = await session.events();
  const { sources } = await workspaceTimeline(session, events);
  return withInlineBlobs(session.ctx.blobs, inlineRecords([...events, ...sources]));
}
