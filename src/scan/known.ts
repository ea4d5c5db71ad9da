// What ckpt last knew of a path, and how a scan compares it with what it finds (DESIGN §2): images
// from the scan index (whose file content may be a git blob reference) and from owner-index records,
// the change kinds, and the small index-entry helpers the scan shares.
import type { FileImage } from '../format/event.js';
import { ownerImage, readOwners } from '../capture/owner-index.js';
import type { SessionHandle } from '../session/session-handle.js';
import { HASH_GIT, HASH_NONE, HASH_SHA256, KIND_DIR, KIND_FILE, KIND_SKIPPED, KIND_SYMLINK, type ScanIndex } from './scan-index.js';

export type ScanChangeKind = 'created' | 'modified' | 'deleted' | 'mode' | 'type';

export type SkippedList = { path: string; why: string; bytes?: number }[];

/** The previous state of a path as ckpt knew it. */
export interface Known {
  image: FileImage;
  /** Git blob id when the content is only referenced in git's object store. */
  gitOid?: string;
}

/** Owner-index records at or after `sinceMs`, as images (and their times into `times`, when given). */
export async function newerOwnerImages(session: SessionHandle, sinceMs: number, times?: Map<string, number>): Promise<Map<string, FileImage>> {
  const out = new Map<string, FileImage>();
  const owners = await readOwners(session);
  for (const [path, o] of Object.entries(owners)) {
    const at = o ? Date.parse(o.at) : NaN;
    if (!o || at < sinceMs) continue;
    const image = ownerImage(path, o);
    if (!image) continue;
    out.set(path, image);
    if (Number.isFinite(at)) times?.set(path, at);
  }
  return out;
}

export function imageOfSlot(idx: ScanIndex, i: number, path: string): Known {
  const kind = idx.kind[i];
  if (kind === KIND_DIR) return { image: dirImage(path, idx.mode[i] as number) };
  if (kind === KIND_SYMLINK) return { image: { path, state: 'symlink', target: idx.targets.get(i) ?? '' } };
  if (kind === KIND_SKIPPED) {
    return { image: { path, state: 'skipped', why: idx.why.get(i) ?? 'unreadable', bytes: idx.size[i] as number } };
  }
  const hex = idx.hashHex(i) ?? '';
  const mode = (idx.mode[i] as number) & 0o7777;
  const bytes = idx.size[i] as number;
  if (idx.hashKind[i] === HASH_GIT) return { image: { path, state: 'file', bytes, mode }, gitOid: hex };
  return { image: { path, state: 'file', blob: hex, bytes, mode } };
}

/**
 * An entry is trusted on a stat match only when its inode had not changed for a while when the
 * previous scan started: a write in the same timestamp tick as that scan's read would be invisible.
 * Any write moves ctime to the present (it cannot be set back, unlike mtime), so ctime decides.
 */
export function notRacy(idx: ScanIndex, i: number, before: number): boolean {
  return (idx.ctime[i] as number) < before;
}

export function markSkipped(idx: ScanIndex, i: number, why: string, skipped: SkippedList): void {
  idx.kind[i] = KIND_SKIPPED;
  idx.hashKind[i] = HASH_NONE;
  idx.why.set(i, why);
  skipped.push({ path: idx.paths[i] as string, why, bytes: idx.size[i] as number });
}

/**
 * A folder's image from its index slot: the mode is the stat's (0 in indexes written before folder
 * modes were recorded, issue 26: unknown then, and a stat mode always has the folder type bits).
 */
export function dirImage(path: string, statMode: number): FileImage {
  return statMode === 0 ? { path, state: 'dir' } : { path, state: 'dir', mode: statMode & 0o7777 };
}

/** An entry known only from an owner record (beyond a truncated walk): content kept, stat unknown. */
export function carryOwnerImage(idx: ScanIndex, image: FileImage): void {
  if (image.state === 'dir') {
    const d = idx.push(image.path, KIND_DIR, undefined);
    idx.flags[d] = 0;
    idx.size[d] = -1;
    if (image.mode !== undefined) idx.mode[d] = 0o040000 | image.mode;
  } else if (image.state === 'symlink') {
    const i = idx.push(image.path, KIND_SYMLINK, undefined);
    idx.targets.set(i, image.target ?? '');
  } else if (image.state === 'file' && image.blob) {
    const i = idx.push(image.path, KIND_FILE, undefined);
    idx.mode[i] = 0o100000 | (image.mode ?? 0o644);
    idx.setHash(i, HASH_SHA256, image.blob);
  }
}

/** The change from `known` to `now`, or undefined when they hold the same state. */
export function compare(known: Known, now: Known, nowGitSha1: string | undefined): ScanChangeKind | undefined {
  const a = known.image;
  const b = now.image;
  if (a.state === 'absent') return b.state === 'absent' ? undefined : 'created';
  if (b.state === 'absent') return 'deleted';
  if (a.state !== b.state) return a.state === 'skipped' || b.state === 'skipped' ? 'modified' : 'type';
  if (a.state === 'symlink') return a.target === b.target ? undefined : 'modified';
  // Content ckpt could not record (over the size cap, unreadable) that changed size or reason: recorded
  // as skipped again, so a restore to before it reports the path instead of passing over it in silence
  // (a same-size edit of such a file is not seen: its content is never read).
  if (a.state === 'skipped') return a.bytes !== b.bytes || a.why !== b.why ? 'modified' : undefined;
  // A folder's mode: known on both sides only (indexes and records before issue 26 have none).
  if (a.state === 'dir') return a.mode !== undefined && b.mode !== undefined && a.mode !== b.mode ? 'mode' : undefined;
  let sameBytes: boolean;
  if (known.gitOid !== undefined) sameBytes = known.gitOid === (now.gitOid ?? nowGitSha1);
  else sameBytes = now.gitOid === undefined && a.blob === b.blob;
  if (!sameBytes) return 'modified';
  // An owner record without a mode (older writers) says nothing about it.
  return a.mode !== undefined && b.mode !== undefined && a.mode !== b.mode ? 'mode' : undefined;
}
