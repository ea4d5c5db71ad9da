// What keeps a filesystem store private and inside itself (issue 27, items 1 and 7): the modes of its
// files and folders, the walk that refuses a symlink (or anything but a folder) planted on the way to
// a key, and the one-time tightening of a store an older ckpt left readable by other users.
//
// Why: the store holds copies of whatever an agent touched (`.env`, keys, prompts). Files are 0600
// and folders 0700 whatever the umask (a umask can only make a mode stricter: owner bits stay, since
// ckpt must read and write them back). A symlink at `blobs/<xx>` or `workspaces/<wid>` would make a
// write land outside the store (or a read come from elsewhere); only the store root itself may be a
// symlink (a user's choice of where the store lives).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CkptError } from '../../errors.js';
import { errnoOf, fsyncDir } from './fs-io.js';

/** Every file the store writes: owner read/write only. */
export const STORE_FILE_MODE = 0o600;
/** Every folder the store makes: owner only. */
export const STORE_DIR_MODE = 0o700;

function notAFolder(root: string, at: string, what: string): CkptError {
  const rel = path.relative(root, at).split(path.sep).join('/');
  return new CkptError('FORBIDDEN', `refusing store folder ${rel}: ${what} (a store never follows links below its root)`, { key: rel });
}

/** A symlink is refused as FORBIDDEN; a file where a folder should be fails as the OS would (ENOTDIR: IO). */
function notFolder(root: string, at: string, st: fs.Stats): Error {
  if (st.isSymbolicLink()) return notAFolder(root, at, 'a symlink');
  return Object.assign(new Error(`ENOTDIR: not a directory, ${at}`), { code: 'ENOTDIR', syscall: 'mkdir', path: at });
}

/**
 * Checks that every folder from below `root` down to `dir` is a real folder (lstat: a symlink is
 * refused with FORBIDDEN, never followed). With `create`, missing folders are made (mode 0700) and
 * their parents fsynced; without it, a missing folder ends the walk (nothing below it exists).
 * Returns true when `dir` exists as a folder afterwards.
 */
export function walkStoreDirs(root: string, dir: string, create: boolean): boolean {
  if (create && !fs.statSync(root, { throwIfNoEntry: false })) fs.mkdirSync(root, { recursive: true, mode: STORE_DIR_MODE });
  if (dir === root) return true;
  const chain = foldersBelow(root, dir);
  for (let i = 0; i < chain.length; i++) {
    const at = chain[i]!;
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (st?.isDirectory()) continue;
    if (st) throw notFolder(root, at, st);
    if (!create) return false;
    try {
      fs.mkdirSync(at, STORE_DIR_MODE);
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw err;
      // Made by another process meanwhile: look again (it may be a planted link).
      const again = fs.lstatSync(at);
      if (!again.isDirectory()) throw notFolder(root, at, again);
      continue;
    }
    fsyncDir(i === 0 ? root : chain[i - 1]!);
  }
  return true;
}

/** Bound of the cache of folder chains (cleared when full). */
const MAX_CHAINS = 4096;
/** Folder chains worked out before, by root and folder: pure string work, redone on every append and write otherwise. */
const chains = new Map<string, readonly string[]>();

/** The folders from below `root` down to `dir`, outermost first (FORBIDDEN for a `dir` not below `root`). */
function foldersBelow(root: string, dir: string): readonly string[] {
  const key = `${root}\0${dir}`;
  let chain = chains.get(key);
  if (chain === undefined) {
    const rel = path.relative(root, dir);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) throw notAFolder(root, dir, 'outside the store');
    const out: string[] = [];
    let at = root;
    for (const segment of rel.split(path.sep)) out.push((at = path.join(at, segment)));
    if (chains.size >= MAX_CHAINS) chains.clear();
    chains.set(key, (chain = out));
  }
  return chain;
}

/** What `tightenStore` did: how many files and folders lost group/other permission bits. */
export interface TightenResult {
  tightened: number;
}

/**
 * Removes group and other permission bits from the store root and everything below it (symlinks are
 * not followed, and a symlink's own mode means nothing). Cheap when nothing is loose: the root's mode
 * is the marker (a store this ckpt made is 0700), so a private store costs one stat per open.
 */
export function tightenStore(root: string): TightenResult {
  const rootSt = fs.statSync(root);
  if ((rootSt.mode & 0o077) === 0) return { tightened: 0 };
  let tightened = 0;
  const fix = (abs: string, st: fs.Stats): void => {
    if ((st.mode & 0o077) === 0) return;
    try {
      fs.chmodSync(abs, st.mode & 0o7700);
      tightened++;
    } catch (err) {
      // Removed meanwhile (a temp file, a lock): nothing left to protect.
      if (errnoOf(err) !== 'ENOENT') throw err;
    }
  };
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const abs = path.join(dir, e.name);
      const st = fs.lstatSync(abs, { throwIfNoEntry: false });
      if (!st || st.isSymbolicLink()) continue;
      fix(abs, st);
      if (st.isDirectory()) walk(abs);
    }
  };
  walk(root);
  // The root last: it is the marker that the walk finished.
  fix(root, rootSt);
  return { tightened };
}
