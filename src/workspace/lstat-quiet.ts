// An lstat for "is anything there, and since when": undefined when nothing is there — the name is
// missing, or a folder on its way is now a file (ENOTDIR: a folder replaced by a file by hand).
import { lstatSync, type Stats } from 'node:fs';

export function lstatQuiet(abs: string): Stats | undefined {
  try {
    return lstatSync(abs, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}
