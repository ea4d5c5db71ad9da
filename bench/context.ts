// What every figure gets: the tree, a scratch folder for this run, run counts, progress logging, the
// set of tree files the benchmark edits (put back afterwards), and state shared between figures
// (the store and shadow repository left by the first scan, so later figures need not rebuild them).
import type { Tree } from './gen/tree.js';
import type { RunPlan } from './measure.js';
import type { ShadowRepo } from './baselines/shadow-git.js';
import type { CkptSession, CkptStore, CkptWorkspace } from './ckpt-api.js';

export interface OpenSession {
  store: CkptStore;
  ws: CkptWorkspace;
  session: CkptSession;
  storeDir: string;
}

export interface BenchContext {
  tree: Tree;
  /** Scratch folder of this run (stores, shadow repos, floors); removed at the end. */
  runDir: string;
  /** Expensive operations (whole-tree scans and commits, restores). */
  heavy: RunPlan;
  /** Cheap operations (one-file capture and its floor, stat passes, opening a session). */
  light: RunPlan;
  /** Spawned shadow-git checkpoints of one change (each reads the whole index). */
  gitLight: RunPlan;
  quick: boolean;
  log(msg: string): void;
  /** Tree files the benchmark edits; reset to pristine content before and after the run. */
  mutable: { capture: number; incremental: number; restore: number[] };
  shared: {
    /** The ckpt store + session after the last measured first scan (baseline established). */
    firstScan?: OpenSession;
    /** The shadow repository after its last measured first commit. */
    shadow?: ShadowRepo;
    /** Median of the ckpt first scan, for comparison with the git-aware one. */
    scanFirstMs?: number;
  };
  /** Every store opened by figures, closed at the end. */
  stores: CkptStore[];
}

/** The tree files the benchmark edits: one for capture-one, one for scan-incremental, 1,000 for restore. */
export function pickMutable(files: number): BenchContext['mutable'] {
  const capture = Math.floor(files / 3) + 11;
  const incremental = Math.floor(files / 2) + 37;
  const restore: number[] = [];
  const taken = new Set([capture, incremental]);
  for (let k = 0; k < 1000; k++) {
    let i = (Math.floor((k * files) / 1000) + 5) % files;
    while (taken.has(i)) i = (i + 1) % files;
    taken.add(i);
    restore.push(i);
  }
  return { capture, incremental, restore };
}

export function allMutable(m: BenchContext['mutable']): number[] {
  return [m.capture, m.incremental, ...m.restore];
}
