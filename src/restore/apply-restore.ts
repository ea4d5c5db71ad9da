// The journaled apply of a restore plan (DESIGN §4), run inside the session's transaction:
//   drift gate → the present content of every planned path stored, and every blob the plan writes
//   read, at once (a corrupt blob fails with nothing recorded or changed) → recovery capture (tool
//   `restore`, carrying `restoreId`) → `restore_started` (the point of no return) → place (write
//   beside and rename, unlink, symlink; file and folder fsyncs, emptied folders removed) →
//   `restore_committed`.
// A crash before `restore_started` is undone on the next open, one after it is finished (recover.ts).
import { randomBytes } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { CkptError } from '../errors.js';
import { OUTSIDE_TOOL, type CaptureEvent, type EventBase, type FileImage, type NewEvent } from '../format/event.js';
import { nextCaptureEvent, readImages } from '../capture/capture.js';
import type { SessionHandle } from '../session/session-handle.js';
import { afterCommit } from '../session/warnings.js';
import { imageOfPlanEntry, replay, type ReplayState } from '../session/replay.js';
import { planFields, resultFields } from '../session/restore-plans.js';
import { recordOwnership } from '../capture/owner-index.js';
import type { EventLogTx } from '../storage/event-log.js';
import { sameImage } from '../format/same-image.js';
import { placeEntries } from './place.js';
import { seenOf, type SeenFile } from './place-guard.js';
import { lstatQuiet } from '../workspace/changed-at.js';
import { checkParentChainsSync, mapLimit } from './present.js';
import { summarizePlan, type PlannedEntry, type PresentImage, type RestorePlan, type SkippedPath } from './plan-restore.js';
import { missingPlanContent, readPlanContent, type ContentSource } from './plan-content.js';
import type { KeptContent } from './kept-content.js';
import { inlineRecords } from '../format/inline-blobs.js';
import { pathText } from '../format/path-text.js';
import { spillInline } from '../storage/inline-store.js';
import type { OutsideLook } from '../scan/look-outside.js';

/** The result of a restore (DESIGN §9), plus `unchanged` and, for a dry run, the plan. */
export interface RestoreResult {
  to: string;
  restored: string[];
  deleted: string[];
  skipped: SkippedPath[];
  drift: string[];
  /** Tag of the recovery capture: restoring to it undoes this restore. Null when nothing changed. */
  undo: string | null;
  unchanged: string[];
  dryRun?: true;
  /**
   * A dry run only: the real run would refuse with this code — DRIFT: these paths drifted (`force`
   * overrides); BLOB_NOT_FOUND: the store lacks the content these paths would be written from;
   * TAG_PRUNED: another session's retention retired what these paths held at the tag.
   */
  wouldRefuse?: { code: 'DRIFT' | 'BLOB_NOT_FOUND' | 'TAG_PRUNED'; paths: string[] };
  plan?: RestorePlan;
  /** The restore's id in the log (`restore_started` / `restore_committed`). */
  id?: string;
  /** Planned paths holding another session's last write (not drift: see RestorePlan.otherSessions). */
  otherSessions?: { path: string; session: string }[];
  /** What failed after the restore was committed (cache writes, the closing record); it happened. */
  warnings?: string[];
}

export interface ApplyRestoreOptions {
  /** The tag restored to, as the user wrote it (recorded and returned). */
  to: string;
  plan: RestorePlan;
  /** The present images the plan was made from (hash-only). */
  present: ReadonlyMap<string, PresentImage>;
  /** Present bytes read for the plan: the recovery capture takes those still current instead of reading again. */
  kept?: KeptContent;
  force?: boolean;
  dryRun?: boolean;
  /** Reason recorded on the recovery capture, e.g. `restore to 3`. */
  reason: string;
  /** Called as the plan's content is read and as entries are placed (a big restore's long parts), for progress bars. */
  onProgress?: (progress: { phase: string; done: number; total: number }) => void;
  /** Where failures after the point of no return go (the restore happened: they are not its error). */
  warnings?: string[];
  /** Other sessions' events the plan took images from (their inline content is spilled like this session's). */
  sources?: readonly EventBase[];
  /** What changed outside the agent (planned as the latest capture): recorded before the recovery capture. */
  look?: OutsideLook;
}

