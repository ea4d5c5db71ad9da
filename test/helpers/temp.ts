// Temp folders for tests: a fresh store and workspace per test, removed afterwards. With
// CKPT_TEST_STORE set (`npm run test:shared`) `store` is instead a fresh shared store URL (its own
// schema and bucket prefix), so the suites built on this run against the shared driver unchanged.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropSharedStore, freshSharedUrl, SHARED_BASE } from './shared-store.js';

/**
 * Retried: work that follows a store's answers (the after-call queue: an inline capture's copy, the
 * pass over sessions left behind) may still write in a store a test did not close, and a folder that
 * gains a file while it is removed fails ENOTEMPTY.
 */
const RM = { recursive: true, force: true, maxRetries: 5, retryDelay: 20 } as const;

export interface TempDirs {
  base: string;
  /** A store folder, or a shared store URL under `npm run test:shared`. */
  store: string;
  workspace: string;
  cleanup(): Promise<void>;
}

export async function makeTempDirs(prefix = 'ckpt-test-'): Promise<TempDirs> {
  const base = await mkdtemp(join(tmpdir(), prefix));
  const { mkdir } = await import('node:fs/promises');
  const workspace = join(base, 'ws');
  await mkdir(workspace);
  if (SHARED_BASE) {
    const store = freshSharedUrl();
    return {
      base,
      store,
      workspace,
      cleanup: async () => {
        await rm(base, RM);
        await dropSharedStore(store);
      },
    };
  }
  const store = join(base, 'store');
  return { base, store, workspace, cleanup: () => rm(base, RM) };
}
