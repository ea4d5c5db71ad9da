// Resolving tags against a session log (DESIGN §2): a tag names a *position*, the seq of the last
// event that happened before it (0 = before everything). `N` is the seq of turn N's event (turn 0
// starts right after the session event), `N.K` the seq just before capture N.K, `@S` is S itself.
import { CkptError } from '../errors.js';
import type { CaptureEvent, EventBase, FileImage } from '../format/event.js';
import { formatTag, parseTag } from '../format/tag.js';

/** Resolves a tag to a position; TAG_NOT_FOUND when the log has no such point, TAG_PRUNED when retired. */
export function resolveTagSeq(events: readonly EventBase[], text: string): number {
  const tag = parseTag(text);
  const last = events.at(-1)?.seq ?? 0;
  let seq: number | undefined;
  if (tag.kind === 'seq') {
    seq = tag.seq <= last ? tag.seq : undefined;
  } else if (tag.k === 0) {
    seq = tag.turn === 0 ? Math.min(1, last) : events.find((e) => e.type === 'turn' && e.turn === tag.turn)?.seq;
  } else {
    const capture = events.find((e) => e.type === 'capture' && e.turn === tag.turn && e.k === tag.k);
    seq = capture ? capture.seq - 1 : undefined;
  }
  if (seq === undefined) {
    throw new CkptError('TAG_NOT_FOUND', `tag ${formatTag(tag)} not found in this session (it has events 1..${last})`, { tag: text });
  }
  const prunedBefore = prunedThrough(events);
  if (seq < prunedBefore) {
    throw new CkptError('TAG_PRUNED', `history before @${prunedBefore} was pruned; tag ${text} is no longer restorable`, { tag: text, prunedBefore });
  }
  return seq;
}

/** The highest `prune.before` in the log (0 when nothing was pruned). */
export function prunedThrough(events: readonly EventBase[]): number {
  let before = 0;
  for (const e of events) if (e.type === 'prune' && typeof e.before === 'number' && e.before > before) before = e.before;
  return before;
}

/**
 * The state at `position` of every path captured after it: the before-image of its earliest capture
 * after the position (DESIGN §2 — right even when a path was first captured long after the tag).
 * Paths not captured after the position are unchanged since and absent from the map. Sorted by path.
 */
export function imagesAt(captures: readonly CaptureEvent[], position: number, filter?: readonly string[]): Map<string, FileImage> {
  const out = new Map<string, FileImage>();
  for (const c of captures) {
    if (c.seq <= position) continue;
    for (const f of c.files) {
      if (!out.has(f.path) && matchesFilter(f.path, filter)) out.set(f.path, f);
      // A tool capture's `newDirs`: its missing ancestor folders are absent images of this capture too.
      if (f.state !== 'absent' || !f.newDirs) continue;
      for (let d = parentOf(f.path), n = f.newDirs; n > 0 && d !== ''; d = parentOf(d), n--) {
        if (!out.has(d) && matchesFilter(d, filter)) out.set(d, { path: d, state: 'absent' });
      }
    }
  }
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** True when `path` is `filter` or lies beneath it as a folder (no filter: every path). */
export function matchesFilter(path: string, filter: readonly string[] | undefined): boolean {
  if (!filter) return true;
  return filter.some((f) => path === f || path.startsWith(`${f}/`));
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}
