// What counts as live (DESIGN §3, §5): the set of blob ids that GC must keep and verify must find.
//
//   1. every blob id in every event of every session log *after* its prune point (`prune.before`):
//      captures, settles, scans, restore plans, and any 64-hex string anywhere in such an event
//      (unknown agent events included — a false positive only keeps a blob longer);
//   2. from retired events (at or before the prune point), only what is still needed:
//      - the latest after-state ckpt knows for each path (replay's `known`: last settle / scan /
//        committed restore) — drift detection and the next scan compare against it and may use it
//        as a before-image;
//      - the plans of interrupted restores (restore_started without restore_committed);
//      - every plan blob itself (`restore_started.planBlob`, retired or not): replay reads the plans
//        of committed restores for `known`; the ids inside a live event's plan blob are live too;
//      every other retired capture is dead: a restore to a kept position P uses the earliest
//      capture after P, and P >= prune.before, so those captures are never read again;
//   3. every sha256 content id of the scan's stat index (`scan-index*`, binary: decoded with
//      scan/scan-index.ts; one in that format that cannot be decoded stops GC), and every 64-hex
//      string in every other file under `workspaces/<wid>/` — the owner index (owners.json: its
//      images may be a later scan's before-images), metadata, future files — read as text.
//
// Reading is fail-closed: a log that cannot be read or parsed aborts with LOG_CORRUPT, since its
// references are unknown and anything might be one of them.
import { CkptError, toCkptError } from '../errors.js';
import type { EventBase, RestoreStartedEvent } from '../format/event.js';
import type { StoreContext } from '../context.js';
import { createEventLog } from '../storage/event-log.js';
import { prunedThrough } from '../session/positions.js';
import { replay } from '../session/replay.js';
import { hasPlanBlob, loadPlans, planOf } from '../session/restore-plans.js';
import { HASH_SHA256, ScanIndex } from '../scan/scan-index.js';

const SCAN_MAGIC = 'CKSI';

const BLOB_ID = /^[0-9a-f]{64}$/;
const BLOB_IDS_IN_TEXT = /(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])/g;

/** The blob references of one session log, split by the prune point. */
export interface LogRefs {
  prunedBefore: number;
  /** Blobs the session keeps alive. */
  live: Set<string>;
  /** Blobs referenced only by retired events (dead unless something else keeps them). */
  retired: Set<string>;
}

/**
 * Adds every 64-hex string found anywhere in `value` (keys excluded) to `out` — except in an `inline`
 * field, whose values are content (its keys are blobs the event's `files` name anyway).
 */
export function collectBlobIds(value: unknown, out: Set<string>): void {
  if (typeof value === 'string') {
    if (value.length === 64 && BLOB_ID.test(value)) out.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value) collectBlobIds(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (k !== 'inline') collectBlobIds(v, out);
  }
}

/** Every 64-hex id in a text (owner index, scan index, metadata). */
export function blobIdsInText(text: string, out: Set<string>): void {
  for (const m of text.matchAll(BLOB_IDS_IN_TEXT)) out.add(m[0]);
}

/** Pure: the live and retired references of one session's events (rules 1 and 2 above); their plan blobs must be loaded (`loadPlans`). */
export function refsOfEvents(events: readonly EventBase[]): LogRefs {
  const prunedBefore = prunedThrough(events);
  const live = new Set<string>();
  const old = new Set<string>();
  for (const e of events) {
    collectBlobIds(e, e.seq > prunedBefore ? live : old);
    if (hasPlanBlob(e)) {
      live.add(String(e.planBlob));
      if (e.seq > prunedBefore) collectBlobIds(planOf(e), live);
    }
  }
  if (prunedBefore > 0) {
    const state = replay(events);
    for (const image of state.known.values()) if (image?.state === 'file' && image.blob && BLOB_ID.test(image.blob)) live.add(image.blob);
    for (const open of state.openRestores as RestoreStartedEvent[]) collectBlobIds(planOf(open), live);
  }
  const retired = new Set([...old].filter((id) => !live.has(id)));
  return { prunedBefore, live, retired };
}

export interface SessionRefs extends LogRefs {
  workspace: string;
  session: string;
  /** Store key of the session folder. */
  key: string;
  events: EventBase[];
}

export interface LiveSet {
  /** Every live blob id of the store. */
  ids: Set<string>;
  sessions: SessionRefs[];
  /** Other files that contributed ids (owner indexes, scan indexes, …) with how many. */
  files: { key: string; ids: number }[];
  workspaces: string[];
}

