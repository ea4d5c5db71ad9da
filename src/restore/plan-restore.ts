// Restore planning (DESIGN §2 "Restore to a tag", "Drift"): which paths a restore to position P
// touches and what it writes there. Pure — no I/O: the caller reads the present images of the
// candidate paths beforehand (hash-only) and hands them in. The returned plan is data: it can be
// printed, dry-run, journaled in `restore_started` and replayed after a crash.
import type { EventBase, FileImage, RestorePlanEntry } from '../format/event.js';
import { isStoredPath } from '../format/stored-path.js';
import { matchesFilter, restoreImagesAt } from '../session/positions.js';
import { replay, type ReplayState } from '../session/replay.js';
import { sameImage } from '../format/same-image.js';

/**
 * One planned change. `newDirs` (deletes) appears only in plans journaled by older versions: how many
 * ancestor folders to remove once empty (folders are planned as entries of their own now).
 */
export interface PlannedEntry extends RestorePlanEntry {
  newDirs?: number;
}

export interface SkippedPath {
  path: string;
  why: string;
}

export interface RestorePlan {
  /** The position restored to: the state just after the event with this seq. */
  toSeq: number;
  /**
   * What to delete/mkdir/write/symlink, in the order it must happen: deletes deepest first (a folder
   * is emptied before it is removed, and before a file or symlink takes its place), then folders,
   * files and symlinks shallowest first (a folder exists before what goes into it).
   */
  entries: PlannedEntry[];
  /** Candidate paths whose present image already equals the target image. */
  unchanged: string[];
  /** Candidate paths left alone, with the reason; never touched. */
  skipped: SkippedPath[];
  /** Planned paths whose present image differs from what ckpt last recorded for them. */
  drift: string[];
  /**
   * Planned paths whose present content differs from this session's record but is exactly what
   * another session of the workspace last wrote there (a fork's restore, a concurrent agent): ckpt
   * holds that content, so it is not drift; reported so the caller can say whose write it replaces.
   */
  otherSessions?: { path: string; session: string }[];
}

/**
 * A present image as the planner needs it. `state: 'skipped'` covers unreadable, too large, a folder,
 * and a path whose parent chain holds a symlink or a file (`why: 'symlinked-parent'` /
 * `'parent-not-directory'`): nothing can be recovered there, so nothing may be overwritten.
 */
export type PresentImage = FileImage & {
  /** For a blocked parent chain: the outermost ancestor that is a symlink or a file. */
  at?: string;
};

export interface PlanRestoreInput {
  /** The session's events, or their replay (only `captures` and `known` are used). */
  events: readonly EventBase[] | Pick<ReplayState, 'captures' | 'known'>;
  /** Target position (seq): see session/positions.ts. */
  toSeq: number;
  /** The position on a workspace timeline (session/workspace-timeline.ts `timelinePosition`); default `toSeq`. */
  position?: number;
  /** Workspace-relative paths or folders to restrict the restore to (default: every candidate). */
  paths?: readonly string[];
  /** Present images of every candidate path (keyed by path). */
  present: ReadonlyMap<string, PresentImage>;
  /** Latest writes of other sessions of the workspace (owner index), keyed by path. */
  otherWrites?: ReadonlyMap<string, { session: string; image: FileImage }>;
}

/** Why strings for paths the plan leaves alone (stable: printed and returned as JSON). */
export const WHY = {
  notCaptured: 'not-captured-after-tag',
  invalidPath: 'invalid-path',
  symlinkedParent: 'symlinked-parent',
  parentNotDirectory: 'parent-not-directory',
  notRead: 'present-not-read',
} as const;

function capturesOf(events: PlanRestoreInput['events']): Pick<ReplayState, 'captures' | 'known'> {
  return Array.isArray(events) ? replay(events as EventBase[]) : (events as Pick<ReplayState, 'captures' | 'known'>);
}

/** The paths a restore to `toSeq` would consider: those whose present image the caller must read. */
export function candidatePaths(events: PlanRestoreInput['events'], toSeq: number, filter?: readonly string[]): string[] {
  return [...restoreImagesAt(capturesOf(events).captures, toSeq, filter).keys()].filter(isStoredPath);
}

/** The plan entry that puts `image` in place, or undefined when the image cannot be restored. */
export function entryForImage(image: FileImage): PlannedEntry | undefined {
  if (image.state === 'file' && typeof image.blob === 'string') {
    return { path: image.path, action: 'write', blob: image.blob, ...(image.bytes !== undefined ? { bytes: image.bytes } : {}), mode: (image.mode ?? 0o644) & 0o7777 };
  }
  if (image.state === 'symlink' && typeof image.target === 'string') return { path: image.path, action: 'symlink', target: image.target };
  // A folder recorded before folder modes were (issue 26) has none: made with the umask's.
  if (image.state === 'dir') return { path: image.path, action: 'mkdir', ...(image.mode !== undefined ? { mode: image.mode & 0o7777 } : {}) };
  if (image.state === 'absent') return { path: image.path, action: 'delete' };
  return undefined;
}