const RECOVERY_SLICE = 32;
/** From this many planned paths on, the recovery capture's content goes into one pack. */
const RECOVERY_PACK_MIN = 64;

export function driftError(to: string, drift: readonly string[]): CkptError {
  const shown = drift.slice(0, 5).map(pathText).join(', ') + (drift.length > 5 ? `, … (${drift.length} in all)` : '');
  return new CkptError(
    'DRIFT',
    `restore to ${to} would overwrite ${drift.length} path(s) changed since ckpt last recorded them: ${shown}. Nothing was changed; use --force to restore anyway (their present content is kept in the recovery capture)`,
    { to, drift: [...drift] },
  );
}

function others(plan: RestorePlan): Pick<RestoreResult, 'otherSessions'> {
  return plan.otherSessions?.length ? { otherSessions: [...plan.otherSessions] } : {};
}

function baseResult(options: ApplyRestoreOptions, entries: readonly PlannedEntry[], skipped: SkippedPath[], drift: string[]): RestoreResult {
  return { to: options.to, ...summarizePlan(entries), skipped, drift, undo: null, unchanged: [...options.plan.unchanged], ...others(options.plan) };
}

/**
 * readImages over slices in parallel. Many paths go into one pack (one fsync for all, durable at its
 * commit, before the capture that references them is appended); a few become loose blobs. A path
 * beneath a file or symlink (which this restore replaces) holds nothing: it is recorded absent, never
 * read through the symlink. A file whose bytes the plan kept and that is unchanged since is stored
 * from them, not read again.
 */
async function readRecoveryImages(
  session: SessionHandle,
  entries: readonly PlannedEntry[],
  kept?: KeptContent,
  present?: ReadonlyMap<string, PresentImage>,
  /** Filled with what each path held when read (place-guard.ts). */
  seen?: Map<string, SeenFile | null>,
): Promise<FileImage[]> {
  const slices: PlannedEntry[][] = [];
  for (let i = 0; i < entries.length; i += RECOVERY_SLICE) slices.push(entries.slice(i, i + RECOVERY_SLICE));
  const root = session.workspaceRoot;
  // Compressed on this thread: worker start-up would cost more than a restore's worth of brotli level 0.
  const writer = entries.length >= RECOVERY_PACK_MIN ? session.ctx.blobs.createPackWriter({ threads: 0 }) : undefined;
  const sink = writer ? { put: (data: Uint8Array) => writer.add(data) } : undefined;
  // Kept bytes were hashed by the plan's read (the present image's blob id is their sha256): into a
  // pack, content the store already holds is only freshened, as the writer would after hashing again.
  const storeKept = async (data: Buffer, image: PresentImage | undefined): Promise<string> => {
    const id = image?.state === 'file' && image.bytes === data.length ? image.blob : undefined;
    if (writer && id && (await session.ctx.blobs.freshen(id, 'throttled'))) return id;
    return (await (sink ?? session.ctx.blobs).put(data)).id;
  };
  try {
    const images = await mapLimit(slices, 8, async (slice) => {
      // The parent chain is checked again (it may have changed since the plan): content reached
      // through a symlinked folder is never read into the store. The slice's chains in one run, each
      // folder once (present.ts checkParentChainsSync): the reads all come after the last check.
      const chains = checkParentChainsSync(root, slice.map((e) => e.path));
      const byPath = new Map<string, FileImage>();
      const unread: PlannedEntry[] = [];
      for (const [k, e] of slice.entries()) {
        if (!chains[k]!.ok) continue;
        const file = kept?.take(e.path, join(root, e.path));
        if (!file) {
          unread.push(e);
          // Before the read: a change after this lstat is a difference when placing, never missed.
          const was = seenOf(lstatQuiet(join(root, e.path)));
          if (was !== undefined) seen?.set(e.path, was);
        } else {
          seen?.set(e.path, seenOf(file.info)!);
          byPath.set(e.path, { path: e.path, state: 'file', blob: await storeKept(file.data, present?.get(e.path)), bytes: file.data.length, mode: file.mode });
        }
      }
      const read = await readImages(session, unread.map((e) => ({ rel: e.path, abs: join(root, e.path) })), sink);
      for (const img of read) byPath.set(img.path, img);
      return slice.map((e, k): FileImage => (chains[k]!.ok ? (byPath.get(e.path) ?? { path: e.path, state: 'absent' }) : { path: e.path, state: 'absent' }));
    });
    await writer?.commit();
    return images.flat();
  } catch (err) {
    await writer?.abort();
    throw err;
  }
}

