// The workspace's owner index (DESIGN §2, §5): for each path, which session last recorded writing it
// and the state it left. It survives restarts (workspaces/<wid>/owners.json, written atomically under
// its own lock) and lets a capture in one session notice that another session changed a path since.
// A cache written after the commit point: under a daemon (CkptOptions.defer) after the answer, with
// this process's readers waiting for the writes still queued.
import { CkptError } from '../errors.js';
import type { FileImage, NewEvent } from '../format/event.js';
import { validateStoredPath } from '../format/stored-path.js';
import type { SessionHandle } from '../session/session-handle.js';
import { sameImage } from '../workspace/read-image.js';
import { afterCommit } from '../session/warnings.js';

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

function ownersKey(session: SessionHandle): string {
  return `${session.ctx.workspace.key}/owners.json`;
}

/**
 * The owner map, keyed by path. Null-prototype: file names like `constructor` or `__proto__` are
 * plain keys (with `{}` they read Object.prototype members as records and vanish on write).
 */
export async function readOwners(session: SessionHandle): Promise<OwnerMap> {
  // A write still queued is done first (by this reader when the queue has not run it yet); its failure is the writer's.
  await queuedWrites.get(session.ctx.backend)?.get(ownersKey(session))?.().catch(() => {});
  return readOwnersNow(session);
}

async function readOwnersNow(session: SessionHandle): Promise<OwnerMap> {
  const key = ownersKey(session);
  const raw = await session.ctx.backend.read(key);
  const owners = Object.create(null) as OwnerMap;
  if (!raw) return owners;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return owners; // a lost index only means fewer conflicts detected; it is rebuilt by later writes
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return owners;
  return validateOwners(Object.assign(owners, parsed), key);
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

/** Records that `session` left `images` as the present state of their paths. */
export async function recordOwnership(session: SessionHandle, images: readonly FileImage[]): Promise<void> {
  const recorded = images.filter((i) => i.state !== 'skipped');
  if (recorded.length === 0) return;
  const { backend } = session.ctx;
  await backend.withLock(`${session.ctx.workspace.key}/owners`, async () => {
    const owners = await readOwnersNow(session);
    const at = new Date().toISOString();
    for (const image of recorded) {
      owners[image.path] = {
        session: session.id,
        state: imageKey(image) ?? 'unknown',
        ...(image.mode !== undefined ? { mode: image.mode } : {}),
        ...(image.state === 'file' && image.bytes !== undefined ? { bytes: image.bytes } : {}),
        at,
      };
    }
    await backend.write(ownersKey(session), Buffer.from(JSON.stringify(owners)));
  });
}

/** Owner-index writes queued behind an answer, by backend and index: the last one's run (each runs the one before first). */
const queuedWrites = new WeakMap<object, Map<string, () => Promise<void>>>();

/**
 * recordOwnership after a commit, `first` (the blob-store copy of content the event carries inline)
 * before it: queued behind the answer under a daemon (CkptOptions.defer; a failure is the queue's to
 * log), else now (a failure goes to `warnings`, and a failed `first` leaves the index as it was).
 */
export async function recordOwnershipAfter(session: SessionHandle, images: readonly FileImage[], warnings: string[] | undefined, first?: () => Promise<void>): Promise<void> {
  const write = async (): Promise<void> => {
    await first?.();
    await recordOwnership(session, images);
  };
  const { defer } = session.ctx.options;
  if (!defer) return afterCommit(warnings, 'owner index not updated', write);
  const key = ownersKey(session);
  let byKey = queuedWrites.get(session.ctx.backend);
  if (!byKey) queuedWrites.set(session.ctx.backend, (byKey = new Map()));
  const before = byKey.get(key);
  let running: Promise<void> | undefined;
  // Runs once, whoever comes first: the queue, or a reader of the index in this process.
  const run = (): Promise<void> =>
    (running ??= (async () => {
      await before?.().catch(() => {});
      await write();
    })().finally(() => {
      if (byKey.get(key) === run) byKey.delete(key);
    }));
  byKey.set(key, run);
  defer(run);
}

/**
 * Conflicts for a capture: a path this session had recorded, that another session wrote since, and
 * whose present state differs from what this session last recorded. Listeners in this process are
 * notified; the returned events are appended with the capture.
 */
export async function detectConflicts(session: SessionHandle, state: { known: ReadonlyMap<string, FileImage | null> }, images: readonly FileImage[]): Promise<NewEvent[]> {
  const candidates = images.filter((i) => {
    const k = state.known.get(i.path);
    return k && i.state !== 'skipped' && !sameImage(k, i);
  });
  if (candidates.length === 0) return [];
  const owners = await readOwners(session);
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
