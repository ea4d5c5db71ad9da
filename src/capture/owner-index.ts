// The workspace's owner index (DESIGN §2, §5): for each path, which session last recorded writing it
// and the state it left. It survives restarts (workspaces/<wid>/owners.json, written atomically under
// its own lock) and lets a capture in one session notice that another session changed a path since.
// A cache written after the commit point: under a daemon (CkptOptions.defer) behind the answers,
// writes queued meanwhile coalesced into one rewrite, and this process's readers seeing them; after
// a daemon was killed, caught up with the settles of the logs (catchUpOwners); when missing or
// unparsable, rebuilt from the whole logs (owner-rebuild.ts).
import { CkptError, isNotWritable } from '../errors.js';
import type { FileImage, NewEvent } from '../format/event.js';
import { validateStoredPath } from '../format/stored-path.js';
import type { WorkspaceContext } from '../context.js';
import { SessionHandle } from '../session/session-handle.js';
import { decodeInline } from '../storage/inline-store.js';
import { sameImage } from '../format/same-image.js';
import { afterCommit } from '../session/warnings.js';
import { ownerWritesFromLogs, type LoggedWrite } from './owner-rebuild.js';

export interface OwnerEntry {
  session: string;
  /** Image key of the state that session left: blob id, `absent`, `dir` or `symlink:<target>`. */
  state: string;
  /** Mode of a `file` or `dir` state (with the state, the full image: scans use it as the path's previous state). */
  mode?: number;
  /** Size of a `file` state: with it a scan's before-image from this record equals one from its index. */
  bytes?: number;
  at: string;
}

type OwnerMap = Record<string, OwnerEntry>;

/** The image an owner record stands for (undefined for a state it cannot express). */
export function ownerImage(path: string, o: OwnerEntry): FileImage | undefined {
  if (o.state === 'absent') return { path, state: 'absent' };
  if (o.state === 'dir') return { path, state: 'dir', ...(o.mode !== undefined ? { mode: o.mode } : {}) };
  if (o.state.startsWith('symlink:')) return { path, state: 'symlink', target: o.state.slice(8) };
  if (/^[0-9a-f]{64}$/.test(o.state)) return { path, state: 'file', blob: o.state, ...(o.bytes !== undefined ? { bytes: o.bytes } : {}), ...(o.mode !== undefined ? { mode: o.mode } : {}) };
  return undefined;
}

export function imageKey(image: FileImage | null | undefined): string | null {
  if (!image) return null;
  if (image.state === 'file') return image.blob ?? null;
  if (image.state === 'symlink') return `symlink:${image.target ?? ''}`;
  return image.state;
}

function ownersKey(ctx: WorkspaceContext): string {
  return `${ctx.workspace.key}/owners.json`;
}

/**
 * The owner map, keyed by path. Null-prototype: file names like `constructor` or `__proto__` are
 * plain keys (with `{}` they read Object.prototype members as records and vanish on write).
 */
export async function readOwners(session: SessionHandle, options: { spilled?: boolean } = {}): Promise<OwnerMap> {
  // Under a daemon, writes queued behind answers are part of the index as this process sees it. With
  // `spilled` (the caller needs every blob an entry names in the blob store, not only inline in a
  // log) they are run now, by this reader when the queue has not run them yet (a failure is the
  // writer's). Else the batch being written is waited for and the one not yet taken is applied to
  // what is read, not written: that is the queue's work, outside the agent's tool calls. Taken
  // before the read, so a batch the queue takes meanwhile is in the file or in `pending`. Taken
  // before any await: a write queued once the read is under way is ordered after it (a spilled read
  // applying one would name a blob its copy has not stored yet, or a record whose copy then fails).
  const q = queuedWrites.get(session.ctx.backend)?.get(ownersKey(session.ctx));
  const pending = !options.spilled && q?.batch ? [...q.batch] : [];
  const ran = options.spilled && q ? runQueued(q).catch(() => {}) : undefined;
  // Records a daemon owed and will not write now (killed, stopped) are in the logs' settles: taken
  // first, or a scan or a capture's look would take an older state for the last known (DESIGN §10).
  await catchUpOwed(session.ctx);
  await ran;
  await q?.last.catch(() => {});
  // Writes queued in this process (a daemon's) rebuild a lost index themselves, off the answer path.
  const owners = await readOwnersNow(session.ctx, q ? 'never' : 'lock');
  applyWrites(owners, pending);
  return owners;
}

