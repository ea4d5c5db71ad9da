// Settle (DESIGN §2): after a tool has written, record the after-state of its paths (content too, so
// diffs show what the agent wrote). Settles tell ckpt what the workspace should hold now: drift is
// measured against them, and the workspace's owner index learns who wrote each path. Like a capture,
// small new content travels inline in the event (the log's one fsync); its blob-store copy and then
// the owner index follow the commit, as one piece of work (recordOwnershipAfter) — after the answer
// under a daemon (CkptOptions.defer).
import { CkptError } from '../errors.js';
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { EventBase, FileImage, NewEvent } from '../format/event.js';
import type { InlineBlobs } from '../format/inline-blobs.js';
import type { HotState } from '../session/hot-state.js';
import { parseTag } from '../format/tag.js';
import type { SessionHandle } from '../session/session-handle.js';
import { imageOfPlanEntry, replay } from '../session/replay.js';
import { loadedPlan, loadPlans } from '../session/restore-plans.js';
import { appendWithHotState, loadHotState } from '../session/hot-snapshot.js';
import { nextCaptureEvent, readImages, resolveInputs } from './capture.js';
import { withWarnings } from '../session/warnings.js';
import { ownerImage, readOwners, recordOwnershipAfter } from './owner-index.js';
import { sameImage } from '../format/same-image.js';
import { inlineOf } from '../format/inline-blobs.js';
import { createInlineSink } from '../storage/inline-store.js';
import { recordedLinkTarget } from '../workspace/link-target.js';

export interface SettleResult {
  tag: string | null;
  files: FileImage[];
  disabled?: true;
  /** Cache writes that failed after the settle was recorded. */
  warnings?: string[];
}

export interface SettleOptions {
  /** The capture these paths settle (default: the session's last capture). */
  tag?: string;
  /** Settle the latest capture made with this tool-call id (see CaptureOptions.callId); TAG_NOT_FOUND when none. */
  callId?: string;
  cwd?: string;
}

export async function settle(session: SessionHandle, inputs: readonly string[], options: SettleOptions = {}): Promise<SettleResult> {
  if (options.tag !== undefined) parseTag(options.tag);
  const paths = await resolveInputs(session, inputs, options.cwd);
  if (!session.ctx.options.captureEnabled) return { tag: null, files: [], disabled: true };
  const sink = createInlineSink(session.ctx.blobs);
  const images = await readImages(session, paths, sink);
  const warnings: string[] = [];
  const tag = await session.transaction(async (tx) => {
    // Recent captures come from the hot state (no whole-log read); an older one from a full replay.
    const state = await loadHotState(session, tx);
    let captures: { tag: string; seq: number; callId?: unknown }[] = state.recent;
    const find = (): { tag: string } | undefined =>
      options.callId !== undefined
        ? [...captures].reverse().find((c) => c.callId === options.callId)
        : options.tag !== undefined
          ? captures.find((c) => c.tag === options.tag)
          : captures.at(-1);
    let found = find();
    if (!found && (options.callId !== undefined || options.tag !== undefined)) {
      captures = replay(await tx.read()).captures;
      found = find();
    }
    if (options.callId !== undefined && !found) {
      throw new CkptError('TAG_NOT_FOUND', `no capture of tool call ${JSON.stringify(options.callId)} to settle`, { callId: options.callId });
    }
    if (options.tag !== undefined && !found) {
      throw new CkptError('TAG_NOT_FOUND', `no capture with tag ${options.tag} to settle`, { tag: options.tag });
    }
    const tag = options.tag ?? found?.tag;
    const captured = found && 'files' in found ? (found as { files: FileImage[] }) : tag !== undefined ? [...replay(await tx.read()).captures].reverse().find((c) => c.tag === tag) : undefined;
    if (captured) {
      // Only paths the capture recorded: an after-state without a before-image would make ckpt
      // "know" a path whose earlier state it never recorded (a path resolved through a symlink at
      // capture time and through a real folder now is a different path). A scan records the rest.
      const paths = new Set(captured.files.map((f) => f.path));
      images.push(...(await readImages(session, await targetsOfReplacedLinks(session.workspaceRoot, captured.files, images), sink)));
      const kept = images.filter((i) => paths.has(i.path));
      images.length = 0;
      images.push(...kept, ...(await createdFolders(session.workspaceRoot, captured, kept)));
    }
    // Only the content of the images kept: a path dropped above has no record to carry it.
    const settleOf = (t: string | null, files: FileImage[]): NewEvent => {
      const inline = inlineOf(sink.inline(), files);
      return { type: 'settle', tag: t, files, ...(inline ? { inline } : {}) };
    };
    const moved = captured && (await acrossPrompt(session, tx, state, captured as CapturedCall, images));
    if (!moved) {
      await appendWithHotState(session, tx, [settleOf(tag ?? null, images)]);
      return tag ?? null;
    }
    const stay = images.filter((i) => !moved.paths.has(i.path));
    const go = images.filter((i) => moved.paths.has(i.path));
    await appendWithHotState(session, tx, [...(stay.length > 0 ? [settleOf(tag ?? null, stay)] : []), moved.capture, settleOf(moved.capture.tag, go)]);
    return moved.capture.tag;
  }, { warnings });
  // The owner index may only name blobs the store holds (a scan takes its records as before-images):
  // the content's copy comes first, in the same work.
  await recordOwnershipAfter(session, images, warnings, () => sink.spill());
  return withWarnings({ tag, files: images }, warnings);
}

