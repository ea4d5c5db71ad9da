// A git repository as ckpt sees it, in-process (never by spawning git): the folders of the work tree
// enclosing a path (`.git` folder or a worktree's `.git` file) and git's blob ids. Its object store
// (alternates, loose and packed objects) is git-objects.ts.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { findGitTop } from './ignore-rules.js';
import { readSmallText } from '../small-text.js';

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
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readSmallText(dotGit, { follow: true }) ?? '');
      if (!m?.[1]) return undefined;
      gitdir = resolve(top, m[1]);
    }
  } catch {
    return undefined;
  }
  const common = readSmallText(join(gitdir, 'commondir'), { follow: true })?.trim();
  return { top, gitdir, commondir: common ? resolve(gitdir, common) : gitdir };
}

/** Git's blob id of `data`. */
export function gitBlobId(data: Uint8Array): string {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
}
