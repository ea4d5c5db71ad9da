// Runs a ckpt command in a child with the flush seam (flush-seam.ts) preloaded, and reads its report.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runReporting, seamModule, type Run } from './fault-harness.js';
import type { FlushSeamConfig, FlushSeamReport } from './flush-seam.js';

const preloadFlushSeam = seamModule(fileURLToPath(new URL('./flush-seam.ts', import.meta.url)));

/** `ckpt --json … ARGS` on `dirs` with the seam configured by `seam` (its fault config filled in). */
export async function runWithFlushSeam(dirs: { store: string; workspace: string }, args: string[], seam: Omit<FlushSeamConfig, 'fault'> = {}): Promise<Run<FlushSeamReport>> {
  const module = await preloadFlushSeam();
  const report = join(dirs.store, '..', `seam-${Math.random().toString(36).slice(2)}.json`);
  const config: FlushSeamConfig = { ...seam, fault: { store: dirs.store, workspace: dirs.workspace, report } };
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CKPT_FLUSH_SEAM: JSON.stringify(config), NODE_OPTIONS: `--import=${module}` };
  delete env.CKPT_HOME;
  delete env.CKPT_FAULT;
  return runReporting<FlushSeamReport>(dirs.store, dirs.workspace, args, env, report);
}