/** How a caller reads the owner map (readOwners, or one read shared by several steps: ownerReader). */
export type ReadOwners = (options?: { spilled?: boolean }) => Promise<OwnerMap>;

/**
 * readOwners for one critical section (a capture's outside-change check, then its conflict check):
 * the index is read once, not once per step. A spilled read serves both kinds of caller (its records
 * are the queued writes run, where the other applies them unwritten); a spilled request after an
 * unspilled read reads again. The caller must not change the map.
 */
export function ownerReader(session: SessionHandle): ReadOwners {
  let read: { spilled: boolean; owners: Promise<OwnerMap> } | undefined;
  return (options = {}) => {
    const spilled = options.spilled === true;
    if (!read || (spilled && !read.spilled)) read = { spilled, owners: readOwners(session, options) };
    return read.owners;
  };
}

/**
 * The index as stored, or rebuilt from the logs when it is missing or not a JSON object (owner-rebuild.ts):
 * a lost index made `owner` say no session wrote a path, hid conflicts and made `status` list unchanged
 * files as changed. The rebuild runs under the index's lock (`rebuild`: 'locked' when the caller
 * holds it, 'lock' to take it, 'never' for an empty map instead) and is written, so it happens once;
 * a failed write still answers with the rebuilt records.
 */
async function readOwnersNow(ctx: WorkspaceContext, rebuild: 'lock' | 'locked' | 'never'): Promise<OwnerMap> {
  const stored = await readStoredOwners(ctx);
  if (stored) return stored;
  if (rebuild === 'never') return Object.create(null) as OwnerMap;
  const fromLogs = async (): Promise<OwnerMap> => {
    const again = rebuild === 'lock' ? await readStoredOwners(ctx) : undefined; // another process may have rebuilt it meanwhile
    if (again) return again;
    const owners = Object.create(null) as OwnerMap;
    applyWrites(owners, await ownerWritesFromLogs(ctx));
    await ctx.backend.write(ownersKey(ctx), Buffer.from(JSON.stringify(owners))).catch(() => {});
    return owners;
  };
  if (rebuild === 'locked') return fromLogs();
  try {
    return await ctx.backend.withLock(`${ctx.workspace.key}/owners`, fromLogs);
  } catch (err) {
    // A store this process cannot write (read-only mount, no write permission): no lock can be made
    // and no rebuilt index kept, so the records come from the logs, unwritten (a read-only `status`,
    // `owner`, `export`). Nothing can write through this process to race with it.
    if (!isNotWritable(err)) throw err;
    const owners = Object.create(null) as OwnerMap;
    applyWrites(owners, await ownerWritesFromLogs(ctx));
    return owners;
  }
}

/** Bound of the parsed indexes kept per backend (parsedOwners): one per workspace a process writes to. */
const MAX_PARSED = 8;

/**
 * The last parsed and validated index per backend and key, with the bytes it was parsed from. The file
 * is read on every use as before (another process rewrites it at any time); only when its bytes are
 * the same as those parsed is the parse skipped, which gives the same map by construction (a stat
 * alone was not enough: a freed inode is reused, and two rewrites within one tick of the file
 * system's clock look alike). Kept from this process's last read or write of it (writeOwners): a
 * capture after a settle of the same process (a daemon, an in-process agent loop) that finds a hand
 * edit reads the index inside its lock, and its parse and the check of every record were ~40 µs of
 * a cold call for a one-record index.
 */
const parsedOwners = new WeakMap<object, Map<string, { raw: Buffer; owners: OwnerMap }>>();

/** The stored index; undefined when there is none or it is not a JSON object (a malformed record is LOG_CORRUPT). */
async function readStoredOwners(ctx: WorkspaceContext): Promise<OwnerMap | undefined> {
  const key = ownersKey(ctx);
  const raw = await ctx.backend.read(key);
  if (!raw) return undefined;
  const kept = parsedOwners.get(ctx.backend)?.get(key);
  // A map of its own for each caller (writeOwners and readOwners change theirs): the records are
  // shared, never changed in place (applyWrites replaces them).
  if (kept?.raw.equals(raw)) return Object.assign(Object.create(null) as OwnerMap, kept.owners);
  const owners = parseOwners(raw, key);
  if (owners) keepParsed(ctx, raw, owners);
  return owners;
}