type CapturedCall = { seq: number; tag: string; callId?: unknown; files: FileImage[] };

/**
 * The targets a capture recorded for named links that are no links now (resolveInputs finds a link's
 * target only while it is one): a tool that replaces a link with a file (an atomic write: a temporary
 * file renamed over the name) left the target, captured with the link, never settled (`status` listed
 * it unsettled for good). Only paths the capture recorded and the settle's inputs do not name.
 */
async function targetsOfReplacedLinks(root: string, captured: readonly FileImage[], present: readonly FileImage[]): Promise<{ rel: string; abs: string }[]> {
  const recorded = new Map(captured.map((f) => [f.path, f]));
  const named = new Set(present.map((i) => i.path));
  const out = new Map<string, { rel: string; abs: string }>();
  for (const now of present) {
    const then = recorded.get(now.path);
    if (now.state === 'symlink' || then?.state !== 'symlink' || then.target === undefined) continue;
    const target = await recordedLinkTarget(root, now.path, then.target);
    if (target && recorded.has(target.rel) && !named.has(target.rel)) out.set(target.rel, target);
  }
  return [...out.values()];
}

/**
 * A tool call across a prompt (DESIGN §10 "A tool call across a prompt"): captured before the last
 * turn began, settled after — a background subagent still writing when the user sent the next prompt.
 * The turn began with a scan (`looked`), so what ckpt last saw of each path before that prompt is what
 * it held there: the latest record of it after the capture (this session's, or another session's in
 * the owner index) — the prompt's scan recorded a write made before it — else the capture's own
 * before-image. A path whose settled state differs from that was written after the prompt: that state
 * is recorded again as a capture of this turn (content carried along from the event that held it),
 * which the settle of those paths then names — else `restore` of this turn, which looks at this turn's
 * captures, kept the write. Deciding by content, not by whether a record exists (a two-session model
 * test: a hand edit the prompt recorded, or another session's scan of the write, flipped the answer).
 * Undefined otherwise.
 */
