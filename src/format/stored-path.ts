// Validation of what the store says about workspace paths (DESIGN §3, §6): every path read back from
// a log, a restore plan (inline or in a blob), the scan index or the owner index is untrusted input.
// A stored path is a normalized workspace-relative path: `/`-separated, non-empty segments, no `.` or
// `..`, not absolute, no NUL. Pure checks only; the on-disk re-check (symlinked ancestors) happens in
// the workspace layer before any effect. A violation is LOG_CORRUPT: nothing is done from it.
import { CkptError } from '../errors.js';
import type { FileImage, RestorePlanEntry } from './file-image.js';

const BLOB_ID = /^[0-9a-f]{64}$/;
const FILE_STATES = new Set(['file', 'symlink', 'dir', 'absent', 'skipped']);
const PLAN_ACTIONS = new Set(['write', 'symlink', 'mkdir', 'delete']);

/** Where a stored value came from, for error messages (`file`, `line`, `field`). */
export type StoredWhere = Record<string, unknown> & { what?: string };

function corrupt(message: string, where: StoredWhere): CkptError {
  const { what, ...data } = where;
  return new CkptError('LOG_CORRUPT', `${what ? `${what}: ` : ''}${message}`, data);
}

/**
 * True for a normalized workspace-relative path. A backslash is an ordinary name character (POSIX
 * allows it, and ckpt records and restores such names); `/` is the only separator.
 */
export function isStoredPath(path: unknown): path is string {
  if (typeof path !== 'string' || path.length === 0 || path.length > 65_536) return false;
  // String scans rather than a split: the scan index checks every path of a 100k-file tree this way.
  if (path.includes('\0') || path.startsWith('/') || path.endsWith('/') || path.includes('//')) return false;
  if (path === '.' || path === '..' || path.startsWith('./') || path.startsWith('../')) return false;
  return !(path.endsWith('/.') || path.endsWith('/..') || path.includes('/./') || path.includes('/../'));
}

/** What no stored path may hold, in a NUL-joined list with a NUL before the first and after the last. */
const BAD_IN_JOINED = ['\0\0', '\0/', '/\0', '//', '\0.\0', '\0..\0', '\0./', '\0../', '/.\0', '/..\0', '/./', '/../'];

/**
 * True when every path of `paths` — `joined` split at NUL — is a stored path (isStoredPath), checked
 * on the joined text with a dozen native searches instead of a dozen per path: a scan index of a
 * 100,000-file tree is checked this way at every scan. `paths` are the split pieces (for their lengths).
 */
export function allStoredPaths(joined: string, paths: readonly string[]): boolean {
  for (let i = 0; i < paths.length; i++) if ((paths[i] as string).length > 65_536) return false;
  const text = `\0${joined}\0`;
  for (const bad of BAD_IN_JOINED) if (text.includes(bad)) return false;
  return true;
}

/** The path itself, or LOG_CORRUPT naming it. */
export function validateStoredPath(path: unknown, where: StoredWhere = {}): string {
  if (!isStoredPath(path)) throw corrupt(`recorded path ${JSON.stringify(path)} is not a clean workspace-relative path`, { ...where, path });
  return path;
}

export function isBlobId(id: unknown): id is string {
  return typeof id === 'string' && BLOB_ID.test(id);
}

/**
 * A stat mode at most (16 bits: ckpt records `mode & 0o7777`; the type bits are tolerated in what older
 * writers may have kept): anything above was not written by ckpt (a hostile-store probe's 99999999
 * was restored as 0377).
 */
function isMode(mode: unknown): boolean {
  return mode === undefined || (Number.isSafeInteger(mode) && (mode as number) >= 0 && (mode as number) <= 0o177777);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates one recorded image (capture before-image, settle after-state). */
export function validateFileImage(value: unknown, where: StoredWhere = {}): FileImage {
  if (!isObject(value)) throw corrupt('a recorded file is not an object', where);
  validateStoredPath(value.path, where);
  // Where a failure points (built only then: a log decode validates every image of its history).
  const at = (): StoredWhere => ({ ...where, path: value.path });
  if (typeof value.state !== 'string' || !FILE_STATES.has(value.state)) throw corrupt(`unknown state ${JSON.stringify(value.state)}`, at());
  if (value.blob === undefined ? value.state === 'file' : !isBlobId(value.blob)) {
    throw corrupt(value.state === 'file' ? 'file image without a valid blob id' : `invalid blob id ${JSON.stringify(value.blob)}`, at());
  }
  if (value.state === 'symlink' && typeof value.target !== 'string') throw corrupt('symlink image without a target', at());
  validateModeAndNewDirs(value, at);
  return value as unknown as FileImage;
}

/** The fields a file image and a plan entry share: the mode, and how many folders the path brought. */
function validateModeAndNewDirs(value: Record<string, unknown>, at: () => StoredWhere): void {
  if (!isMode(value.mode)) throw corrupt(`invalid mode ${JSON.stringify(value.mode)}`, at());
  if (value.newDirs !== undefined && !(Number.isSafeInteger(value.newDirs) && (value.newDirs as number) >= 0)) {
    throw corrupt(`invalid newDirs ${JSON.stringify(value.newDirs)}`, at());
  }
}

export function validateFileImages(value: unknown, where: StoredWhere = {}): FileImage[] {
  if (!Array.isArray(value)) throw corrupt('`files` is not a list', where);
  for (const f of value) validateFileImage(f, where);
  return value as FileImage[];
}

/** Validates one restore plan entry: the action, its clean path, and what the action needs. */
export function validatePlanEntry(value: unknown, where: StoredWhere = {}): RestorePlanEntry {
  if (!isObject(value)) throw corrupt('a plan entry is not an object', where);
  validateStoredPath(value.path, where);
  const at = (): StoredWhere => ({ ...where, path: value.path });
  if (typeof value.action !== 'string' || !PLAN_ACTIONS.has(value.action)) throw corrupt(`unknown plan action ${JSON.stringify(value.action)}`, at());
  if (value.action === 'write' && !isBlobId(value.blob)) throw corrupt('write entry without a valid blob id', at());
  if (value.action === 'symlink' && typeof value.target !== 'string') throw corrupt('symlink entry without a target', at());
  validateModeAndNewDirs(value, at);
  return value as unknown as RestorePlanEntry;
}

/**
 * Validates a whole restore plan read from the store (a `restore_started` event, or a plan stored in
 * a blob): every entry well-formed, every path clean. Call it on every plan before replaying it.
 */
export function validateRestorePlan(value: unknown, where: StoredWhere = {}): RestorePlanEntry[] {
  if (!Array.isArray(value)) throw corrupt('restore plan is not a list', where);
  for (const entry of value) validatePlanEntry(entry, where);
  return value as RestorePlanEntry[];
}
