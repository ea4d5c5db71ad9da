// Capture (DESIGN §2, §4): record the before-images of paths just before a tool changes them. Paths
// are resolved beneath the root first (an escape records nothing); content is durable before the
// call returns: small new content inline in the capture event (one fsync: the log's), the rest stored
// in the blob store before the event is appended. The store copy of inline content follows the commit.
import { changedAt, CLOCK_SLACK_MS, foldersAbove } from '../workspace/changed-at.js';
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CkptError } from '../errors.js';
import { OUTSIDE_TOOL, type CaptureEvent, type FileImage, type NewEvent } from '../format/event.js';
import { captureTag } from '../format/tag.js';
import type { SessionHandle } from '../session/session-handle.js';
import type { ReplayState } from '../session/replay.js';
import { appendWithHotState, loadHotState } from '../session/hot-snapshot.js';
import type { HotState } from '../session/hot-state.js';
import { readImage } from '../workspace/read-image.js';
import { resolveBeneath } from '../workspace/resolve-path.js';
import { linkedFile, linkOnTheWay } from '../workspace/link-target.js';
import { storeBeneath } from '../workspace/ignore-rules.js';
import { withWarnings } from '../session/warnings.js';
import { afterAnswerIdle } from '../session/after-call.js';
import { createInlineSink, type InlineSink } from '../storage/inline-store.js';
import type { InlineBlobs } from '../format/inline-blobs.js';
import { detectConflicts, ownerReader } from './owner-index.js';
import { outsideChanges } from './outside-change.js';

export interface CaptureOptions {
  /** Name of the tool about to act (`Write`, `Edit`, `Bash`, …). */
  tool?: string;
  reason?: string;
  /** Folder relative paths are resolved from (default: the workspace root). */
  cwd?: string;
  /** The agent's id of this tool call (e.g. Claude Code's `tool_use_id`): lets its settle find this capture. */
  callId?: string;
}

export interface CaptureResult {
  /** `N.K`, or null when capture is disabled. */
  tag: string | null;
  seq?: number;
  files: FileImage[];
  /** Set when capture is switched off (CKPT_DISABLE): nothing was recorded. */
  disabled?: true;
  /** Paths another session of the workspace wrote since this session recorded them (also logged as `conflict` events). */
  conflicts?: ConflictRef[];
  /** Cache writes that failed after the capture was recorded (it was: see session/warnings.ts). */
  warnings?: string[];
}

export interface ConflictRef {
  path: string;
  otherSession: string;
}

/**
 * Resolves every input beneath the root before anything is stored: one escape fails the whole call.
 * A symlink named by a tool is recorded as a link (never followed), and its target inside the
 * workspace too: a tool that writes to the link writes the target (Codex's apply_patch, an editor),
 * and without a before-image of it the agent's edit read as the user's — `restore N` refused DRIFT.
 */
export async function resolveInputs(session: SessionHandle, inputs: readonly string[], cwd?: string): Promise<{ rel: string; abs: string }[]> {
  const resolved = new Map<string, { rel: string; abs: string }>();
  for (const input of inputs) {
    const r = await resolveBeneath(session.workspaceRoot, input, cwd ?? session.workspaceRoot);
    resolved.set(r.rel, r);
    const target = await linkedFile(session.workspaceRoot, r.abs);
    if (target) resolved.set(target.rel, target);
    const link = linkOnTheWay(session.workspaceRoot, input, cwd ?? session.workspaceRoot, r.rel);
    if (link) resolved.set(link.rel, link);
  }
  return [...resolved.values()];
}

/**
 * Reads the present images of resolved paths, storing content (durably) in the blob store — or into
 * `sink` (a pack writer: durable once the caller commits it).
 */
export async function readImages(
  session: SessionHandle,
  paths: readonly { rel: string; abs: string }[],
  sink?: { put(data: Uint8Array): Promise<{ id: string }> },
): Promise<FileImage[]> {
  const { options } = session.ctx;
  const blobs = sink ?? session.ctx.blobs;
  const images: FileImage[] = [];
  // The store inside the workspace is never recorded, so never restored over itself (as scans ignore it).
  const store = session.ctx.dir !== undefined ? storeBeneath(session.workspaceRoot, session.ctx.dir) : undefined;
  const inStore = (rel: string) => store !== undefined && (store === '' || rel === store || rel.startsWith(`${store}/`));
  for (const p of paths) {
    if (inStore(p.rel)) {
      images.push({ path: p.rel, state: 'skipped', why: 'ignored' });
      continue;
    }
    const image = await readImage(p.abs, p.rel, { blobs, maxBytes: options.maxBlobBytes });
    if (image.state === 'absent') {
      const newDirs = await countMissingAncestors(session.workspaceRoot, p.rel);
      if (newDirs > 0) image.newDirs = newDirs;
    }
    images.push(image);
  }
  return images;
}

