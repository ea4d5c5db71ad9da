// The public shapes of a workspace scan (DESIGN §9 `ckpt scan`): its options and its result.
import type { FileImage } from '../format/event.js';
import type { ScanChangeKind } from './known.js';

export type { ScanChangeKind };

export interface ScanOptions {
  /** Tool name recorded on the capture (default `scan`). */
  tool?: string;
  /** Stop walking after this long; what was not reached is reported and nothing is recorded for it. */
  budgetMs?: number;
  /** Called as file contents are read and stored (the long part of a first scan), for progress bars. */
  onProgress?: (progress: { phase: string; done: number; total: number }) => void;
  /** Extra gitignore-style patterns (relative to the root) for this workspace. */
  ignore?: readonly string[];
  /** Reference git's blobs for files matching git's index (default true). */
  git?: boolean;
  /**
   * `auto` (default): the index is rewritten only when enough changed (a few re-read paths are carried
   * by owner records instead, saving the write of a large index); `always`: rewritten on every scan.
   */
  rewriteIndex?: 'auto' | 'always';
  /** Worker threads listing folders and reading files: 0 none, 1 one (default: one for baselines and trees of 40,000+ entries). */
  threads?: number;
  /**
   * Entries whose inode changed less than this long before the previous scan started are re-read
   * even when their stat matches (default 2 s: covers coarse filesystem timestamps). Tests lower it.
   */
  racyMs?: number;
  /** Take the baseline only: when the workspace already has one, do nothing (no walk, nothing recorded). */
  onlyBaseline?: boolean;
  /**
   * Paths a file watcher saw touched since the last scan (a folder stands for its subtree), asked for
   * once the workspace's scan lock is held; only they are looked at (scan-changed.ts). Undefined from
   * the callback (the watcher lost events), or a set the watched scan cannot take exactly: full scan.
   */
  changedPaths?: () => Promise<ReadonlySet<string> | undefined>;
  /**
   * With `changedPaths`: answer undefined (nothing done, the lock released) instead of running the
   * full scan when the watched one cannot answer exactly — the caller runs the full scan elsewhere.
   */
  watchedOnly?: boolean;
  /**
   * With `changedPaths`: the files ckpt knows directly in these folders ('' the root) are looked at too
   * (a tool capture's look, for folders changed by something else than the agent: a hand removal).
   */
  knownFilesIn?: readonly string[];
  /** With `changedPaths`: paths not looked at (a tool capture's look: the agent's tool calls in flight). */
  leaveOut?: readonly string[];
}


/** One changed path: how it changed and its state now (the settle's after-image). */
export interface ScanChange extends FileImage {
  change: ScanChangeKind;
}

export interface ScanResult {
  /** Tag of the capture (`N.K`), or null when nothing changed (or for the baseline). */
  tag: string | null;
  seq?: number;
  files: ScanChange[];
  /** True for the first scan of the workspace: the baseline was stored, nothing recorded. */
  baseline?: true;
  /** Said loudly when this scan could not record what it was asked to (e.g. it only took the baseline). */
  warning?: string;
  /** The scan index could not be decoded: this scan rebuilt it as a new baseline (changes since the last scan were not recorded). */
  indexRebuilt?: true;
  /** Files and symlinks seen, folders walked. */
  scanned: number;
  dirs: number;
  /** Files read (stat differed or new), and those referenced from git's index without reading. */
  hashed: number;
  gitReferenced: number;
  /** Blobs newly written to the store. */
  stored: number;
  /** Files seen that ckpt cannot record (over the size cap, unreadable), and unreadable folders. */
  skipped: { path: string; why: string; bytes?: number }[];
  /** Set when the time budget ran out: `pending` folders were not walked and nothing was recorded for them. */
  truncated?: true;
  pending?: string[];
  ms: number;
  /** Set when capture is switched off (CKPT_DISABLE): nothing was scanned. */
  disabled?: true;
  /**
   * Problems the user must hear about: previous content that was lost (a changed file whose before-image
   * lived only in git's object store and is gone), unusable git alternates, and cache writes (scan
   * index, owner index, metadata) that failed after the changes were recorded.
   */
  warnings?: string[];
  /** Set when only watcher-reported paths were looked at: how many (`scanned` counts their files). */
  watched?: number;
}
