// Git references a scan carries by stat (DESIGN "Scans"): a file whose stat is unchanged keeps the
// git blob id its previous entry referenced, content never read. That blob is safe from `git gc` only
// while git's index names it at that path: once the path leaves the index (`git rm --cached`, `git
// reset HEAD~1` of the commit that added it) the blob may become unreachable and be pruned, and the
// next change of the file found no previous content to copy (a probe: `git reset`, `git gc
// --prune=now`, an edit — the file's content at every earlier prompt lost, though every scan in
// between could have read it). So when git's index changed since the previous scan, each carried
// reference is checked against it, and one it no longer names is read like a changed file: stored
// in ckpt's store, compared by git blob id (same content: nothing recorded).
import { gitIndexStat, loadGitIndex, type GitIndex } from '../workspace/git-index.js';
import { HASH_BYTES, HASH_GIT, HASH_NONE, type ScanIndex } from './scan-index.js';
import type { WalkPhase } from './scan-walk.js';

/**
 * Whether git's index may have changed since `index` was written (the key it recorded; `seen`, git's
 * index as this scan started), or at or after `ms` (that scan's start less the racy margin), or is
 * gone: carried references are checked then. The key catches what an mtime cannot: another
 * repository's index (a nested repository's `.git` removed, the enclosing one's index found instead)
 * or an older copy of `.git` put back (a probe).
 */
export function gitIndexChangedSince(index: ScanIndex, seen: ReturnType<typeof gitIndexStat>, ms: number): boolean {
  return seen === undefined || index.gitIndex !== seen.key || seen.mtimeMs >= ms;
}

/** Whether git's index (`git`; undefined: none ckpt can read) names blob `ids[offset..+20)` at `path`. */
function named(git: GitIndex | undefined, path: string, ids: Uint8Array, offset: number): boolean {
  const j = git ? git.table.slotOf(path) : -1;
  return j >= 0 && git!.table.sameOid(j, ids, offset);
}

/** Turns the carried references git's index no longer names into work items of `phase`. */
export function uncarryGitReferences(root: string, phase: WalkPhase, git: GitIndex | undefined): void {
  const { next, gitCarried } = phase;
  for (let k = 0; k < gitCarried.length; k += 2) {
    const i = gitCarried[k] as number;
    const path = next.paths[i] as string;
    if (named(git, path, next.hash, i * HASH_BYTES)) continue;
    next.hashKind[i] = HASH_NONE;
    phase.work.push(i);
    phase.workPrev.push(gitCarried[k + 1] as number);
    phase.workAbs.push(`${root}/${path}`);
  }
}

/**
 * Per index (the decoded ones a process keeps): the git index key under which all its references were
 * named, or `none` when it holds no reference at all (then git's index is never looked for again).
 */
const checked = new WeakMap<ScanIndex, string>();
const NO_REFERENCES = 'none';

/**
 * Whether git's index names every git reference of `index` (true when it holds none, or when git's
 * index has not changed since `since`): the watched scan, which never reads files it was not told
 * of, runs only then. Remembered per index and git index stat, so a daemon parses git's index once
 * per change of it, and looks for it no more once an index holds no reference.
 */
export function gitReferencesNamed(root: string, index: ScanIndex, since: number): boolean {
  const known = checked.get(index);
  // A plain folder's index (a daemon's every watched scan): no syscall, no loop.
  if (known === NO_REFERENCES) return true;
  const st = gitIndexStat(root);
  // git's index the one the index's scan saw, unchanged since `since` (that scan, less the racy margin): checked then.
  if (st !== undefined && st.key === index.gitIndex && st.mtimeMs < since) return true;
  const key = st?.key;
  if (key !== undefined && known === key) return true;
  let git: GitIndex | undefined;
  let loaded = false;
  for (let i = 0; i < index.count; i++) {
    if (index.hashKind[i] !== HASH_GIT) continue;
    if (!loaded) {
      loaded = true;
      git = st ? loadGitIndex(root) : undefined;
    }
    if (!named(git, index.paths[i] as string, index.hash, i * HASH_BYTES)) return false;
  }
  checked.set(index, loaded ? key! : NO_REFERENCES);
  return true;
}
