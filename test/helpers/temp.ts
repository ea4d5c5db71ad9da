// Temp folders for tests: a fresh store and workspace per test, removed afterwards. With
// CKPT_TEST_STORE set (`npm run test:shared`) `store` is instead a fresh shared store URL (its own
// schema and bucket prefix), so the suites built on this run against the shared driver unchanged.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropSharedStore, freshSharedUrl, SHARED_BASE } from './shared-store.js';

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
        await rm(base, { recursive: true, force: true });
        await dropSharedStore(store);
      },
    };
  }
  const store = join(base, 'store');
  return { base, store, workspace, cleanup: () => rm(base, { recursive: true, force: true }) };
}
