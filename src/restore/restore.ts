// The restore operation (DESIGN §2 "Restore to a tag", §9 `ckpt restore`): resolve the tag and the
// optional path filter, look for what changed outside the agent since ckpt last looked (DESIGN §10 "A
// restore looks first"), read the present images of the candidate paths, plan (pure), and apply the
// plan journaled — all under the session lock, after finishing any interrupted restore.
import { CkptError } from '../errors.js';
import { OUTSIDE_TOOL, type CaptureEvent, type EventBase, type FileImage, type TurnEvent } from '../format/event.js';
import { matchesFilter, resolveTagSeq } from '../session/positions.js';
import { parseTag } from '../format/tag.js';
import { knownForPaths } from '../session/replay.js';
import { timelinePosition, workspaceTimeline } from '../session/workspace-timeline.js';
import { loadPlans, planOf } from '../session/restore-plans.js';
import type { SessionHandle } from '../session/session-handle.js';
import type { EventLogTx } from '../storage/event-log.js';
import { withWarnings } from '../session/warnings.js';
import { resolveRecorded } from '../workspace/resolve-path.js';
import { sameImage } from '../format/same-image.js';
import { ownerImage, readOwners } from '../capture/owner-index.js';
import { applyRestore, type RestoreResult } from './apply-restore.js';
import { candidatePaths, planRestore, type RestorePlan } from './plan-restore.js';
import { pinLockedFolders, readPresentImages } from './present.js';
import { keepContent, type KeptContent } from './kept-content.js';
import { recoverInTx } from './recover.js';
import { withOutsideLook, type OutsideLook } from '../scan/look-outside.js';

export interface RestoreOptions {
  /** Paths or folders (relative to `cwd`, or absolute inside the root) to restrict the restore to. */
  paths?: readonly string[];
  cwd?: string;
  /** Overwrite drifted paths (their present content still goes into the recovery capture). */
  force?: boolean;
  /** Plan only: nothing is recorded or changed; the result carries the plan. */
  dryRun?: boolean;
  /** Called as files are staged (the long part of a big restore), for progress bars. */
  onProgress?: (progress: { phase: string; done: number; total: number }) => void;
  /**
   * Refuse (CONFLICT, nothing changed) unless the session's last seq is still this one — the seq a
   * preview was planned at — so what runs is what was shown.
   */
  expectSeq?: number;
  /**
   * Called under the session lock with the plan and the state it was made from, before anything is
   * recorded or changed; throwing refuses the restore. Two-step adapters (MCP) bind a confirmation
   * to what a preview showed and check here that nothing moved since.
   */
  checkPlan?: CheckPlan;
}

/** What a restore plan was made from: the plan, the present images of its candidates, the log's last seq. */
export interface PlanSnapshot {
  plan: RestorePlan;
  present: ReadonlyMap<string, FileImage>;
  lastSeq: number;
}

export type CheckPlan = (snapshot: PlanSnapshot) => void | Promise<void>;

export interface RestoreInTxOptions {
  tag: string;
  /** The history the restore is planned from (the session's own, or the parent's for a fork). */
  events: readonly EventBase[];
  filter?: readonly string[];
  force?: boolean;
  dryRun?: boolean;
  reason: string;
  onProgress?: RestoreOptions['onProgress'];
  /** Where failures after the point of no return go (see session/warnings.ts). */
  warnings?: string[];
  checkPlan?: CheckPlan;
  /** The last seq handed to `checkPlan` (default: this transaction's); a fork passes its parent's. */
  lastSeq?: number;
  /** The session whose history `events` is (default: the session restored in; a rewind's fork: its parent). */
  owner?: string;
  /** What changed outside the agent since ckpt last looked (scan/look-outside.ts): planned as the latest capture. */
  look?: OutsideLook;
}

/** Resolves filter inputs to workspace-relative paths (PATH_ESCAPE for anything outside the root). */
export async function resolveFilter(session: SessionHandle, inputs: readonly string[], cwd?: string): Promise<string[]> {
  const out: string[] = [];
  for (const input of inputs) out.push((await resolveRecorded(session.workspaceRoot, input, cwd ?? session.workspaceRoot)).rel);
  return [...new Set(out)];
}

