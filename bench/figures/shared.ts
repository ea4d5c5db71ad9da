// Setup the figures share: the ckpt session with a scan baseline, any ckpt session, and the shadow
// repository with the tree committed. Each is taken from an earlier figure when there is one and
// built (unmeasured) otherwise, so figures can also run alone (`--only`).
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { BenchContext, OpenSession } from '../context.js';
import { initShadow, shadowCheckpoint, type ShadowRepo } from '../baselines/shadow-git.js';
import { scanFirst } from '../ops/scan-first.js';
import { startSession } from '../ops/session.js';

let fresh = 0;

/** A new empty store folder inside the run folder. */
export function newStoreDir(ctx: BenchContext, label: string): string {
  return path.join(ctx.runDir, `store-${label}-${++fresh}`);
}

/** A session whose workspace baseline is established (a first scan has run). */
export async function baselineSession(ctx: BenchContext): Promise<OpenSession> {
  if (ctx.shared.firstScan) return ctx.shared.firstScan;
  ctx.log('  (setup) first scan for a baseline');
  const { open } = await scanFirst(newStoreDir(ctx, 'baseline'), ctx.tree.root);
  ctx.stores.push(open.store);
  ctx.shared.firstScan = open;
  return open;
}

/** Any open session in the benchmark workspace: the baseline one if there is one, else a new one. */
export async function anySession(ctx: BenchContext): Promise<OpenSession> {
  if (ctx.shared.firstScan) return ctx.shared.firstScan;
  const open = await startSession(newStoreDir(ctx, 'main'), ctx.tree.root);
  ctx.stores.push(open.store);
  return open;
}

/** The shadow repository with the whole tree committed. */
export async function shadowRepo(ctx: BenchContext): Promise<ShadowRepo> {
  if (ctx.shared.shadow) return ctx.shared.shadow;
  ctx.log('  (setup) shadow git first commit');
  const repo = await initShadow(path.join(ctx.runDir, 'shadow-main.git'), ctx.tree.root);
  await shadowCheckpoint(repo);
  ctx.shared.shadow = repo;
  return repo;
}

/** Waits for the work `store` queued after its answers (StoreContext.afterCall, when the library has one). */
export async function drainQueued(store: object): Promise<void> {
  await (store as { ctx?: { afterCall?: { drain?(): Promise<void> } } }).ctx?.afterCall?.drain?.();
}

export async function writeRel(ctx: BenchContext, rel: string, data: Uint8Array): Promise<void> {
  await fsp.writeFile(path.join(ctx.tree.root, rel), data);
}

export const fmtMs = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
