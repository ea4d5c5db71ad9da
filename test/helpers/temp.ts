// Temp folders for tests: a fresh store and workspace per test, removed afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDirs {
  base: string;
  store: string;
  workspace: string;
  cleanup(): Promise<void>;
}

export async function makeTempDirs(prefix = 'ckpt-test-'): Promise<TempDirs> {
  const base = await mkdtemp(join(tmpdir(), prefix));
  const { mkdir } = await import('node:fs/promises');
  const store = join(base, 'store');
  const workspace = join(base, 'ws');
  await mkdir(workspace);
  return { base, store, workspace, cleanup: () => rm(base, { recursive: true, force: true }) };
}