/** Plans a restore of `events` to `tag` against the present workspace (no changes, no lock needed). */
export async function planAgainstWorkspace(
  session: SessionHandle,
  events: readonly EventBase[],
  tag: string,
  filter?: readonly string[],
  owner: string = session.id,
  kept?: KeptContent,
  look?: OutsideLook,
): Promise<{ plan: RestorePlan; present: Map<string, FileImage>; sources: EventBase[]; look?: OutsideLook }> {
  const toSeq = resolveTagSeq(events, tag);
  // Every session's captures (DESIGN §10 "Restore, diff and cat see every session of the workspace"),
  // and the look after them all: what changed outside the agent since ckpt last looked.
  const { captures, sources } = await workspaceTimeline(session, events, owner);
  const position = timelinePosition(events, tag);
  const candidates = candidatePaths({ captures: look ? [...captures, lookCapture(look.before)] : captures, known: new Map() }, position, filter);
  const present = await readPresentImages(session.workspaceRoot, candidates, session.ctx.options.maxBlobBytes, kept);
  const otherWrites = await otherSessionWrites(session, candidates);
  // Drift needs what ckpt last recorded for the candidates only: earlier restores' plans in blobs are
  // read only when one is a candidate's latest record (not every plan of the session's history).
  const knownTimes = new Map<string, number>();
  const known = await knownForPaths(events, look ? [...new Set([...candidates, ...look.before.map((i) => i.path)])] : candidates, async (started) => {
    await loadPlans(session.ctx.blobs, [started]);
    return planOf(started);
  }, knownTimes);
  const { look: outside, drift } = look ? outsideChanges(look, captures, known, knownTimes, present, position) : { look: undefined, drift: [] };
  // What the look found was last known as its before-image: what it holds now is drift (the user's own
  // work) — unless a tool took it away with a folder it captured (then this session's older record says nothing).
  const isDrift = new Set(drift.map((image) => image.path));
  for (const image of outside?.before ?? []) known.set(image.path, isDrift.has(image.path) ? image : null);
  if (outside) captures.push(lookCapture(outside.before));
  const plan = planRestore({ events: { captures, known }, toSeq, position, paths: filter, present, otherWrites });
  await pinLockedFolders(session.workspaceRoot, plan, present, session.ctx.options.maxBlobBytes);
  return { plan, present, sources, ...(outside ? { look: outside } : {}) };
}

/**
 * The look's paths that changed outside the agent (none: undefined), those of them that are drift,
 * and those a call captured after `position` (`byCall`). Not those holding what this session last
 * recorded (the scan and owner indexes lag: an owner record whose write failed).
 * A path some capture recorded after ckpt learned what the look took for its last known state is in
 * flight (a call not settled yet, or never: an interrupted one; or what a settle left out). Its change
 * was made after every scan (one would have recorded it), so after every prompt since that capture,
 * and it is put back like any (D2: one captured before the position was left, so `restore N` kept a
 * write made after prompt N). It is drift unless the capture comes after the position: then the call
 * made it in the span the restore undoes (an interrupted call, never drift) — before the position,
 * ckpt cannot tell the call's write from a hand edit, and the user's work is not overwritten without
 * `--force`. A change beneath a folder such a capture recorded is the tool's (it removed or moved the
 * folder whole): put back, not drift. `diff` filters its own look with it (history/diff-look.ts).
 */