/** Both results once both have settled (nothing is left running); the first one's failure first. */
async function settleBoth<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === 'rejected') throw ra.reason;
  if (rb.status === 'rejected') throw rb.reason;
  return [ra.value, rb.value];
}

/**
 * A folder the plan only implied (no mode recorded: a parent of a recorded file) is owned with the
 * mode it has now, as a scan finds it: the next scan's record of the folder then does not depend on
 * whether it compares against this owner record or a newer scan index (found by the restore model test).
 */
function withFolderMode(root: string, image: FileImage): FileImage {
  if (image.state !== 'dir' || image.mode !== undefined) return image;
  const info = lstatSync(join(root, image.path), { throwIfNoEntry: false });
  return info?.isDirectory() ? { ...image, mode: info.mode & 0o7777 } : image;
}

/** The present image the plan was made from; a blocked chain the plan frees counts as absent. */
function plannedPresent(present: ReadonlyMap<string, PresentImage>, path: string): FileImage | undefined {
  const p = present.get(path);
  return p?.state === 'skipped' && p.at !== undefined ? { path, state: 'absent' } : p;
}

/**
 * What the real run would refuse with, checked in its order: drift first (unless forced), then the
 * content it writes (a missing blob fails it BLOB_NOT_FOUND before anything changes).
 */
async function dryRunRefusal(session: SessionHandle, tx: EventLogTx, options: ApplyRestoreOptions): Promise<RestoreResult['wouldRefuse']> {
  const { plan } = options;
  const retired = retiredElsewhere(plan.skipped);
  if (retired.length > 0) return { code: 'TAG_PRUNED', paths: retired.map((s) => s.path) };
  if (plan.drift.length > 0 && !options.force) return { code: 'DRIFT', paths: [...plan.drift] };
  if (!plan.entries.some((e) => e.action === 'write')) return undefined;
  const inline = inlineRecords([...(await tx.read()), ...(options.sources ?? [])]);
  const missing = await missingPlanContent(session.ctx.blobs, plan.entries, inline);
  return missing.length > 0 ? { code: 'BLOB_NOT_FOUND', paths: missing } : undefined;
}