/** Plan order (see RestorePlan.entries): deletes deepest first, then the rest shallowest first. */
export function comparePlanOrder(a: RestorePlanEntry, b: RestorePlanEntry): number {
  const da = a.action === 'delete';
  const db = b.action === 'delete';
  if (da !== db) return da ? -1 : 1;
  const depth = depthOf(a.path) - depthOf(b.path);
  if (depth !== 0) return da ? -depth : depth;
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

function depthOf(path: string): number {
  let n = 0;
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) n++;
  return n;
}

/** Drift: ckpt recorded an after-state for the path (a settle, a scan, a restore) and the present differs. */
function isDrift(known: FileImage | null | undefined, present: FileImage): boolean {
  if (!known || known.state === 'skipped') return false; // unknown: never drift
  return !sameImage(known, present);
}

/** Same state and content; an owner record without a mode (older writers) says nothing about it. */
function sameContent(recorded: FileImage, present: FileImage): boolean {
  if (recorded.state === 'file' && present.state === 'file' && recorded.mode === undefined) return recorded.blob === present.blob;
  return sameImage(recorded, present);
}

function presentWhy(present: FileImage): string {
  if (present.why === WHY.symlinkedParent || present.why === WHY.parentNotDirectory) return present.why;
  return `present-unrecoverable: ${present.why ?? 'unreadable'}`;
}

export function planRestore(input: PlanRestoreInput): RestorePlan {
  const { captures, known } = capturesOf(input.events);
  const targets = restoreImagesAt(captures, input.position ?? input.toSeq, input.paths);
  const plan: RestorePlan = { toSeq: input.toSeq, entries: [], unchanged: [], skipped: [], drift: [] };
  // A path beneath a file or symlink that this restore replaces by a folder (or removes) holds
  // nothing now: it is planned as absent, and placing it creates its folders once they are free.
  const freed = (at: string | undefined): boolean => {
    if (at === undefined) return false;
    const t = targets.get(at);
    const p = input.present.get(at);
    // An implied folder frees nothing: what stands in its place was never recorded, so it stays.
    return ((t?.state === 'dir' && !t.implied) || t?.state === 'absent') && p !== undefined && (p.state === 'file' || p.state === 'symlink') && isStoredPath(at);
  };
  for (const [path, target] of targets) {
    if (!isStoredPath(path)) {
      plan.skipped.push({ path, why: WHY.invalidPath });
      continue;
    }
    const entry = entryForImage(target);
    if (!entry) {
      plan.skipped.push({ path, why: `not-recorded: ${target.why ?? target.state}` });
      continue;
    }
    let present = input.present.get(path);
    // Beneath a file nothing can exist, nor beneath what was a file or symlink at the target: with an
    // absent target that is already right. Beneath a file or symlink that the plan replaces by a
    // folder (or removes), the path is writable once freed. Beneath a symlink no record explains,
    // nothing is touched (and it is reported).
    if (present?.state === 'skipped' && present.at !== undefined) {
      const atTarget = targets.get(present.at)?.state;
      const nothingThere = present.why === WHY.parentNotDirectory || atTarget === 'file' || atTarget === 'symlink';
      if ((target.state === 'absent' && nothingThere) || freed(present.at)) present = { path, state: 'absent' };
    }
    // A folder only implied by what it held is made where it is missing, and otherwise not planned.
    if (target.implied && present?.state !== 'absent') continue;
    if (!present) {
      plan.skipped.push({ path, why: WHY.notRead });
      continue;
    }
    // Never overwrite what could not go into the recovery capture.
    if (present.state === 'skipped') {
      plan.skipped.push({ path, why: presentWhy(present) });
      continue;
    }
    if (sameImage(present, { ...target, mode: entry.mode })) {
      plan.unchanged.push(path);
      continue;
    }
    plan.entries.push(entry);
    if (isDrift(known.get(path), present)) {
      const other = input.otherWrites?.get(path);
      if (other && sameContent(other.image, present)) (plan.otherSessions ??= []).push({ path, session: other.session });
      else plan.drift.push(path);
    }
  }
  // Paths asked for by name that no capture after the position recorded: reported, never touched.
  for (const f of input.paths ?? []) {
    if (![...targets.keys()].some((p) => matchesFilter(p, [f]))) plan.skipped.push({ path: f, why: WHY.notCaptured });
  }
  plan.entries.sort(comparePlanOrder);
  return plan;
}

/** What the plan's entries put in place: the basis of `known` once the restore is committed. */
export function summarizePlan(entries: readonly RestorePlanEntry[]): { restored: string[]; deleted: string[] } {
  return {
    restored: entries.filter((e) => e.action !== 'delete').map((e) => e.path),
    deleted: entries.filter((e) => e.action === 'delete').map((e) => e.path),
  };
}