export function outsideChanges<L extends Pick<OutsideLook, 'before' | 'after' | 'knownAt'>>(
  look: L,
  captures: readonly CaptureEvent[],
  known: ReadonlyMap<string, FileImage | null>,
  knownTimes: ReadonlyMap<string, number>,
  present: ReadonlyMap<string, FileImage>,
  position: number,
): { look: L | undefined; drift: FileImage[]; byCall: Set<string> } {
  // A scan's capture comes with its settle (the index or owner record the look compared with), and
  // the index is stamped with the scan's start, before its capture: only other captures can be newer.
  // When each path was last captured: by any capture, and by one after the position.
  const capturedAt = new Map<string, number>();
  const capturedAfter = new Map<string, number>();
  for (const c of captures) {
    if (c.reason === 'scan') continue;
    const at = Date.parse(c.at);
    for (const f of c.files) {
      if (at > (capturedAt.get(f.path) ?? -Infinity)) capturedAt.set(f.path, at);
      if (c.seq > position && at > (capturedAfter.get(f.path) ?? -Infinity)) capturedAfter.set(f.path, at);
    }
  }
  const since = (path: string, knownAt: number) => (capturedAt.get(path) ?? -Infinity) > knownAt;
  // When a capture after the position last recorded a path beneath each folder: a folder a call made
  // for a path it wrote (`newDirs`) is that call's too (a real-Claude probe: DRIFT on `newdir` of an
  // open Write of `newdir/slow.txt`, restored to a prompt before it).
  const capturedBelow = new Map<string, number>();
  for (const [path, at] of capturedAfter) {
    for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
      const dir = path.slice(0, i);
      if (at > (capturedBelow.get(dir) ?? -Infinity)) capturedBelow.set(dir, at);
    }
  }
  const before: FileImage[] = [];
  const after: FileImage[] = [];
  const drift: FileImage[] = [];
  const byCall = new Set<string>();
  look.before.forEach((image, i) => {
    const now = present.get(image.path) ?? look.after[i]!;
    const knownAt = look.knownAt.get(image.path) ?? Infinity;
    // This session's own record, when no newer one (another session's) says otherwise: an owner
    // record whose write failed leaves the index behind it.
    const k = known.get(image.path);
    const own = k && (knownTimes.get(image.path) ?? -Infinity) >= knownAt ? k : undefined;
    if (own && sameImage(own, now)) return;
    before.push(image);
    after.push(look.after[i]!);
    if ((capturedAfter.get(image.path) ?? -Infinity) > knownAt) byCall.add(image.path);
    else if (image.state === 'absent' && (capturedBelow.get(image.path) ?? -Infinity) > knownAt) byCall.add(image.path);
    else if (!folderCaptured(image.path, (d) => since(d, knownAt))) drift.push(image);
  });
  return { look: before.length > 0 ? { ...look, before, after } : undefined, drift, byCall };
}

function folderCaptured(path: string, captured: (folder: string) => boolean): boolean {
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) if (captured(path.slice(0, i))) return true;
  return false;
}

/**
 * From when a restore looks for outside changes (scan/look-outside.ts): the tag's time, when the
 * session's last turn began with a scan — ckpt knew the whole workspace then, so what it last knew of a
 * path changed since is the path's state at the tag. Undefined (no look) otherwise: a session whose
 * turns never scanned (no baseline, or turns started without a scan) cannot tell when such a change was made.
 */
