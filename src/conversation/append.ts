// Appending conversation events (issue 15, zero's AppendEvents / AppendEventUnlessExists): any event
// type that is not one of ckpt's own, in batches, atomically under the session lock. With `unlessExists`
// an event whose `id` is already in the log is not appended again — the check and the append happen
// under one lock, so two processes recording the same message never both write it.
import { CkptError } from '../errors.js';
import { CHECKPOINT_EVENT_TYPES, type EventBase, type NewEvent } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';

export interface AppendOptions {
  /** Skip events whose `id` is already in the log (or earlier in this batch). */
  unlessExists?: boolean;
}

export interface AppendResult {
  appended: EventBase[];
  /** Ids skipped because an event with that id was already recorded. */
  existing: string[];
}

const RESERVED_FIELDS = ['v', 'seq', 'at'];
const MAX_EVENT_BYTES = 1024 * 1024;

export async function appendConversation(session: SessionHandle, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
  events.forEach(checkEvent);
  if (options.unlessExists && events.some((e) => typeof e.id !== 'string')) {
    throw new CkptError('INVALID_ARGUMENT', 'append-unless-exists needs an `id` on every event');
  }
  if (events.length === 0) return { appended: [], existing: [] };
  return session.transaction(async (tx) => {
    const existing: string[] = [];
    let batch = [...events];
    if (options.unlessExists) {
      const seen = new Set<string>();
      for (const e of await tx.read()) if (typeof e.id === 'string') seen.add(e.id);
      batch = [];
      for (const e of events) {
        const id = e.id as string;
        if (seen.has(id)) existing.push(id);
        else {
          seen.add(id);
          batch.push(e);
        }
      }
    }
    const appended = batch.length > 0 ? await tx.append(batch) : [];
    return { appended, existing };
  });
}

function checkEvent(e: NewEvent, index: number): void {
  if (e === null || typeof e !== 'object' || Array.isArray(e)) throw new CkptError('INVALID_ARGUMENT', `event ${index + 1} is not an object`);
  if (typeof e.type !== 'string' || !/^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/.test(e.type)) {
    throw new CkptError('INVALID_ARGUMENT', `event ${index + 1} needs a type (a name of letters, digits, _ . : -)`, { index });
  }
  if (CHECKPOINT_EVENT_TYPES.has(e.type)) {
    throw new CkptError('INVALID_ARGUMENT', `event ${index + 1}: type ${JSON.stringify(e.type)} is ckpt's own; use the operation that records it`, { index, type: e.type });
  }
  for (const f of RESERVED_FIELDS) {
    if (f in e) throw new CkptError('INVALID_ARGUMENT', `event ${index + 1}: ${f} is assigned by the log`, { index, field: f });
  }
  if (e.id !== undefined && (typeof e.id !== 'string' || e.id.length === 0 || e.id.length > 256)) {
    throw new CkptError('INVALID_ARGUMENT', `event ${index + 1}: id must be a string of 1 to 256 characters`, { index });
  }
  if (Buffer.byteLength(JSON.stringify(e)) > MAX_EVENT_BYTES) {
    throw new CkptError('BLOB_TOO_LARGE', `event ${index + 1} is over ${MAX_EVENT_BYTES} bytes`, { index });
  }
}