/** Keeps a copy of `owners` as the parse of `raw` (the index's bytes) for readStoredOwners. */
function keepParsed(ctx: WorkspaceContext, raw: Buffer, owners: OwnerMap): void {
  const key = ownersKey(ctx);
  let byKey = parsedOwners.get(ctx.backend);
  if (!byKey) parsedOwners.set(ctx.backend, (byKey = new Map()));
  if (byKey.size >= MAX_PARSED && !byKey.has(key)) byKey.clear();
  byKey.set(key, { raw, owners: Object.assign(Object.create(null) as OwnerMap, owners) });
}

/** The index's bytes parsed and validated (undefined when they are not a JSON object). */
function parseOwners(raw: Buffer, key: string): OwnerMap | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  return validateOwners(Object.assign(Object.create(null) as OwnerMap, parsed), key);
}

/**
 * Every record names a path a scan will stat and compare: a forged `../x` or a malformed record is
 * LOG_CORRUPT (nothing is done from it); the index is a cache, so removing the file repairs it.
 */
function validateOwners(owners: Record<string, unknown>, key: string): OwnerMap {
  for (const [path, o] of Object.entries(owners)) {
    const rec = o as Partial<OwnerEntry> | null;
    const ok =
      typeof rec === 'object' && rec !== null && typeof rec.session === 'string' && typeof rec.state === 'string' && typeof rec.at === 'string' &&
      (rec.mode === undefined || Number.isSafeInteger(rec.mode));
    if (!ok) throw new CkptError('LOG_CORRUPT', `owner index ${key}: malformed record for ${JSON.stringify(path)} (remove the file to rebuild it)`, { key, path });
    validateStoredPath(path, { what: `owner index ${key} (remove the file to rebuild it)`, key });
  }
  return owners as OwnerMap;
}

/** What one session left: `images` as the present state of their paths, recorded at `at` (ISO time). */
type OwnerWrite = LoggedWrite;

/** Records that `session` left `images` as the present state of their paths. */
export function recordOwnership(session: SessionHandle, images: readonly FileImage[]): Promise<void> {
  return writeOwners(session.ctx, [{ session, images, at: new Date().toISOString() }]);
}

/** One read-modify-write of the index for several writes, in order (a later write of a path wins). */
async function writeOwners(ctx: WorkspaceContext, writes: readonly OwnerWrite[]): Promise<void> {
  if (!writes.some((w) => w.images.some(recorded))) return;
  const { backend } = ctx;
  await backend.withLock(`${ctx.workspace.key}/owners`, async () => {
    const owners = await readOwnersNow(ctx, 'locked');
    applyWrites(owners, writes);
    const raw = Buffer.from(JSON.stringify(owners));
    await backend.write(ownersKey(ctx), raw);
    // What this process wrote is what its next read finds unless another process wrote since (the
    // bytes tell): a capture after this settle reads the index and parses nothing. Checked as a read
    // checks it, so a record that a read would refuse is not served from here either.
    let checked: OwnerMap | undefined;
    try {
      checked = validateOwners(owners, ownersKey(ctx));
    } catch {
      // the next read parses the file and reports it
    }
    if (checked) keepParsed(ctx, raw, checked);
  });
}

const recorded = (image: FileImage): boolean => image.state !== 'skipped';

/**
 * Applies `writes` in order, each record only over an older one: a write queued behind a daemon's
 * answers may be applied after another process (a CLI restore) recorded the path anew.
 */
function applyWrites(owners: OwnerMap, writes: readonly OwnerWrite[]): void {
  for (const { session, images, at } of writes) {
    for (const image of images) {
      if (!recorded(image)) continue;
      const had = owners[image.path];
      if (had && had.at > at) continue;
      owners[image.path] = {
        session: session.id,
        state: imageKey(image) ?? 'unknown',
        ...(image.mode !== undefined ? { mode: image.mode } : {}),
        ...(image.state === 'file' && image.bytes !== undefined ? { bytes: image.bytes } : {}),
        at,
      };
    }
  }
}

/** Owner-index writes queued behind answers, per index: the batch not yet taken and the last batch's run. */
interface Queued {
  batch?: (OwnerWrite & { ctx: WorkspaceContext; first?: () => Promise<void> })[];
  last: Promise<void>;
}
const queuedWrites = new WeakMap<object, Map<string, Queued>>();

