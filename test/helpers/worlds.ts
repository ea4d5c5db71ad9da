// Shared by the test worlds (restore-world, scan-world): file operations beneath a workspace root,
// and a factory wrapper that removes every world a test made once the test is over.
import { mkdir, readFile, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import type { TempDirs } from './temp.js';

export interface FileOps {
  /** Absolute path of a workspace-relative path. */
  at(rel: string): string;
  /** Replaces whatever is at `rel` with a symlink to `target`. */
  link(rel: string, target: string): Promise<void>;
  remove(rel: string): Promise<void>;
  read(rel: string): Promise<string>;
}

export function fileOps(root: string): FileOps {
  const at = (rel: string): string => join(root, rel);
  return {
    at,
    async link(rel, target) {
      await mkdir(dirname(at(rel)), { recursive: true });
      await rm(at(rel), { force: true, recursive: true });
      await symlink(target, at(rel));
    },
    remove: (rel) => rm(at(rel), { force: true, recursive: true }),
    read: (rel) => readFile(at(rel), 'utf8'),
  };
}

/** Wraps a world factory so that every world made in a test is cleaned up after it (call at module level). */
export function useWorlds<W extends { dirs: TempDirs }, O>(make: (options?: O) => Promise<W>): (options?: O) => Promise<W> {
  let worlds: W[] = [];
  afterEach(async () => {
    for (const w of worlds) await w.dirs.cleanup();
    worlds = [];
  });
  return async (options) => {
    const w = await make(options);
    worlds.push(w);
    return w;
  };
}