async function acrossPrompt(
  session: SessionHandle,
  tx: { read(): Promise<readonly EventBase[]> },
  state: HotState,
  captured: CapturedCall,
  settled: readonly FileImage[],
): Promise<{ capture: NewEvent & { tag: string }; paths: Set<string> } | undefined> {
  const turnSeq = state.retention.turns.at(-1)?.seq;
  if (state.lookedSince === undefined || turnSeq === undefined || captured.seq > turnSeq) return undefined;
  const events = await tx.read();
  const first = events.find((e) => e.seq === captured.seq) as (EventBase & { tool?: unknown; inline?: InlineBlobs }) | undefined;
  const promptAt = events.find((e) => e.seq === turnSeq)?.at;
  if (!first || promptAt === undefined) return undefined;
  const owners = await readOwners(session).catch(() => undefined);
  const atPrompt = new Map<string, { image: FileImage; inline?: InlineBlobs }>();
  for (const f of captured.files) atPrompt.set(f.path, { image: f, inline: first.inline });
  // This session's records between the capture and the prompt, in order: the latest one wins. A
  // restore committed meanwhile placed its plan's images (a restore's skipped paths are settled after).
  const between = events.filter((e) => e.seq > captured.seq && e.seq < turnSeq);
  const committed = new Set(between.filter((e) => e.type === 'restore_committed').map((e) => e.id));
  // A plan that cannot be read is left out (the settle must not fail on an old restore's journal).
  const restores = between.filter((e) => e.type === 'restore_started' && committed.has(e.id));
  await loadPlans(session.ctx.blobs, restores).catch(() => {});
  const seenAt = new Map<string, string>();
  for (const e of between) {
    const plan = restores.includes(e) ? loadedPlan(e) : undefined;
    // A capture moved from an earlier call holds what its paths held at an earlier prompt, not at its own time.
    const records = (e.type === 'capture' && e.movedFrom === undefined) || e.type === 'settle';
    const files = records ? ((e as { files?: FileImage[] }).files ?? []) : (plan?.map(imageOfPlanEntry) ?? []);
    for (const f of files) {
      if (!atPrompt.has(f.path)) continue;
      atPrompt.set(f.path, { image: f, inline: (e as { inline?: InlineBlobs }).inline });
      seenAt.set(f.path, e.at);
    }
  }
  // Another session's later record before the prompt (its scan may have recorded the write).
  for (const path of atPrompt.keys()) {
    const o = owners && Object.hasOwn(owners, path) ? owners[path]! : undefined;
    if (!o || o.session === session.id || o.at <= first.at || o.at >= promptAt || o.at <= (seenAt.get(path) ?? '')) continue;
    const image = ownerImage(path, o);
    if (image) atPrompt.set(path, { image });
  }
  const moved = new Set<string>();
  for (const now of settled) {
    const then = atPrompt.get(now.path)?.image;
    if (then && then.state !== 'skipped' && now.state !== 'skipped' && !sameImage(then, now)) moved.add(now.path);
  }
  if (moved.size === 0) return undefined;
  // A folder the call made (settled with it, never captured) goes with a moved path below it.
  const paths = new Set(settled.map((i) => i.path).filter((p) => moved.has(p) || (!atPrompt.has(p) && [...moved].some((m) => m.startsWith(`${p}/`)))));
  const before = [...moved].map((p) => atPrompt.get(p)!);
  const inline = mergeInline(before.map((b) => inlineOf(b.inline, [b.image])));
  const capture = nextCaptureEvent(state, before.map((b) => b.image), {
    tool: typeof first.tool === 'string' ? first.tool : 'capture',
    reason: `captured at ${captured.tag}, written after prompt ${state.lastTurnEvent}`,
    extra: { ...(typeof captured.callId === 'string' ? { callId: captured.callId } : {}), movedFrom: captured.tag, ...(inline ? { inline } : {}) },
  });
  return { capture, paths };
}

function mergeInline(parts: (InlineBlobs | undefined)[]): InlineBlobs | undefined {
  const out = Object.assign({}, ...parts.filter((p) => p !== undefined)) as InlineBlobs;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The folders the capture found missing (`newDirs`) that exist now: the tool created them. Settled
 * as `dir` so ckpt knows them (a scan must not record them as created later, with a wrong before-image).
 */
async function createdFolders(root: string, captured: { files: readonly FileImage[] }, settled: readonly FileImage[]): Promise<FileImage[]> {
  const seen = new Set(settled.map((i) => i.path));
  const out: FileImage[] = [];
  for (const f of captured.files) {
    if (f.state !== 'absent' || !f.newDirs || !seen.has(f.path)) continue;
    for (let d = dirname(f.path), n = f.newDirs; n > 0 && d !== '.' && d !== ''; d = dirname(d), n--) {
      if (seen.has(d)) continue;
      seen.add(d);
      const info = await lstat(join(root, d)).catch(() => undefined);
      if (info?.isDirectory()) out.push({ path: d, state: 'dir', mode: info.mode & 0o7777 });
    }
  }
  return out;
}

/**
 * Settles, as they are now, the paths of this session still in flight (captured, never settled), each
 * under the capture that recorded it last; returns the settles' tags. For an agent event that comes
 * only once every tool call of the turn has ended (Codex's Stop): a capture still in flight then is a
 * call that failed without an after-tool event (Codex 0.169 sends no PostToolUse for a patch it could
 * not apply), which else stayed in flight for good and hid later hand edits of its paths. Nothing while
 * a restore is unfinished: its recovery capture is in flight until it commits.
 */
export async function settleInFlight(session: SessionHandle): Promise<string[]> {
  const state = await loadHotState(session);
  const open = new Set([...state.known].filter(([, image]) => image === null).map(([path]) => path));
  if (open.size === 0 || state.unclosedRestores.size > 0) return [];
  const inRecent = (p: string) => state.recent.some((c) => c.files.some((f) => f.path === p));
  const captures: readonly { tag: string; files: readonly FileImage[] }[] = [...open].every(inRecent) ? state.recent : replay(await session.events()).captures;
  const byTag = new Map<string, string[]>();
  for (const c of [...captures].reverse()) {
    for (const f of c.files) if (open.delete(f.path)) byTag.set(c.tag, [...(byTag.get(c.tag) ?? []), f.path]);
  }
  const tags: string[] = [];
  for (const [tag, paths] of [...byTag].reverse()) {
    const r = await settle(session, paths, { tag });
    if (r.tag) tags.push(r.tag);
  }
  return tags;
}