function queuedFor(session: SessionHandle): Queued {
  let byKey = queuedWrites.get(session.ctx.backend);
  if (!byKey) queuedWrites.set(session.ctx.backend, (byKey = new Map()));
  const key = ownersKey(session.ctx);
  let q = byKey.get(key);
  if (!q) byKey.set(key, (q = { last: Promise.resolve() }));
  return q;
}

/**
 * Runs the batch queued so far (after the run before it): each write's `first`, then one rewrite of
 * the index for the writes whose `first` succeeded. Resolves when that is done; a `first`'s failure
 * rejects it after the rest was written.
 */
function runQueued(q: Queued): Promise<void> {
  const batch = q.batch;
  if (!batch) return q.last;
  q.batch = undefined;
  q.last = q.last
    .catch(() => {})
    .then(async () => {
      const written: OwnerWrite[] = [];
      let failed: unknown;
      for (const w of batch) {
        try {
          await w.first?.();
          written.push(w);
        } catch (err) {
          failed ??= err;
        }
      }
      await writeOwners(batch[0]!.ctx, written);
      if (failed !== undefined) throw failed;
    });
  return q.last;
}

/**
 * recordOwnership after a commit, `first` (the blob-store copy of content the event carries inline)
 * before it: queued behind the answer under a daemon (CkptOptions.defer; writes queued meanwhile
 * become one rewrite of the index; a failure is the queue's to log), else now (a failure goes to
 * `warnings`, and a failed `first` leaves the index as it was).
 */
export async function recordOwnershipAfter(session: SessionHandle, images: readonly FileImage[], warnings: string[] | undefined, first?: () => Promise<void>): Promise<void> {
  const { defer } = session.ctx.options;
  if (!defer) {
    return afterCommit(warnings, 'owner index not updated', async () => {
      await first?.();
      await recordOwnership(session, images);
    });
  }
  const q = queuedFor(session);
  if (!q.batch) {
    q.batch = [];
    // Runs the batch once, whoever comes first: the queue, or a reader of the index in this process.
    defer(() => runQueued(q));
  }
  // The time of the commit, not of the write: it orders this record against other processes' (applyWrites).
  q.batch.push({ ctx: session.ctx, session, images, at: new Date().toISOString(), ...(first ? { first } : {}) });
}

/**
 * Conflicts for a capture: a path this session had recorded, that another session wrote since, and
 * whose present state differs from what this session last recorded. Listeners in this process are
 * notified; the returned events are appended with the capture.
 */
export async function detectConflicts(
  session: SessionHandle,
  state: { known: ReadonlyMap<string, FileImage | null> },
  images: readonly FileImage[],
  read: ReadOwners = (options) => readOwners(session, options),
): Promise<NewEvent[]> {
  const candidates = images.filter((i) => {
    const k = state.known.get(i.path);
    return k && i.state !== 'skipped' && !sameImage(k, i);
  });
  if (candidates.length === 0) return [];
  const owners = await read();
  const conflicts: NewEvent[] = [];
  for (const image of candidates) {
    const owner = owners[image.path];
    if (!owner || owner.session === session.id) continue;
    const event = {
      type: 'conflict',
      path: image.path,
      otherSession: owner.session,
      expected: imageKey(state.known.get(image.path)),
      actual: imageKey(image),
    };
    conflicts.push(event);
    session.ctx.events.emit('conflict', { ...event, session: session.id });
  }
  return conflicts;
}

/** Settles are caught up from this long before the given time on (clocks, the file system's mtime granularity). */
const CATCH_UP_SLACK_MS = 5_000;

/**
 * Brings the workspace's owner index up to its logs (DESIGN §10 "Hooks at no cost"): a daemon writes
 * owner records after its answers, so one killed in between leaves settles in the logs that the index
 * lacks — and a watched scan rewrites no scan index (the owner records carry its states), so the next
 * scan would take such a path's older state for its before-image and a restore to it would put that
 * older state back. The settles made since `sinceMs` (the killed daemon's start, less
 * CATCH_UP_SLACK_MS) are applied as owner records with their events' times: a record already there from the same settle or a
 * later one stays (applyWrites). Content a settle carries inline is stored first (owners.json names
 * stored blobs); a log that cannot be read adds nothing. Returns the number of settles applied.
 */
