// The scan index of a workspace on disk: loading it (a corrupt one is rebuilt as a new baseline) and
// deciding whether this scan rewrites it (skipped when only a few paths were re-read: owner records
// carry those changes, saving the write of a large index).
import { isCkptError } from '../errors.js';
import type { SessionHandle } from '../session/session-handle.js';
import { ScanIndex } from './scan-index.js';

/** Below this many re-read paths the index is left as is (owner records carry the changes). */
const REWRITE_MIN_DIRTY = 64;
const REWRITE_MIN_BYTES = 8 * 1024 * 1024;

export function scanIndexKey(session: SessionHandle): string {
  return `${session.ctx.workspace.key}/scan-index.bin`;
}

/** The index, or undefined; `corrupt` when one exists but cannot be decoded (it is rebuilt as a new baseline). */
export async function loadIndex(session: SessionHandle): Promise<{ index?: ScanIndex; corrupt?: true }> {
  const raw = await session.ctx.backend.read(scanIndexKey(session));
  if (!raw) return {};
  try {
    return { index: ScanIndex.decode(raw) };
  } catch (err) {
    if (isCkptError(err, 'LOG_CORRUPT')) return { corrupt: true };
    throw err;
  }
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
  /** A path became one ckpt cannot record: only the index can carry that (owner records do not). */
  skippedNew: boolean;
  always: boolean;
}

/** Writes `next` when the scan changed enough (or always / for a baseline / a cut-short walk / new rules). */
export async function persistIndex(input: PersistInput): Promise<void> {
  const { session, next, prev } = input;
  next.rules = input.ruleTexts;
  const baseline = prev === undefined;
  const rulesChanged = !prev || !sameMap(prev.rules, input.ruleTexts);
  const dirty = input.workCount + (prev ? prev.count - countSeen(input.seenPrev) : 0);
  if (input.always || baseline || input.truncated || input.unbaselinedChanged || input.skippedNew || rulesChanged || dirty >= REWRITE_MIN_DIRTY || input.dirtyBytes >= REWRITE_MIN_BYTES) {
    await session.ctx.backend.write(scanIndexKey(session), next.compact().encode());
  }
}

function countSeen(seen: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < seen.length; i++) n += seen[i] as number;
  return n;
}

function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