export async function applyRestore(session: SessionHandle, tx: EventLogTx, options: ApplyRestoreOptions): Promise<RestoreResult> {
  const { plan } = options;
  const root = session.workspaceRoot;
  if (options.dryRun) {
    const wouldRefuse = await dryRunRefusal(session, tx, options);
    return { ...baseResult(options, plan.entries, [...plan.skipped], [...plan.drift]), dryRun: true, ...(wouldRefuse ? { wouldRefuse } : {}), plan };
  }
  const retired = retiredElsewhere(plan.skipped);
  if (retired.length > 0) throw retiredError(options.to, retired);
  if (plan.drift.length > 0 && !options.force) throw driftError(options.to, plan.drift);
  if (plan.entries.length === 0) return nothingToPlace(session, tx, options, [...plan.skipped], [...plan.drift]);

  const { blobs } = session.ctx;
  const events = await tx.read();
  // The plan names blobs that reading its content — and recovery after a crash — take from the blob
  // store: a capture's inline content is copied there first (format/inline-blobs.ts).
  await spillInline(blobs, inlineRecords([...events, ...(options.sources ?? [])]), plan.entries.map((e) => e.blob));
  // The recovery capture's content (the present content of every planned path, stored durably before
  // any change) and the plan's, read at once: a blob that cannot be read fails with nothing recorded.
  const seen = new Map<string, SeenFile | null>();
  const [recovery, planContent] = await settleBoth(readRecoveryImages(session, plan.entries, options.kept, options.present, seen), readPlanContent(blobs, plan.entries, options.onProgress));
  const entries: PlannedEntry[] = [];
  const inPlan: number[] = [];
  const skipped = [...plan.skipped];
  const drift = [...plan.drift];
  const changedMeanwhile: string[] = [];
  plan.entries.forEach((entry, i) => {
    const now = recovery[i]!;
    if (now.state === 'skipped') {
      skipped.push({ path: entry.path, why: `present-unrecoverable: ${now.why ?? 'unreadable'}` });
      return;
    }
    if (!sameImage(now, plannedPresent(options.present, entry.path))) {
      changedMeanwhile.push(entry.path);
      if (!drift.includes(entry.path)) drift.push(entry.path);
    }
    entries.push(entry);
    inPlan.push(i);
  });
  if (changedMeanwhile.length > 0 && !options.force) throw driftError(options.to, changedMeanwhile);
  if (entries.length === 0) return nothingToPlace(session, tx, options, skipped, drift);
  const recoveryImages = recovery.filter((r) => r.state !== 'skipped');

  const id = randomBytes(8).toString('hex');
  const state = replay(events);
  const lookEvents = await lookEventsOf(state, options.look);
  const captureEvent = nextCaptureEvent({ turn: state.turn, nextK: state.nextK + (lookEvents.length > 0 ? 1 : 0) }, recoveryImages, { tool: 'restore', reason: options.reason, extra: { restoreId: id } });
  const stored = (await tx.append([...lookEvents, captureEvent])).at(-1) as CaptureEvent;
  await ownLeftAsTheyAre(session, options, new Set(entries.map((e) => e.path)));
  const undo = stored.tag;
  const content: ContentSource = (i) => planContent(inPlan[i]!);

  // The point of no return: from here on, a crash is finished from this plan on the next open.
  // A big plan goes into a blob (durable before this line is appended), referenced by id.
  await tx.append([{ type: 'restore_started', id, to: options.to, recovery: undo, ...(await planFields(session.ctx.blobs, entries)) }]);
  const placed = await placeEntries(root, id, entries, content, options.onProgress, seen);
  const result: RestoreResult = {
    to: options.to,
    restored: placed.restored,
    deleted: placed.deleted,
    skipped: [...skipped, ...placed.skipped],
    drift,
    undo,
    unchanged: [...plan.unchanged],
    ...others(plan),
    id,
  };
  const { unchanged, ...recorded } = result;
  // Past the point of no return the workspace is restored whatever happens next: a failure to write
  // the closing record (disk full) is a warning — recovery writes it when the session is next opened.
  await afterCommit(options.warnings, 'restore done, but its commit record was not written (recovery will write it)', async () =>
    tx.append([{ type: 'restore_committed', id, result: await resultFields(session.ctx.blobs, { ...recorded, unchanged: unchanged.length }) }]),
  );
  // Paths the restore could not place (a read-only folder, an unreadable blob) are as the recovery
  // capture read them: said so in a settle after the commit, else ckpt would take them for placed
  // (their next restore "unchanged", drift where nothing changed: found by a probe).
  const notPlaced = new Set(placed.skipped.filter((s) => !s.why.endsWith('(folder mode)')).map((s) => s.path));
  const asTheyAre = stored.files.filter((f) => notPlaced.has(f.path));
  if (asTheyAre.length > 0) await afterCommit(options.warnings, 'paths the restore skipped not recorded', () => tx.append([{ type: 'settle', tag: undo, files: asTheyAre }]));
  await recordRestored(session, entries, placed, options.warnings);
  return result;
}

