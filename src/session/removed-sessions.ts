// What a removed session leaves for the others (DESIGN §10 "A removed session's captures stay on the
// others' timelines"). Every session's restores see every session's captures (workspace-timeline.ts);
// removing session B used to take B's captures off the others' timelines while B's last writes stayed
// the owner records (ckpt's knowledge of the workspace), so A's `restore N --force` left what B wrote
// after prompt N, with no drift. `session rm` now keeps B's captures in one file under the workspace,
// `removed/<ms>-<id>.jsonl` (B's session event, then its own captures: no fork record, no copies of a
// parent's events, pruned content named `skipped`, no inline content — it is put into the blob store
// first), read like another session's log. Any 64-hex string in a workspace file keeps its blob alive
// (gc/live-set.ts), so the file keeps what it names. It goes once no remaining session's history
// reaches it: when every session's first kept event (its prune point) is later than its last capture.
import { CkptError } from '../errors.js';
import { decodeEvent, encodeEvent, FORK_TOOL, type CaptureEvent, type EventBase, type FileImage, type SessionEvent } from '../format/event.js';
import { inlineRecords, withoutInline } from '../format/inline-blobs.js';
import type { WorkspaceContext } from '../context.js';
import { spillInline } from '../storage/inline-store.js';
import { prunedThrough } from './positions.js';

const FILE = /^\d{13,}-[^/]+\.jsonl$/;

const folderOf = (ctx: WorkspaceContext): string => `${ctx.workspace.key}/removed`;

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

/** The removed sessions' kept captures. A file that cannot be read or decoded is LOG_CORRUPT, as a session's log is. */
async function readRemoved(ctx: WorkspaceContext): Promise<(RemovedHistory & { key: string })[]> {
  const out: (RemovedHistory & { key: string })[] = [];
  for (const name of await ctx.backend.children(folderOf(ctx))) {
    if (!FILE.test(name)) continue;
    const key = `${folderOf(ctx)}/${name}`;
    const raw = await ctx.backend.read(key);
    if (!raw) continue; // removed meanwhile
    const lines = raw.toString('utf8').split('\n');
    if (lines.pop() !== '') throw new CkptError('LOG_CORRUPT', `${key} does not end with a whole line`, { key });
    const events = lines.map((line, i) => decodeEvent(line, { file: key, line: i + 1 }));
    const [first, ...captures] = events;
    if (first?.type !== 'session' || captures.length === 0 || captures.some((e) => e.type !== 'capture')) {
      throw new CkptError('LOG_CORRUPT', `${key} is not a removed session's captures`, { key });
    }
    const id = name.slice(name.indexOf('-') + 1, -'.jsonl'.length);
    const lastAt = captures.reduce((max, e) => (e.at > max ? e.at : max), '');
    out.push({ key, id, events, lastAt });
  }
  return out;
}

/** The removed sessions' kept histories. */
export async function removedHistories(ctx: WorkspaceContext): Promise<RemovedHistory[]> {
  return (await readRemoved(ctx)).map(({ key: _, ...r }) => r);
}

/**
 * Drops what no remaining session's history reaches: a removed session's captures all made before
 * the first kept event of every session in `remaining` (their whole logs). A capture before a
 * session's first kept position is never "the first capture after" one of its positions.
 */
export async function dropUnreached(ctx: WorkspaceContext, remaining: readonly (readonly EventBase[])[]): Promise<number> {
  const firstKept = remaining.map((events) => {
    const pruned = prunedThrough(events);
    return events.find((e) => e.seq >= pruned)?.at ?? '';
  });
  let dropped = 0;
  for (const r of await readRemoved(ctx)) {
    if (firstKept.every((at) => at > r.lastAt)) {
      await ctx.backend.remove(r.key);
      dropped++;
    }
  }
  return dropped;
}