export interface CaptureFields {
  tool: string;
  reason?: string;
  /** Extra fields of the event (e.g. a restore's `restoreId`). */
  extra?: Record<string, unknown>;
  /** Where failures of cache writes after the append go. */
  warnings?: string[];
  /**
   * A tool call's capture: a path whose present state differs from what ckpt last recorded was
   * changed outside the agent since (a hand edit during the turn). That change is recorded first, as
   * the user's own capture and settle (`outside-change.ts`), so the tool's before-image is not taken
   * for the state at the turn's start.
   */
  outside?: boolean;
  /** Throw LookFirst for what may have changed unrecorded since the turn began (see `capture`). */
  lookFirst?: Pick<LookFirstBy, 'lastLookMs'>;
}

/** What a capture must have looked at before it records (thrown inside its transaction, which then appends nothing). */
class LookFirst extends Error {
  constructor(readonly look: LookAt) {
    super('paths to look at first');
  }
}

/** How a capture looks first (the public API's: a scan), and when the workspace was last looked at whole. */
export interface LookFirstBy {
  look(look: LookAt): Promise<unknown>;
  /**
   * The scan index's time: what "since the turn began" means for a session before its first prompt
   * (a second session in the folder, `ckpt capture` without `ckpt turn`), which else took any hand
   * edit made since for the state before its capture.
   */
  lastLookMs(): Promise<number | undefined>;
}

/** Paths to look at, folders whose files ckpt knows to look at too, and paths to leave out. */
export interface LookAt {
  paths: string[];
  folders: string[];
  /** This session's captured, unsettled paths in those folders: the agent's tool calls in flight change them. */
  inFlight: string[];
}

/**
 * What may hold a change nobody recorded yet since `lookedFrom` (ms: the turn's scan, else the
 * workspace's last whole look; anything older was there when it looked — with neither, the capture
 * takes the present as before):
 * - a folder above a captured path (the nearest existing one of an absent path) that changed since
 *   this session's last event naming a path below it (`foldersAt`), or since the turn began if none —
 *   the agent's own writes there came before their settles, so a run of new files costs nothing; a
 *   hand removal, rename or replacement of a folder is something else. Its known files are looked at.
 * - among the paths this session never recorded (its own records are checked by outsideChanges): one
 *   below such a folder, or a present one whose inode changed since the turn began (a hand edit,
 *   another session's write).
 * - a folder this session never recorded, made or changed since (made by hand: else the capture took it
 *   for there at the turn's start, and `restore N` kept it).
 */
function lookAtFirst(root: string, state: Readonly<HotState>, images: readonly FileImage[], lookedFrom: number | undefined): LookAt {
  const look: LookAt = { paths: [], folders: [], inFlight: [] };
  if (lookedFrom === undefined) return look;
  const ms = (at: string | undefined) => Date.parse(at ?? '') || 0;
  const turnFrom = lookedFrom - CLOCK_SLACK_MS;
  const changedByOther = (f: { dir: string; ctimeMs: number }) => {
    const at = state.foldersAt.get(f.dir);
    return at !== undefined ? f.ctimeMs > ms(at) : f.ctimeMs >= turnFrom;
  };
  const folders = new Set<string>();
  for (const i of images) {
    if (i.state === 'skipped') continue;
    if (i.state === 'dir') {
      if (!state.known.has(i.path) && changedAt(root, i.path) >= turnFrom) look.paths.push(i.path);
      continue;
    }
    const above = foldersAbove(root, i.path);
    const changed = (i.state === 'absent' ? above.slice(0, 1) : above).filter(changedByOther);
    for (const f of changed) folders.add(f.dir);
    if (state.known.has(i.path)) continue;
    if (changed.length > 0 || (i.state !== 'absent' && changedAt(root, i.path) >= turnFrom)) look.paths.push(i.path);
  }
  look.folders = [...folders];
  // A tool call in flight (captured, not settled yet) changes its folder too (an atomic write's rename;
  // found by a round-3 probe with interleaved parallel calls): its path is the agent's, not the user's.
  if (folders.size > 0) {
    for (const [path, image] of state.known) if (image === null && folders.has(path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '')) look.inFlight.push(path);
  }
  return look;
}

/** The next capture event of a session whose replayed state is `state` (pure): tag `N.K` in the current turn. */
export function nextCaptureEvent(state: Pick<ReplayState, 'turn' | 'nextK'>, images: FileImage[], fields: CaptureFields): NewEvent & { tag: string } {
  return {
    type: 'capture',
    tag: captureTag(state.turn, state.nextK),
    turn: state.turn,
    k: state.nextK,
    tool: fields.tool,
    ...(fields.reason ? { reason: fields.reason } : {}),
    ...fields.extra,
    files: images,
  };
}

/**
 * Appends one capture event holding `images` under the session lock, with the conflicts with other
 * sessions of the workspace found on the way, and — when `after` is given (a scan) — the settle of
 * the same paths in the same transaction, carrying `afterInline` (the content of small new blobs).
 */
