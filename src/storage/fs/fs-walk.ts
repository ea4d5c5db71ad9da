// Recursive listings of a folder of the store for the filesystem driver: its regular files (`list`,
// leftovers: the caller chooses which folders to enter and which names to keep) and its symlinks (verify).
import type { Dirent } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { toCkptError } from '../../errors.js';

const isMissing = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException | undefined)?.code ?? '');

/** A folder's entries (file types from the listing); a missing folder has none. */
async function entriesOf(dir: string): Promise<Dirent[]> {
  try {
    return await fsp.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (isMissing(err)) return [];
    throw toCkptError(err, `list ${dir}`);
  }
}

/** Absolute paths of the regular files under `dir` whose names `keep` accepts; missing `dir` lists nothing. */
export async function walkFiles(dir: string, keep: (name: string) => boolean, enter: (name: string) => boolean, out: string[] = []): Promise<string[]> {
  for (const e of await entriesOf(dir)) {
    const abs = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (enter(e.name)) await walkFiles(abs, keep, enter, out);
    } else if (e.isFile() && keep(e.name)) out.push(abs);
  }
  return out;
}

/** Absolute paths of every symlink under `dir` (none entered); missing `dir` lists nothing. */
export async function walkLinks(dir: string, out: string[] = []): Promise<string[]> {
  for (const e of await entriesOf(dir)) {
    const abs = path.join(dir, e.name);
    if (e.isSymbolicLink()) out.push(abs);
    else if (e.isDirectory()) await walkLinks(abs, out);
  }
  return out;
}
