// What a removed session leaves for the others (DESIGN §10 "A removed session's captures stay on the
// others' timelines"). Every session's restores see every session's captures (workspace-timeline.ts);
// removing session B used to take B's captures off the others' timelines while B's last writes stayed
// the owner records (ckpt's knowledge of the workspace), so A's `restore N --force` left what B wrote
// after prompt N, with no drift. `session rm` now keeps B's captures in one file under the workspace,
// `removed/<ms>-<id>.jsonl` (B's session event, then its own captures: no fork record, no copies of a
// parent's events, pruned content named `skipped`, no inline content — it is put into the blob store
// first), read like another session's log. Any 64-hex string in a workspace file keeps its blob alive
// (gc/live-set.ts), so the file keeps what it names. It goes once no remaining session's history
// reaches it: when every session's earliest kept event (at or after its prune point) is later than the
// file (its name holds when it was made; every capture in it is older).
import { CkptError } from '../errors.js';
import { decodeEvent, encodeEvent, FORK_TOOL, type CaptureEvent, type EventBase, type FileImage, type SessionEvent } from '../format/event.js';
import { inlineRecords, withoutInline } from '../format/inline-blobs.js';
import type { WorkspaceContext } from '../context.js';
import { spillInline } from '../storage/inline-store.js';
import { prunedThrough } from './positions.js';

const FILE = /^\d{13,}-[^/]+\.jsonl$/;

/** What reading the kept files needs: the store backend and the workspace's key (`workspaces/<wid>`). */
type KeptContext = Pick<WorkspaceContext, 'backend'> & { workspace: { key: string } };

const folderOf = (ctx: KeptContext): string => `${ctx.workspace.key}/removed`;

/** A removed session's kept history: its id, its events, the time of its last capture. */
export interface RemovedHistory {
  id: string;
  events: readonly EventBase[];
  lastAt: string;
}

/** The events a removed session keeps for the others (pure; see the header): its session event, then its own captures. */
export function keptEvents(id: string, events: readonly EventBase[]): EventBase[] {
  const first = events[0];
  if (first?.type !== 'session') return [];
  const copied = (first as SessionEvent).forkedFrom?.seq ?? 0;
  const pruned = prunedThrough(events);
  const captures = events.filter((e): e is CaptureEvent => e.type === 'capture' && e.seq > copied && (e as CaptureEvent).tool !== FORK_TOOL);
  if (captures.length === 0) return [];
  return [
    first,
    ...captures.map((c) => withoutInline(c.seq < pruned ? { ...c, files: c.files.map(skippedIf(() => true, `pruned in session ${id}`)) } : c) as EventBase),
  ];
}

/** `f` as a `skipped` image when it names content and `test` holds for it. */
function skippedIf(test: (f: FileImage) => boolean, why: string): (f: FileImage) => FileImage {
  return (f) => (f.state === 'file' && test(f) ? { path: f.path, state: 'skipped', why } : f);
}

/**
 * Keeps the captures of session `id` (whose log is `events`, about to be removed) for the others.
 * Content they name that the log holds inline is put into the blob store first, and every blob they
 * name is freshened (GC's age gate protects it until the file names it). Durable before it returns.
 */
export async function keepRemoved(ctx: WorkspaceContext, id: string, events: readonly EventBase[]): Promise<void> {
  let kept = keptEvents(id, events);
  if (kept.length === 0) return;
  const ids = new Set<string>();
  for (const e of kept) for (const f of (e as CaptureEvent).files ?? []) if (f.state === 'file' && f.blob) ids.add(f.blob);
  await spillInline(ctx.blobs, inlineRecords(events), ids);
  const gone = new Set<string>();
  for (const blob of ids) if (!(await ctx.blobs.freshen(blob))) gone.add(blob);
  // Content already collected (a log naming a blob the store lost) is named `skipped`, as a pruned one is.
  if (gone.size > 0) kept = kept.map((e) => (e.type === 'capture' ? { ...e, files: (e as CaptureEvent).files.map(skippedIf((f) => gone.has(f.blob ?? ''), 'content-collected')) } : e));
  const data = Buffer.from(kept.map((e) => encodeEvent(e)).join(''));
  await ctx.backend.create(`${folderOf(ctx)}/${Date.now()}-${id}.jsonl`, data);
}

/** A kept file bigger than this is refused (LOG_CORRUPT) before it is read. */
const MAX_KEPT_BYTES = 256 * 1024 * 1024;

/** A kept file's key and when it was made (from its name): every capture it holds is older. */
interface KeptFile {
  key: string;
  name: string;
  removedMs: number;
}

