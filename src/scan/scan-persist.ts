// The scan index of a workspace on disk: loading it (a corrupt one is rebuilt as a new baseline), the
// decoded indexes this process keeps while their file is unchanged, and deciding whether this scan
// rewrites it (skipped when only a few paths were re-read: owner records carry those changes, saving
// the write of a large index).
import { isCkptError } from '../errors.js';
import type { SessionHandle } from '../session/session-handle.js';
import type { StoreBackend } from '../storage/backend.js';
import { HEADER, ScanIndex } from './scan-index.js';

/** Below this many re-read paths the index is left as is (owner records carry the changes). */
const REWRITE_MIN_DIRTY = 64;
const REWRITE_MIN_BYTES = 8 * 1024 * 1024;

export function scanIndexKey(session: SessionHandle): string {
  return `${session.ctx.workspace.key}/scan-index.bin`;
}

function decodeIndex(raw: Buffer): { index?: ScanIndex; corrupt?: true } {
  try {
    return { index: ScanIndex.decode(raw) };
  } catch (err) {
    if (isCkptError(err, 'LOG_CORRUPT')) return { corrupt: true };
    throw err;
  }
}

/**
 * Decoded scan indexes of the last few workspaces, kept while their file is unchanged: decoding (and
 * checking) a 100k-entry index costs a full scan ~40–80 ms and more than a watched scan itself.
 * Scans, `status` and `export` only read them (a scan's next index is a new object), so one copy serves
 * every request of the process (a daemon's `/status` included).
 * `size`/`mtimeMs` are the file's stat when it was read (the watched scan's key); `raw` its bytes (the
 * full scan's key), which cost little to keep: a large index's decoded columns are views of them.
 */
const indexCache = new Map<string, IndexEntry>();
interface IndexEntry {
  size: number;
  mtimeMs: number;
  raw: Buffer;
  index: ScanIndex;
}
const INDEX_CACHE_ENTRIES = 4;

function remember(cacheKey: string, entry: IndexEntry): void {
  indexCache.delete(cacheKey);
  indexCache.set(cacheKey, entry);
  while (indexCache.size > INDEX_CACHE_ENTRIES) indexCache.delete(indexCache.keys().next().value as string);
}

/** Each open store's backend gets a number for the cache key: a shared store has no folder to name it by. */
const backendIds = new WeakMap<StoreBackend, number>();
let nextBackendId = 0;
function cacheKeyOf(backend: StoreBackend, key: string): string {
  let id = backendIds.get(backend);
  if (id === undefined) backendIds.set(backend, (id = nextBackendId++));
  return `${id}\0${key}`;
}

/** Drops the decoded indexes read through `backend` (its store's close): a library process that opened and closed stores keeps none. */
export function forgetScanIndexes(backend: StoreBackend): void {
  const id = backendIds.get(backend);
  if (id === undefined) return;
  for (const key of [...indexCache.keys()]) if (key.startsWith(`${id}\0`)) indexCache.delete(key);
}

/**
 * The index (for a scan, `status` or `export`), read from the store every time but decoded only when its bytes differ from
 * the last decoded ones (compared whole, ~1 ms for 10 MB): exact whoever wrote it meanwhile, and a
 * process that never scans twice pays nothing for it. The result is shared: a caller must not
 * change it. `stat`: only the file's size and mtime are compared (no read), for the
 * watched scan of a long-lived daemon, where reading a large index would cost more than the scan.
 */
export async function loadIndexCached(session: SessionHandle, by: 'bytes' | 'stat'): Promise<{ index?: ScanIndex; corrupt?: true }> {
  const key = scanIndexKey(session);
  const cacheKey = cacheKeyOf(session.ctx.backend, key);
  // Stat before the read: a file replaced in between leaves a key older than the bytes (a miss later), never the reverse.
  const st = await session.ctx.backend.stat(key);
  const cached = indexCache.get(cacheKey);
  if (by === 'stat' && st && cached && cached.size === st.size && cached.mtimeMs === st.mtimeMs) return { index: cached.index };
  const raw = await session.ctx.backend.read(key);
  if (!raw) {
    indexCache.delete(cacheKey);
    return {};
  }
  // A stat of other bytes than those read (replaced in between) never matches a later stat.
  const stat = st && st.size === raw.length ? st : { size: -1, mtimeMs: -1 };
  if (cached?.raw.equals(raw)) {
    remember(cacheKey, { ...stat, raw: cached.raw, index: cached.index });
    return { index: cached.index };
  }
  // Dropped first: the old index can then be collected while the new one is built (a daemon's peak memory).
  indexCache.delete(cacheKey);
  const decoded = decodeIndex(raw);
  if (decoded.index) remember(cacheKey, { ...stat, raw, index: decoded.index });
  return decoded;
}

/**
 * When the workspace's last full look began (the scan index's time), from its header only: what
 * changed after it may be unrecorded unless a settle recorded it. Undefined without an index.
 */
export async function scanIndexTime(session: SessionHandle): Promise<number | undefined> {
  const head = await session.ctx.backend.readRange(scanIndexKey(session), 0, HEADER);
  return head ? ScanIndex.headerTime(head) : undefined;
}

export interface PersistInput {
  session: SessionHandle;
  next: ScanIndex;
  prev: ScanIndex | undefined;
  ruleTexts: Map<string, string>;
  /** Paths re-read (work items) and previous-index slots seen by the walk. */
  workCount: number;
  seenPrev: Uint8Array;
  dirtyBytes: number;
  truncated: boolean;
  unbaselinedChanged: boolean;
  /** A path re-read is one ckpt cannot record: only the index can carry that (owner records do not). */
  skippedReRead: boolean;
  always: boolean;
}

/** Writes `next` when the scan changed enough (or always / for a baseline / a cut-short walk / new rules). */
export async function persistIndex(input: PersistInput): Promise<void> {
  const { session, next, prev } = input;
  next.rules = input.ruleTexts;
  const baseline = prev === undefined;
  const rulesChanged = !prev || !sameMap(prev.rules, input.ruleTexts);
  const dirty = input.workCount + (prev ? prev.count - countSeen(input.seenPrev) : 0);
  if (input.always || baseline || input.truncated || input.unbaselinedChanged || input.skippedReRead || rulesChanged || dirty >= REWRITE_MIN_DIRTY || input.dirtyBytes >= REWRITE_MIN_BYTES) {
    await session.ctx.backend.write(scanIndexKey(session), next.compact().encode());
  }
}

function countSeen(seen: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < seen.length; i++) n += seen[i] as number;
  return n;
}

/** Equal rule-file texts (walk.ts `ruleTexts`): the ignore rules did not change. */
export function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
