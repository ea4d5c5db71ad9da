// Plans and results of big restores live in blobs, not in log lines (DESIGN §10 "Restore journal"):
// `restore_started {planBlob, planCount}` instead of an inline `plan`, `restore_committed {result:
// {…counts, resultBlob}}` instead of inline path lists. A log stays small after many large restores,
// and a command that does not need a plan (turn, log, diff, metadata) never reads one. Code that needs
// plans (replay's `known`, recovery, GC) loads them first with `loadPlans`: each plan blob is read,
// verified by its id, decoded as untrusted input (shape and every path re-checked as planning checks
// it; anything wrong is LOG_CORRUPT) and remembered per event object. Old logs with inline plans read
// as before.
import { CkptError, isCkptError } from '../errors.js';
import type { EventBase, RestorePlanEntry, RestoreStartedEvent } from '../format/event.js';
import type { BlobStore } from '../storage/blob-store.js';
import { validateRestorePlan } from '../format/stored-path.js';

/** Plans and path lists up to this many entries stay inline in the log line (~10 KB). */
export const INLINE_PLAN_MAX = 64;
const PLAN_FORMAT = 'ckpt-restore-plan/1';
const RESULT_FORMAT = 'ckpt-restore-result/1';
const BLOB_ID = /^[0-9a-f]{64}$/;

const loaded = new WeakMap<EventBase, RestorePlanEntry[]>();

/** The fields of `restore_started` that carry `plan`: inline when small, else a durable blob reference. */
export async function planFields(blobs: BlobStore, plan: readonly RestorePlanEntry[]): Promise<Record<string, unknown>> {
  if (plan.length <= INLINE_PLAN_MAX) return { plan };
  const { id } = await blobs.put(Buffer.from(JSON.stringify({ format: PLAN_FORMAT, plan }), 'utf8'));
  return { planBlob: id, planCount: plan.length };
}

/** A `restore_committed` result: path lists moved to a blob when long (counts and the blob id stay inline). */
export async function resultFields(blobs: BlobStore, result: Record<string, unknown>): Promise<Record<string, unknown>> {
  const lists = ['restored', 'deleted', 'skipped', 'drift'] as const;
  const total = lists.reduce((n, k) => n + (Array.isArray(result[k]) ? (result[k] as unknown[]).length : 0), 0);
  if (total <= INLINE_PLAN_MAX) return result;
  const { id } = await blobs.put(Buffer.from(JSON.stringify({ format: RESULT_FORMAT, result }), 'utf8'));
  const out: Record<string, unknown> = { resultBlob: id };
  for (const [k, v] of Object.entries(result)) {
    if ((lists as readonly string[]).includes(k) && Array.isArray(v)) out[`${k}Count`] = v.length;
    else out[k] = v;
  }
  return out;
}

/** True when `e` is a `restore_started` whose plan is in a blob. */
export function hasPlanBlob(e: EventBase): boolean {
  return e.type === 'restore_started' && typeof e.planBlob === 'string';
}

/**
 * The plan of a `restore_started`: inline, or loaded by `loadPlans`; undefined when it is in a blob
 * that was not loaded. LOG_CORRUPT when the event has neither.
 */
export function loadedPlan(e: EventBase): RestorePlanEntry[] | undefined {
  if (Array.isArray(e.plan)) return e.plan as RestorePlanEntry[];
  if (!hasPlanBlob(e)) throw new CkptError('LOG_CORRUPT', `restore_started at seq ${e.seq} has no plan`, { seq: e.seq });
  return loaded.get(e);
}

/** The plan of a `restore_started`; INTERNAL when it is in a blob nobody loaded (a caller forgot `loadPlans`). */
export function planOf(e: RestoreStartedEvent | EventBase): RestorePlanEntry[] {
  const plan = loadedPlan(e);
  if (!plan) throw new CkptError('INTERNAL', `the plan of restore ${String(e.id)} (blob ${String(e.planBlob)}) was not loaded`, { seq: e.seq });
  return plan;
}

/**
 * Loads the plan blobs of `events` (those of `which`, default every one not loaded yet). A missing
 * blob or one that does not decode to a valid plan is LOG_CORRUPT: the log refers to a journal that is
 * not there, and nothing may be done from a guess. A blob store that cannot be reached is IO.
 */
export async function loadPlans(blobs: BlobStore, events: readonly EventBase[], which?: (e: EventBase) => boolean): Promise<void> {
  for (const e of events) {
    if (!hasPlanBlob(e) || loaded.has(e) || (which && !which(e))) continue;
    const id = String(e.planBlob);
    const where = { seq: e.seq, blob: id };
    if (!BLOB_ID.test(id)) throw new CkptError('LOG_CORRUPT', `restore_started at seq ${e.seq}: bad plan blob id`, where);
    let raw: Buffer;
    try {
      raw = await blobs.get(id);
    } catch (err) {
      // A store that cannot be reached now (S3 away: IO, retryable) is not a damaged log: the code stays.
      if (isCkptError(err, 'IO')) throw new CkptError('IO', `the plan of the restore at seq ${e.seq} (blob ${id}) cannot be read now: ${err.message}`, { ...where, ...err.data }, { cause: err });
      const why = isCkptError(err) ? err.code : 'unreadable';
      throw new CkptError('LOG_CORRUPT', `the plan of the restore at seq ${e.seq} (blob ${id}) cannot be read: ${why}`, where, { cause: err });
    }
    const plan = decodePlan(raw, e.seq);
    if (typeof e.planCount === 'number' && e.planCount !== plan.length) {
      throw new CkptError('LOG_CORRUPT', `the plan of the restore at seq ${e.seq} has ${plan.length} entries, the log says ${e.planCount}`, where);
    }
    loaded.set(e, plan);
  }
}

/** Decodes a plan blob; every entry is checked as a plan entry (LOG_CORRUPT otherwise). */
export function decodePlan(raw: Buffer, seq: number): RestorePlanEntry[] {
  const bad = (why: string): CkptError => new CkptError('LOG_CORRUPT', `the plan of the restore at seq ${seq} is invalid: ${why}`, { seq });
  let doc: unknown;
  try {
    doc = JSON.parse(raw.toString('utf8'));
  } catch {
    throw bad('not JSON');
  }
  const d = doc as { format?: unknown; plan?: unknown };
  if (typeof doc !== 'object' || doc === null || d.format !== PLAN_FORMAT || !Array.isArray(d.plan)) throw bad('not a plan document');
  // The same checks as a plan inline in the log (format/stored-path.ts), plus: no path twice.
  const plan = validateRestorePlan(d.plan, { seq });
  const seen = new Set<string>();
  for (const entry of plan) {
    if (seen.has(entry.path)) throw bad(`path ${JSON.stringify(entry.path)} appears twice`);
    seen.add(entry.path);
  }
  return plan;
}