/**
 * The kept files (names checked: anything else in the folder is LOG_CORRUPT — a restore that cannot
 * see what a removed session recorded must not run as if it could). The fs backend refuses a
 * symlinked folder (FORBIDDEN); `verify` lists planted links.
 */
async function keptFiles(ctx: KeptContext): Promise<KeptFile[]> {
  const out: KeptFile[] = [];
  for (const name of await ctx.backend.children(folderOf(ctx))) {
    const key = `${folderOf(ctx)}/${name}`;
    if (!FILE.test(name)) throw new CkptError('LOG_CORRUPT', `${key} is not a removed session's captures (unexpected name)`, { key });
    out.push({ key, name, removedMs: Number(name.slice(0, name.indexOf('-'))) });
  }
  return out;
}

/** One kept file, decoded like a log (paths checked); undefined when removed meanwhile. LOG_CORRUPT when it is not one. */
async function readKept(ctx: KeptContext, file: KeptFile): Promise<RemovedHistory | undefined> {
  const { key, name } = file;
  const size = (await ctx.backend.stat(key))?.size;
  if (size === undefined) return undefined;
  if (size > MAX_KEPT_BYTES) throw new CkptError('LOG_CORRUPT', `${key} is ${size} bytes, more than a removed session's captures may be (${MAX_KEPT_BYTES})`, { key, size });
  const raw = await ctx.backend.read(key);
  if (!raw) return undefined;
  const lines = raw.toString('utf8').split('\n');
  if (lines.pop() !== '') throw new CkptError('LOG_CORRUPT', `${key} does not end with a whole line`, { key });
  const events = lines.map((line, i) => decodeEvent(line, { file: key, line: i + 1 }));
  const [first, ...captures] = events;
  if (first?.type !== 'session' || captures.length === 0 || captures.some((e) => e.type !== 'capture')) {
    throw new CkptError('LOG_CORRUPT', `${key} is not a removed session's captures`, { key });
  }
  const id = name.slice(name.indexOf('-') + 1, -'.jsonl'.length);
  const lastAt = captures.reduce((max, e) => (e.at > max ? e.at : max), '');
  return { id, events, lastAt };
}

/**
 * The kept histories a session whose history begins at `since` (ISO time) may need: a file made
 * before that holds only captures before every position of it, and is not read (so a damaged one
 * fails only the sessions it concerns).
 */
export async function removedHistories(ctx: KeptContext, since = ''): Promise<RemovedHistory[]> {
  const sinceMs = Date.parse(since) || 0;
  const out: RemovedHistory[] = [];
  for (const file of await keptFiles(ctx)) {
    if (file.removedMs < sinceMs) continue;
    const history = await readKept(ctx, file);
    if (history) out.push(history);
  }
  return out;
}

/** Every kept file decoded (for `verify`): the problems, by key. */
export async function checkRemoved(ctx: KeptContext): Promise<{ key: string; message: string }[]> {
  const problems: { key: string; message: string }[] = [];
  let files: KeptFile[];
  try {
    files = await keptFiles(ctx);
  } catch (err) {
    return [{ key: folderOf(ctx), message: (err as Error).message }];
  }
  for (const file of files) {
    try {
      await readKept(ctx, file);
    } catch (err) {
      problems.push({ key: file.key, message: (err as Error).message });
    }
  }
  return problems;
}

/**
 * Drops what no remaining session's history reaches: a kept file whose last capture is older than the
 * earliest kept event of every session in `remaining` (their whole logs: a fork's copied events keep
 * their times, and its timeline reaches back to them). A damaged file is judged by its name (when it
 * was made): one no session can need goes too.
 */
export async function dropUnreached(ctx: KeptContext, remaining: readonly (readonly EventBase[])[]): Promise<void> {
  const earliest = remaining.map((events) => {
    const pruned = prunedThrough(events);
    let min = Infinity;
    for (const e of events) if (e.seq >= pruned) min = Math.min(min, Date.parse(e.at) || 0);
    return min;
  });
  for (const file of await keptFiles(ctx).catch(() => [] as KeptFile[])) {
    // Its last capture's time, or (a damaged file) when it was made: every capture in it is older.
    const last = await readKept(ctx, file).then((h) => (h ? Date.parse(h.lastAt) : NaN), () => NaN);
    const lastMs = Number.isNaN(last) ? file.removedMs : last;
    if (earliest.every((ms) => ms > lastMs)) await ctx.backend.remove(file.key);
  }
}
