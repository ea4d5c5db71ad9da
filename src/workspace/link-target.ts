// A symlink's target as text, only when it is valid UTF-8: Node's default decoding turns invalid
// bytes into U+FFFD, so `tgt\xff` was recorded — and restored — as another target, and two such
// targets read the same (a probe found both). Undefined then: the link is skipped, never changed.
// Also the file a named symlink leads to, which a tool writing through the link changes (DESIGN §10).
import { lstatSync, readlinkSync } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { resolveBeneath, type ResolvedPath } from './resolve-path.js';
import { folderChain, lstatQuiet } from './changed-at.js';

/** Why such a link is skipped. */
export const TARGET_NOT_UTF8 = 'target-not-utf8';

const strict = new TextDecoder('utf-8', { fatal: true });

function decode(bytes: Buffer): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

export async function readLinkTarget(abs: string): Promise<string | undefined> {
  return decode(await readlink(abs, { encoding: 'buffer' }));
}

export function readLinkTargetSync(abs: string): string | undefined {
  return decode(readlinkSync(abs, { encoding: 'buffer' }));
}

/** The file a symlink at `abs` leads to, when it lies inside the workspace (a dangling link: what a write would create). */
export async function linkedFile(root: string, abs: string): Promise<ResolvedPath | undefined> {
  try {
    // Synchronous: on every capture's path, and most named paths are no links (a thread-pool hop costs more).
    if (!lstatSync(abs, { throwIfNoEntry: false })?.isSymbolicLink()) return undefined;
    // As bytes: a name that is not UTF-8 has no recorded path (a string would name another file).
    const real = await realpath(abs, { encoding: 'buffer' }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      return danglingEnd(abs);
    });
    if (!real || !isUtf8(real)) return undefined;
    if ((await lstat(real).catch(() => undefined))?.isDirectory()) return undefined;
    return await resolveBeneath(root, real.toString(), root);
  } catch {
    // Gone, unreadable, a loop, or outside the workspace: the link alone is recorded, as before.
    return undefined;
  }
}

/** Links followed at most for a dangling chain (the kernel's own limit for one path's resolution). */
const MAX_LINK_HOPS = 40;

/** Where a chain of links that ends nowhere ends: the missing name a write through it creates (Gemini probe: `a -> b -> c`, c missing). */
async function danglingEnd(abs: string): Promise<Buffer | undefined> {
  let cur = abs;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    if (!lstatQuiet(cur)?.isSymbolicLink()) return Buffer.from(cur);
    const target = await readLinkTarget(cur);
    if (target === undefined) return undefined;
    cur = resolve(dirname(cur), target);
  }
  return undefined; // a loop
}

/**
 * The file a link recorded as `linkRel -> target` leads to, followed from its first hop as the
 * folders are now — for a link that is gone since (a tool replaced it with a file): undefined when
 * that is outside the workspace, a folder or unreadable.
 */
export async function recordedLinkTarget(root: string, linkRel: string, target: string): Promise<ResolvedPath | undefined> {
  const first = resolve(root, dirname(linkRel), target);
  // Quiet: a folder of the target may be a file now (ENOTDIR; the restore model test: `c -> a/x`, `a` a file).
  if (lstatQuiet(first)?.isSymbolicLink()) return linkedFile(root, first);
  try {
    if ((await lstat(first).catch(() => undefined))?.isDirectory()) return undefined;
    return await resolveBeneath(root, first, root);
  } catch {
    return undefined;
  }
}

/**
 * The first folder of `input`'s path (as named, beneath `root`) that is a symlink now, when `resolved`
 * (where the name leads) differs from the name: a folder replaced by a link by hand during a turn, then
 * written through by a tool (`rm -r lib; ln -s tgt lib`, then a Write of `lib/x`). Recorded with the
 * tool's paths, the capture's look sees that change first — else it was placed after the capture, and
 * `restore N.K` gave the folder back (a real-Claude probe, 2026-12-07).
 */
export function linkOnTheWay(root: string, input: string, cwd: string, resolved: string): ResolvedPath | undefined {
  const named = relative(root, resolve(cwd, input));
  if (named === '' || named.startsWith('..') || isAbsolute(named)) return undefined;
  const rel = named.split(sep).join('/');
  if (rel === resolved) return undefined;
  // The walk the looks take (changed-at.ts): it ends at the first folder that is no folder.
  const end = folderChain(root, rel).at(-1)!;
  return end.dir !== '' && end.st !== 'unknown' && end.st?.isSymbolicLink() ? { rel: end.dir, abs: join(root, end.dir) } : undefined;
}
