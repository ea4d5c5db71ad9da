// Shared by the test worlds (restore-world, scan-world): the store + workspace + session they are
// built on, file operations beneath a workspace root, and a factory wrapper that removes every world a
// test made once the test is over.
import { mkdir, readFile, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import type { Session } from '../../src/api/session.js';
import { openStore, type Store, type Workspace } from '../../src/store.js';
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

/** What every world has: a store, the workspace at `dirs.workspace`, a new session, and file operations. */
export interface BaseWorld extends FileOps {
  dirs: TempDirs;
  store: Store;
  ws: Workspace;
  session: Session;
  root: string;
}

export interface BaseWorldOptions {
  /** The store (default `dirs.store`). */
  storeDir?: string;
  maxBlobBytes?: number;
  title: string;
  /** false: the session is made without a scan baseline (the test takes it). */
  baseline?: false;
}

/** Opens the store and workspace of `dirs` and makes a session; `dirs.cleanup` closes the store first. */
export async function openBaseWorld(dirs: TempDirs, options: BaseWorldOptions): Promise<BaseWorld> {
  const store = await openStore({ dir: options.storeDir ?? dirs.store, ...(options.maxBlobBytes ? { maxBlobBytes: options.maxBlobBytes } : {}) });
  // Closing the store releases a shared store's connections before its schema is dropped.
  const removeDirs = dirs.cleanup;
  dirs.cleanup = async () => {
    await store.close();
    await removeDirs();
  };
  const ws = await store.openWorkspace(dirs.workspace);
  const session = await ws.create({ title: options.title, ...(options.baseline === false ? { baseline: false } : {}) });
  return { ...fileOps(ws.root), dirs, store, ws, session, root: ws.root };
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
