// File-tree operations the model property tests apply to a workspace (restore-model,
// restore-flush-model): an lstat that says "nothing there", and clearing a path for a new entry.
import type { Stats } from 'node:fs';
import { lstat, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** lstat, or undefined when nothing is there (ENOENT, or ENOTDIR beneath a file). */
export function lstatOf(abs: string): Promise<Stats | undefined> {
  return lstat(abs).catch(() => undefined);
}

/** Replaces whatever is at `rel` — and any file or symlink where one of its folders goes — by nothing. */
export async function clear(root: string, rel: string): Promise<void> {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = join(root, ...parts.slice(0, i));
    const info = await lstatOf(dir);
    if (info && !info.isDirectory()) await rm(dir, { force: true });
  }
  await mkdir(dirname(join(root, rel)), { recursive: true });
  await rm(join(root, rel), { recursive: true, force: true });
}
