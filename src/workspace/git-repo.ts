// A git repository as ckpt sees it, in-process (never by spawning git): the folders of the work tree
// enclosing a path (`.git` folder or a worktree's `.git` file) and its object store (loose and packed,
// through isomorphic-git), from which a scan copies a blob into ckpt's store when the file changed.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { findGitTop, readText } from './ignore-rules.js';

export interface GitDirs {
  top: string;
  gitdir: string;
  commondir: string;
}

/** The git folders of the work tree enclosing `root` (a `.git` folder, or a `.git` file of a worktree). */
export function findGitDirs(root: string): GitDirs | undefined {
  const top = findGitTop(root);
  if (top === undefined) return undefined;
  const dotGit = join(top, '.git');
  let gitdir = dotGit;
  try {
    if (fs.statSync(dotGit).isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readText(dotGit) ?? '');
      if (!m?.[1]) return undefined;
      gitdir = resolve(top, m[1]);
    }
  } catch {
    return undefined;
  }
  const common = readText(join(gitdir, 'commondir'))?.trim();
  return { top, gitdir, commondir: common ? resolve(gitdir, common) : gitdir };
}

/** Git's blob id of `data`. */
export function gitBlobId(data: Uint8Array): string {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
}

/**
 * Reads a blob from git's object store (loose or packed) and verifies it hashes to `oid`; undefined
 * when it is missing, unreadable or does not match.
 */
export async function readGitBlob(objectsGitdir: string, oid: string): Promise<Buffer | undefined> {
  try {
    const git = await import('isomorphic-git');
    const { blob } = await git.readBlob({ fs, gitdir: objectsGitdir, oid });
    const data = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
    return gitBlobId(data) === oid ? data : undefined;
  } catch {
    return undefined;
  }
}
