// Restore planning (DESIGN §2 "Restore to a tag", "Drift"): which paths a restore to position P
// touches and what it writes there. Pure — no I/O: the caller reads the present images of the
// candidate paths beforehand (hash-only) and hands them in. The returned plan is data: it can be
// printed, dry-run, journaled in `restore_started` and replayed after a crash.
import type { EventBase, FileImage, RestorePlanEntry } from '../format/event.js';
import { imagesAt, matchesFilter } from '../session/positions.js';
import { replay, type ReplayState } from '../session/replay.js';
import { sameImage } from '../workspace/read-image.js';
import { assertRelativePath } from '../workspace/resolve-path.js';

/** One planned change. `newDirs` (deletes): how many ancestor folders did not exist at the target either. */
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
  /** What to write/symlink/delete, deletes first (a write may need a deleted path's folder gone). */
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
export type PresentImage = FileImage;

export interface PlanRestoreInput {
  /** The session's events, or their replay (only `captures` and `known` are used). */
  events: readonly EventBase[] | Pick<ReplayState, 'captures' | 'known'>;
  /** Target position (seq): see session/positions.ts. */
  toSeq: number;
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
  return [...imagesAt(capturesOf(events).captures, toSeq, filter).keys()].filter(isCleanPath);
}

function isCleanPath(path: string): boolean {
  try {
    assertRelativePath(path);
    return true;
  } catch {
    return false;
  }
}

/** The plan entry that puts `image` in place, or undefined when the image cannot be restored. */
export function entryForImage(image: FileImage): PlannedEntry | undefined {
  if (image.state === 'file' && typeof image.blob === 'string') {
    return { path: image.path, action: 'write', blob: image.blob, mode: (image.mode ?? 0o644) & 0o7777 };
  }
  if (image.state === 'symlink' && typeof image.target === 'string') return { path: image.path, action: 'symlink', target: image.target };
  if (image.state === 'absent') return { path: image.path, action: 'delete', ...(image.newDirs ? { newDirs: image.newDirs } : {}) };
  return undefined;
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
  const targets = imagesAt(captures, input.toSeq, input.paths);
  const plan: RestorePlan = { toSeq: input.toSeq, entries: [], unchanged: [], skipped: [], drift: [] };
  for (const [path, target] of targets) {
    if (!isCleanPath(path)) {
      plan.skipped.push({ path, why: WHY.invalidPath });
      continue;
    }
    const entry = entryForImage(target);
    if (!entry) {
      plan.skipped.push({ path, why: `not-recorded: ${target.why ?? target.state}` });
      continue;
    }
    const present = input.present.get(path);
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
  plan.entries.sort((a, b) => Number(b.action === 'delete') - Number(a.action === 'delete'));
  return plan;
}

/** What the plan's entries put in place: the basis of `known` once the restore is committed. */
export function summarizePlan(entries: readonly RestorePlanEntry[]): { restored: string[]; deleted: string[] } {
  return {
    restored: entries.filter((e) => e.action !== 'delete').map((e) => e.path),
    deleted: entries.filter((e) => e.action === 'delete').map((e) => e.path),
  };
}