/**
 * The look's record (DESIGN §10 "A restore looks first"), first in the restore's append, as a turn's
 * scan would have made it: a capture whose before-images are what ckpt last knew (a later restore to a
 * tag before now puts that back) — all looked paths, also those a path filter left out (else a later
 * restore never learns of the folders they brought) — and its settle (the present): else this session
 * would hold the paths the restore leaves as they are for captured and never settled, and a later hand
 * edit of them during a turn would not be looked at (found by the hook property test).
 */
async function lookEventsOf(state: Pick<ReplayState, 'turn' | 'nextK'>, look: OutsideLook | undefined): Promise<NewEvent[]> {
  if (!look) return [];
  await look.commit();
  const capture = nextCaptureEvent(state, look.before, { tool: OUTSIDE_TOOL, reason: 'changed outside the agent before a restore' });
  return [capture, { type: 'settle', tag: capture.tag, files: look.after }];
}

/** Looked paths the restore does not change are owned as they are now, so the next look (an undo's) does not find them changed again. */
async function ownLeftAsTheyAre(session: SessionHandle, options: ApplyRestoreOptions, planned: ReadonlySet<string>): Promise<void> {
  const left = options.look?.after.filter((image) => !planned.has(image.path) && image.state !== 'skipped') ?? [];
  if (left.length > 0) await afterCommit(options.warnings, 'owner index not updated', () => recordOwnership(session, left));
}

/**
 * A restore with nothing to place: still, what its look found is recorded (found by a preview probe:
 * a hand deletion of a path already as at the tag stayed in `status`, and the next scan recorded it
 * after the restore).
 */
async function nothingToPlace(session: SessionHandle, tx: EventLogTx, options: ApplyRestoreOptions, skipped: SkippedPath[], drift: string[]): Promise<RestoreResult> {
  if (options.look) {
    await tx.append(await lookEventsOf(replay(await tx.read()), options.look));
    await ownLeftAsTheyAre(session, options, new Set());
  }
  return baseResult(options, [], skipped, drift);
}

/**
 * After a restore's commit (or recovery's): the owner records of the paths it placed. This session
 * wrote them now, so other sessions' captures can detect conflicts with it, and the next scan compares
 * against what the restore left, not against the state before it (which it would record as a hand edit).
 */
export async function recordRestored(session: SessionHandle, entries: readonly PlannedEntry[], placed: { restored: readonly string[]; deleted: readonly string[] }, warnings?: string[]): Promise<void> {
  const done = new Set([...placed.restored, ...placed.deleted]);
  await afterCommit(warnings, 'owner index not updated', () =>
    recordOwnership(session, entries.filter((e) => done.has(e.path)).map((e) => withFolderMode(session.workspaceRoot, imageOfPlanEntry(e)))),
  );
}

/**
 * Paths the plan leaves because what they held at the tag was recorded only by another session's
 * captures that its retention retired (session/workspace-timeline.ts `prunedImage`). Left alone, the
 * workspace would be neither the tag's state nor the present one: the point is no longer kept whole.
 */
function retiredElsewhere(skipped: readonly SkippedPath[]): SkippedPath[] {
  return skipped.filter((s) => RETIRED_ELSEWHERE.test(s.why));
}
const RETIRED_ELSEWHERE = /(^|: )pruned in session \S+$/;

function retiredError(to: string, retired: readonly SkippedPath[]): CkptError {
  const sessions = [...new Set(retired.map((s) => RETIRED_ELSEWHERE.exec(s.why)![0].replace(/^(: )?pruned in session /, '')))];
  const paths = retired.map((s) => s.path);
  return new CkptError(
    'TAG_PRUNED',
    `tag ${to} is no longer restorable as a whole: what ${paths.length} path(s) held there (${paths.slice(0, 5).map(pathText).join(', ')}${paths.length > 5 ? ', …' : ''}) was recorded only by session(s) ${sessions.join(', ')}, whose retention retired it; nothing was changed (a restore naming other paths still works)`,
    { tag: to, paths, sessions },
  );
}