export function lookSince(events: readonly EventBase[], tag: string): number | undefined {
  let lastTurn: TurnEvent | undefined;
  for (const e of events) if (e.type === 'turn') lastTurn = e as TurnEvent;
  if (!lastTurn?.looked) return undefined;
  // `N` and `@S` lie just after their event; `N.K` just before capture N.K, so what came before it counts.
  const parsed = parseTag(tag);
  const seq = resolveTagSeq(events, tag) + (parsed.kind !== 'seq' && parsed.k > 0 ? 1 : 0);
  // `0` and `@0` lie before every event: the session's start.
  const at = seq <= 0 ? events[0]?.at : events.find((e) => e.seq === seq)?.at;
  const ms = at === undefined ? NaN : Date.parse(at);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The look as a capture after every position (never stored as such: applyRestore records it when it goes ahead). */
export function lookCapture(files: FileImage[]): CaptureEvent {
  return { type: 'capture', seq: Infinity, at: '', tag: '', turn: 0, k: 0, tool: OUTSIDE_TOOL, files } as CaptureEvent;
}

/** The owner index's records of `paths` whose latest writer is another session (drift is judged with them). */
async function otherSessionWrites(session: SessionHandle, paths: readonly string[]): Promise<Map<string, { session: string; image: FileImage }>> {
  const owners = await readOwners(session, { spilled: true });
  const out = new Map<string, { session: string; image: FileImage }>();
  for (const path of paths) {
    const o = Object.hasOwn(owners, path) ? owners[path] : undefined;
    const image = o && o.session !== session.id ? ownerImage(path, o) : undefined;
    if (image) out.set(path, { session: o!.session, image });
  }
  return out;
}

/** Plans and applies inside a transaction on `session` (where the restore is recorded). */
export async function restoreInTx(session: SessionHandle, tx: EventLogTx, options: RestoreInTxOptions): Promise<RestoreResult> {
  // The bytes read for the plan are kept for the recovery capture (a dry run records nothing).
  const kept = options.dryRun ? undefined : keepContent();
  const { plan, present, sources, look } = await planAgainstWorkspace(session, options.events, options.tag, options.filter, options.owner, kept, options.look);
  if (options.filter) assertRecorded([...options.events, ...sources], options.filter, look);
  if (options.checkPlan) await options.checkPlan({ plan, present, lastSeq: options.lastSeq ?? (await tx.lastSeq()) });
  return applyRestore(session, tx, {
    to: options.tag,
    plan,
    present,
    kept,
    force: options.force,
    dryRun: options.dryRun,
    reason: options.reason,
    onProgress: options.onProgress,
    warnings: options.warnings,
    sources,
    look,
  });
}

/**
 * A path named in a restore that no capture of the workspace's sessions ever recorded (before or after the tag) is
 * NOT_FOUND: a typo must not read as a restore that succeeded with nothing to do. A path captured only
 * before the tag is known and unchanged since: it is reported as skipped, not an error.
 */
function assertRecorded(events: readonly EventBase[], filter: readonly string[], look?: OutsideLook): void {
  const recorded = new Set<string>(look?.before.map((f) => f.path));
  for (const e of events) if (e.type === 'capture') for (const f of (e as CaptureEvent).files) recorded.add(f.path);
  const unknown = filter.filter((f) => !recorded.has(f) && ![...recorded].some((p) => matchesFilter(p, [f])));
  if (unknown.length > 0) {
    throw new CkptError('NOT_FOUND', `no capture in this session recorded ${unknown.map((p) => JSON.stringify(p)).join(', ')}: nothing to restore there`, {
      paths: unknown,
    });
  }
}

/**
 * Restores the workspace (or the paths given) to `tag`. DRIFT (nothing changed) when a planned path
 * changed since ckpt last recorded it, unless `force`. The result's `undo` tag undoes it.
 */
export async function restore(session: SessionHandle, tag: string, options: RestoreOptions = {}): Promise<RestoreResult> {
  const filter = options.paths ? await resolveFilter(session, options.paths, options.cwd) : undefined;
  const warnings: string[] = [];
  const result = await withOutsideLook(session, (findLook) => session.transaction(async (tx) => {
    if (options.expectSeq !== undefined) {
      const last = await tx.lastSeq();
      if (last !== options.expectSeq) {
        throw new CkptError('CONFLICT', `session ${session.id} changed since the restore was previewed (at @${options.expectSeq}, now @${last}): preview again`, { expected: options.expectSeq, actual: last });
      }
    }
    await recoverInTx(session, tx);
    const events = await tx.read();
    return restoreInTx(session, tx, {
      tag,
      events,
      filter,
      force: options.force,
      dryRun: options.dryRun,
      onProgress: options.onProgress,
      checkPlan: options.checkPlan,
      reason: filter ? `restore to ${tag}: ${filter.join(' ')}` : `restore to ${tag}`,
      warnings,
      look: await findLook(lookSince(events, tag)),
    });
    // A dry run records nothing: it plans without the locks where they cannot be made (a store not writable here).
  }, { warnings, readOnly: options.dryRun }), { readOnly: options.dryRun });
  return withWarnings(result, warnings);
}