export interface CollectOptions {
  onProgress?: (p: { phase: 'read'; done: number; total: number; what: string }) => void;
}

/** Reads one session log strictly; any failure is LOG_CORRUPT naming the session. */
export async function readSessionLog(ctx: Pick<StoreContext, 'backend'>, key: string): Promise<EventBase[]> {
  try {
    return await createEventLog({ backend: ctx.backend, key: `${key}/events.jsonl` }).read();
  } catch (err) {
    const e = toCkptError(err, `reading ${key}/events.jsonl`);
    if (e.code === 'LOG_CORRUPT') throw e;
    throw new CkptError('LOG_CORRUPT', `cannot read ${key}/events.jsonl: ${e.message}`, { key, cause: e.code }, { cause: err });
  }
}

/** Store keys of the session folders of a workspace. */
export async function sessionKeys(ctx: Pick<StoreContext, 'backend'>, wid: string): Promise<{ id: string; key: string }[]> {
  const base = `workspaces/${wid}/sessions`;
  return (await ctx.backend.children(base)).map((id) => ({ id, key: `${base}/${id}` }));
}

const isSessionFile = (key: string): boolean => /^workspaces\/[^/]+\/sessions\//.test(key);
const isScanIndex = (key: string): boolean => /^workspaces\/[^/]+\/scan-index[^/]*$/.test(key);

/** Reads every log and workspace file of the store and returns the live set. Throws LOG_CORRUPT on any unreadable log. */
export async function collectLiveSet(ctx: Pick<StoreContext, 'backend' | 'blobs'>, options: CollectOptions = {}): Promise<LiveSet> {
  const { backend } = ctx;
  const ids = new Set<string>();
  const sessions: SessionRefs[] = [];
  const files: LiveSet['files'] = [];
  const workspaces = await backend.children('workspaces');
  const targets: { wid: string; id: string; key: string }[] = [];
  const others: string[] = [];
  for (const wid of workspaces) {
    for (const s of await sessionKeys(ctx, wid)) targets.push({ wid, ...s });
    // Everything else under the workspace (sessions' metadata is covered by the logs themselves).
    for (const key of await backend.list(`workspaces/${wid}`)) if (!isSessionFile(key)) others.push(key);
  }
  const total = targets.length + others.length;
  let done = 0;
  for (const t of targets) {
    const events = await readSessionLog(ctx, t.key);
    await loadPlans(ctx.blobs, events); // LOG_CORRUPT (GC aborts) when a plan blob is missing or bad
    const refs = refsOfEvents(events);
    for (const id of refs.live) ids.add(id);
    sessions.push({ workspace: t.wid, session: t.id, key: t.key, events, ...refs });
    options.onProgress?.({ phase: 'read', done: ++done, total, what: t.key });
  }
  for (const key of others) {
    const found = await idsOfFile(ctx, key);
    for (const id of found) ids.add(id);
    if (found.size > 0) files.push({ key, ids: found.size });
    options.onProgress?.({ phase: 'read', done: ++done, total, what: key });
  }
  return { ids, sessions, files, workspaces };
}

async function idsOfFile(ctx: Pick<StoreContext, 'backend'>, key: string): Promise<Set<string>> {
  const out = new Set<string>();
  const raw = await ctx.backend.read(key);
  if (!raw) return out;
  if (isScanIndex(key) && raw.toString('latin1', 0, SCAN_MAGIC.length) === SCAN_MAGIC) {
    scanIndexBlobIds(key, raw, out);
    return out;
  }
  blobIdsInText(raw.toString('utf8'), out);
  return out;
}

/**
 * The sha256 content ids of a binary scan index (scan/scan-index.ts): the baselines a later scan
 * uses as before-images. An index that cannot be decoded (a newer version, damage) stops GC: what
 * it references is unknown.
 */
export function scanIndexBlobIds(key: string, raw: Buffer, out: Set<string>): void {
  let index: ScanIndex;
  try {
    index = ScanIndex.decode(raw);
  } catch (err) {
    // Damaged store data, not a bug: LOG_CORRUPT (exit 5) like any integrity failure (DESIGN §7).
    throw new CkptError('LOG_CORRUPT', `gc cannot read the scan index ${key} (${(err as Error).message}); refusing to collect garbage until it can (the next scan rebuilds it, or remove the file)`, { key }, { cause: err });
  }
  for (let i = 0; i < index.count; i++) {
    if (index.hashKind[i] !== HASH_SHA256) continue;
    const id = index.hashHex(i);
    if (id) out.add(id);
  }
}