export async function catchUpOwners(ctx: WorkspaceContext, sinceMs: number): Promise<number> {
  const { backend } = ctx;
  const since = sinceMs - CATCH_UP_SLACK_MS;
  const writes: OwnerWrite[] = [];
  for (const id of await backend.children(`${ctx.workspace.key}/sessions`)) {
    const session = new SessionHandle(ctx, id);
    let settles;
    try {
      if (((await backend.stat(session.log.key))?.mtimeMs ?? -Infinity) < since) continue;
      settles = await session.log.read({ types: SETTLE });
    } catch {
      continue; // an unreadable log adds nothing; the scan index and the other logs still count
    }
    for (const e of settles) {
      if (Date.parse(e.at) < since) continue;
      const images = e.files as FileImage[];
      const inline = (e.inline ?? {}) as Record<string, string>;
      for (const image of images) {
        const b64 = image.blob === undefined ? undefined : inline[image.blob];
        // Content that does not match its id (forged) is not stored, yet the record is applied: a
        // scan then names that blob and reading it fails loudly (verify reports the index), where
        // leaving the record out would let the next scan take the older state silently.
        if (b64 === undefined || (await ctx.blobs.has(image.blob!))) continue;
        let data;
        try {
          data = decodeInline(image.blob!, b64);
        } catch {
          continue;
        }
        await ctx.blobs.put(data);
      }
      writes.push({ session, images, at: e.at });
    }
  }
  await writeOwners(ctx, writes);
  return writes.length;
}
const SETTLE: ReadonlySet<string> = new Set(['settle']);

/** Marks a workspace's owner index as caught up after the daemon that started at the given time died. */
const caughtUpKey = (ctx: WorkspaceContext): string => `${ctx.workspace.key}/owners-caught-up`;

/** The catch-ups this process made, is making or found marked, per backend: by `<workspace key> <since> <owing daemon>`. */
const caughtUpHere = new WeakMap<object, Map<string, Promise<void>>>();

/**
 * catchUpOwners once per owing daemon and workspace: its claim stays until a daemon starts again (and a
 * daemon that took over carries it on), and meanwhile every reader would read the recent logs anew.
 * The mark is written after the index (a crash in between catches up again; applying twice changes
 * nothing), and remembered in this process. A claim that does not say when its daemon started
 * (sinceMs 0) is caught up every time.
 */
export function catchUpOwnersOnce(ctx: WorkspaceContext, sinceMs: number, by = ''): Promise<void> {
  // The mark names the owing daemon and its state as well (daemon-files.ts OwedRecords.by): a catch-up
  // made while a daemon ran after taking over, or while it was stopped, does not cover what it owed
  // when it died later (h7 probe: a second daemon's death lost its records, as the first fix's did).
  const mark = Buffer.from(`${sinceMs}${by ? ` ${by}` : ''}\n`);
  const run = async () => {
    if (sinceMs > 0 && (await ctx.backend.read(caughtUpKey(ctx)).catch(() => undefined))?.equals(mark)) return;
    await catchUpOwners(ctx, sinceMs);
    if (sinceMs > 0) await ctx.backend.write(caughtUpKey(ctx), mark);
  };
  if (sinceMs === 0) return run();
  const here = caughtUpHere.get(ctx.backend) ?? caughtUpHere.set(ctx.backend, new Map()).get(ctx.backend)!;
  const id = `${ctx.workspace.key} ${sinceMs} ${by}`;
  let done = here.get(id);
  if (!done) {
    here.set(id, (done = run()));
    done.catch(() => here.delete(id)); // tried again by the next reader
  }
  return done;
}

/**
 * Catches the index up with what the store's daemon owes (StoreContext.ownersOwed), best effort:
 * an index that cannot be caught up is read as it is. Another machine's workspace owes nothing to a
 * daemon of this one.
 */
async function catchUpOwed(ctx: WorkspaceContext): Promise<void> {
  if (!ctx.ownersOwed || ctx.workspace.foreign) return;
  try {
    const owed = await ctx.ownersOwed();
    if (owed !== undefined) await catchUpOwnersOnce(ctx, owed.since, owed.by);
  } catch {
    // as before the catch-up: the index as stored
  }
}
