// Inline before-images (DESIGN §3 "inline"): a tool capture may carry the content of its small new
// blobs inside its own event — `inline: { <blob id>: <base64 of the blob record> }` — so the log's one
// fsync makes the capture durable instead of three (blob, its folder, log). The record is the blob
// store's own (blob-header.ts), checked against its id when decoded like any stored blob. Pure: the
// validation the event decoder applies and the collection of the records of a list of events.
import { CkptError } from '../errors.js';
import { isBlobId, type StoredWhere } from './stored-path.js';

/** Content up to this many raw bytes may be inlined (larger content goes to the blob store first). */
export const INLINE_MAX_BYTES = 64 * 1024;

/** Base64 of at most a record of INLINE_MAX_BYTES stored raw. */
const MAX_BASE64 = Math.ceil((INLINE_MAX_BYTES + 64) / 3) * 4;

export type InlineBlobs = Record<string, string>;

/**
 * Checks an event's `inline` field (untrusted, read from the log): an object whose keys are blob ids
 * the event's `files` name and whose values are base64 of bounded length. LOG_CORRUPT otherwise.
 */
export function validateInline(value: unknown, files: readonly { blob?: string }[], where: StoredWhere): InlineBlobs {
  const bad = (why: string): CkptError => {
    const { what, ...data } = where;
    return new CkptError('LOG_CORRUPT', `${what ? `${what}: ` : ''}invalid inline content (${why})`, { ...data, field: 'inline' });
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('not an object');
  const named = new Set(files.map((f) => f.blob));
  for (const [id, b64] of Object.entries(value)) {
    if (!isBlobId(id) || !named.has(id)) throw bad(`${JSON.stringify(id.slice(0, 80))} is not a blob of the event's files`);
    // Its characters are not checked here (a regex over every line of every read costs a hook call
    // more than the check is worth): the content is decoded and verified against its id when read.
    if (typeof b64 !== 'string' || b64.length > MAX_BASE64 || b64.length % 4 !== 0) throw bad(`content of ${id} is not base64 of a bounded record`);
  }
  return value as InlineBlobs;
}

/** The inline records of `events` by blob id (decoded events: their `inline` fields were validated). */
export function inlineRecords(events: Iterable<{ type: string; inline?: unknown }>): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of events) {
    if ((e.type !== 'capture' && e.type !== 'settle') || e.inline === undefined) continue;
    for (const [id, b64] of Object.entries(e.inline as InlineBlobs)) out.set(id, b64);
  }
  return out;
}

/** The records of `inline` that `images` name (an event carries only the content of its own images). */
export function inlineOf(inline: InlineBlobs | undefined, images: readonly { blob?: string }[]): InlineBlobs | undefined {
  if (!inline) return undefined;
  const named = new Set(images.map((i) => i.blob));
  const kept = Object.entries(inline).filter(([id]) => named.has(id));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** An event without its inline content (what public outputs show: the images, not the bytes). */
export function withoutInline<E extends Record<string, unknown>>(event: E): E {
  if (event.inline === undefined) return event;
  const { inline: _, ...rest } = event;
  return rest as E;
}
