// The first content pass over new and changed paths, shared by the full scan (scan.ts) and the watched
// scan (scan-changed.ts) so that both record the same: a symlink takes its target, a file over the
// size cap is skipped, and a file whose previous entry was a git blob that git's index still matches
// (stat and oid) references that blob — only when git's object store really has it. What is left is
// read and stored by the second pass (store-content.ts).
import type { FileImage } from '../format/event.js';
import type { GitIndex } from '../workspace/git-index.js';
import type { GitObjects } from '../workspace/git-objects.js';
import { readLinkTargetSync, TARGET_NOT_UTF8 } from '../workspace/link-target.js';
import { markSkipped, type SkippedList } from './known.js';
import { HASH_BYTES, HASH_GIT, KIND_SKIPPED, KIND_SYMLINK, type ScanIndex } from './scan-index.js';

export interface ContentPassInput {
  next: ScanIndex;
  /** Slots of `next` to look at, with their previous slots (-1: new) and absolute paths. */
  work: readonly number[];
  workPrev: readonly number[];
  workAbs: readonly string[];
  prev: ScanIndex | undefined;
  owners: ReadonlyMap<string, FileImage>;
  maxBytes: number;
  skipped: SkippedList;
  /** Git's index, loaded on first call (undefined: not a git work tree, or git disabled). */
  git: () => GitIndex | undefined;
  /** Git's object store, opened on first call. */
  gitObjects: () => GitObjects | undefined;
}

/**
 * Positions in `work` still to read, how many files now reference git's blobs, and how many files
 * whose previous entry referenced a git blob git's index no longer names there are read (`gitDropped`:
 * git may prune that blob now, so the scan index must be rewritten — else the next scan, trusting
 * the file's stat, takes the old reference again: git-carried.ts).
 */
export function contentPass(input: ContentPassInput): { toRead: number[]; gitReferenced: number; gitDropped: number } {
  const { next, work, workPrev, workAbs, prev, owners, maxBytes, skipped, git, gitObjects } = input;
  let gitReferenced = 0;
  let gitDropped = 0;
  const toRead: number[] = [];
  for (let w = 0; w < work.length; w++) {
    const i = work[w] as number;
    const p = workPrev[w] as number;
    const path = next.paths[i] as string;
    const kind = next.kind[i];
    if (kind === KIND_SKIPPED) continue;
    if (kind === KIND_SYMLINK) {
      try {
        const target = readLinkTargetSync(workAbs[w] as string);
        if (target === undefined) markSkipped(next, i, TARGET_NOT_UTF8, skipped);
        else next.targets.set(i, target);
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
    // Previously the same git blob: reference git again (a baseline matched during the walk). Only at
    // the size the file had then (the blob's): a checkout since may have written it through rules that
    // are gone by now (a branch whose .gitattributes said eol=crlf, left by a checkout that did not
    // rewrite the file), and a converted file is another size — CRLF, an expanded $Id$.
    const wasGit = p >= 0 && prev!.hashKind[p] === HASH_GIT && prev!.size[p] === size && !owners.has(path);
    const gitIndex = wasGit ? git() : undefined;
    let named = false;
    if (gitIndex) {
      const t = gitIndex.table;
      const j = t.slotOf(path);
      named = j >= 0 && t.sameOid(j, prev!.hash, p * HASH_BYTES);
      if (
        named &&
        t.matches(j, size, next.mtime[i] as number, next.ctime[i] as number, next.ino[i] as number, next.mode[i] as number, gitIndex.indexMtimeMs) &&
        // Line endings change the size with the bytes: at the blob's size (the size it was referenced
        // at), the file holds the blob's bytes; filters, encodings and ident may write anything.
        gitIndex.conversion?.(path) !== 'any' &&
        gitObjects()?.has(t.bytes, t.oidAt(j)) === true
      ) {
        next.setHashBytes(i, HASH_GIT, t.bytes, t.oidAt(j), 20);
        gitReferenced++;
        continue;
      }
    }
    if (wasGit && !named) gitDropped++;
    toRead.push(w);
  }
  return { toRead, gitReferenced, gitDropped };
}