export async function appendCapture(
  session: SessionHandle,
  images: FileImage[],
  fields: CaptureFields & { after?: FileImage[]; afterInline?: InlineBlobs },
): Promise<{ event: CaptureEvent; conflicts: ConflictRef[] }> {
  return session.transaction(async (tx) => {
    // The hot state (persisted snapshot + the log's tail), not a replay of the whole log: hooks call this per tool call.
    const state = await loadHotState(session, tx);
    if (fields.lookFirst) {
      // Before its first prompt a session judges by the workspace's last whole look. After a prompt
      // that did not look, a change made before it was there at the prompt: nothing can tell.
      const lookedFrom = state.lookedSince !== undefined ? Date.parse(state.lookedSince) || 0 : state.lastTurnEvent === 0 ? await fields.lookFirst.lastLookMs() : undefined;
      const look = lookAtFirst(session.workspaceRoot, state, images, lookedFrom);
      if (look.paths.length > 0 || look.folders.length > 0) throw new LookFirst(look);
    }
    // One read of the owner index for both checks (a hand edit found before the tool's write needs both).
    const owners = ownerReader(session);
    const outside = fields.outside ? await outsideChanges(session, state.known, images, owners) : undefined;
    const first: NewEvent[] = [];
    if (outside) {
      const user = nextCaptureEvent(state, outside.before, { tool: OUTSIDE_TOOL, reason: `changed outside the agent before ${fields.tool}` });
      first.push(user, { type: 'settle', tag: user.tag, files: outside.after });
    }
    const event = nextCaptureEvent({ turn: state.turn, nextK: state.nextK + (outside ? 1 : 0) }, images, fields);
    const conflicts = await detectConflicts(session, state, images, owners);
    const settle = fields.after ? [{ type: 'settle', tag: event.tag, files: fields.after, ...(fields.afterInline ? { inline: fields.afterInline } : {}) }] : [];
    const stored = await appendWithHotState(session, tx, [...first, event, ...conflicts, ...settle]);
    return { event: stored[first.length] as CaptureEvent, conflicts: conflicts.map((c) => ({ path: c.path as string, otherSession: c.otherSession as string })) };
  }, { warnings: fields.warnings });
}

/**
 * Records the before-images of `inputs`. `lookFirst` (the public API's: a scan of those paths and of
 * the files ckpt knows in those folders, tool `user`) is called for what may have changed unrecorded
 * since the turn began (`lookAtFirst`) — a hand edit during the turn of a file only the baseline knew,
 * a hand removal — so that change is recorded as the user's before the tool's capture takes the present
 * as its before-image (DESIGN §10 "Hand edits during a turn").
 */
export async function capture(
  session: SessionHandle,
  inputs: readonly string[],
  options: CaptureOptions = {},
  lookFirst?: LookFirstBy,
): Promise<CaptureResult> {
  const paths = await resolveInputs(session, inputs, options.cwd);
  if (!session.ctx.options.captureEnabled) return { tag: null, files: [], disabled: true };
  const sink = createInlineSink(session.ctx.blobs);
  const images = await readImages(session, paths, sink);
  const oversize = images.filter((i) => i.state === 'skipped' && i.why === 'too-large');
  if (session.ctx.options.refuseOversize && oversize.length > 0) {
    throw new CkptError('BLOB_TOO_LARGE', `over the ${session.ctx.options.maxBlobBytes}-byte cap, nothing recorded: ${oversize.map((i) => i.path).join(', ')} (a larger cap: --max-file-size or CKPT_MAX_FILE_SIZE)`, {
      paths: oversize.map((i) => i.path),
      max: session.ctx.options.maxBlobBytes,
    });
  }
  const warnings: string[] = [];
  const inline = sink.inline();
  const extra = { ...(options.callId !== undefined ? { callId: options.callId } : {}), ...(inline ? { inline } : {}) };
  const fields: CaptureFields = { tool: options.tool ?? 'capture', reason: options.reason, extra, warnings, outside: true };
  let appended: Awaited<ReturnType<typeof appendCapture>>;
  try {
    appended = await appendCapture(session, images, { ...fields, lookFirst });
  } catch (err) {
    if (!(err instanceof LookFirst) || !lookFirst) throw err;
    await lookFirst.look(err.look);
    appended = await appendCapture(session, images, fields);
  }
  const { event, conflicts } = appended;
  spillAfterCommit(session, sink);
  return withWarnings({ tag: event.tag, seq: event.seq, files: images, ...(conflicts.length > 0 ? { conflicts } : {}) }, warnings);
}

/**
 * The blob-store copy of the content `sink` kept inline in a committed event, after the answer: on a
 * daemon's idle queue (CkptOptions.deferIdle: no index names a capture's before-image, and readers
 * elsewhere read it from the event), else on the store's (StoreContext.afterCall). The event's copy
 * is durable already (DESIGN §4), so the copy is never the operation's wait nor its failure.
 */
export function spillAfterCommit(session: SessionHandle, sink: InlineSink): void {
  if (!sink.inline()) return;
  afterAnswerIdle(session.ctx, () => sink.spill());
}

/** How many ancestors of `rel` (below the root) do not exist: those a restore may remove again. */
async function countMissingAncestors(root: string, rel: string): Promise<number> {
  let count = 0;
  for (let dir = dirname(rel); dir !== '.' && dir !== ''; dir = dirname(dir)) {
    try {
      await lstat(join(root, dir));
      break;
    } catch {
      count++;
    }
  }
  return count;
}
