// Resolving tags against a session log (DESIGN §2): a tag names a *position*, the seq of the last
// event that happened before it (0 = before everything). `N` is the seq of turn N's event (turn 0
// starts right after the session event), `N.K` the seq just before capture N.K, `@S` is S itself.
import { CkptError } from '../errors.js';
import type { CaptureEvent, EventBase, FileImage } from '../format/event.js';
import { isStoredPath } from '../format/stored-path.js';
import { formatTag, parseTag } from '../format/tag.js';

/**
 * An image at a position. `implied`: a folder no capture after the position records, inferred from
 * what it held; a restore only makes it where it is missing and leaves whatever else is there alone.
 */
export type PositionImage = FileImage & { implied?: true };

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
    const turns = events.filter((e) => e.type === 'turn').map((e) => e.turn as number);
    const lastTurn = turns.length ? Math.max(...turns) : 0;
    throw new CkptError('TAG_NOT_FOUND', `tag ${formatTag(tag)} not found: ${whatExists(events, tag, turns, last)}`, { tag: text, lastTurn, lastSeq: last });
  }
  const prunedBefore = prunedThrough(events);
  if (seq < prunedBefore) {
    // Named as `log` names it (the turn starting there, else @S): what the user can restore instead.
    const turn = events.find((e) => e.type === 'turn' && e.seq === prunedBefore);
    const earliest = turn ? String(turn.turn) : `@${prunedBefore}`;
    throw new CkptError('TAG_PRUNED', `history before @${prunedBefore} was pruned; tag ${text} is no longer restorable (the earliest tag that is: ${earliest})`, {
      tag: text,
      prunedBefore,
      earliestTag: earliest,
    });
  }
  return seq;
}

/** Says, in turns, what a session has when a tag names something it has not (TAG_NOT_FOUND). */
function whatExists(events: readonly EventBase[], tag: ReturnType<typeof parseTag>, turns: readonly number[], last: number): string {
  const turnRange = turns.length === 0 ? 'no turns yet' : turns.length === 1 ? `turn ${turns[0]} only` : `turns ${Math.min(...turns)} to ${Math.max(...turns)}`;
  if (tag.kind === 'seq') return `the session has ${last} event(s) (@1 to @${last}), ${turnRange}`;
  if (tag.k === 0 || !turns.includes(tag.turn) && tag.turn !== 0) return `the session has ${turnRange}${turns.length ? '' : ` (a turn starts when the user sends a message: 'ckpt turn')`}`;
  const ks = events.filter((e) => e.type === 'capture' && e.turn === tag.turn).map((e) => e.k as number);
  const name = tag.turn === 0 ? 'before the first turn there are' : `turn ${tag.turn} has`;
  return ks.length === 0 ? `${name} no checkpoints` : `${name} checkpoints ${tag.turn}.${Math.min(...ks)} to ${tag.turn}.${Math.max(...ks)}`;
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
 * A capture also tells of the folders above what it records: those of something present were
 * folders, and a tool capture's `newDirs` were absent. Paths not captured after the position are
 * unchanged since and absent from the map. Sorted by path.
 */
export function imagesAt(captures: readonly CaptureEvent[], position: number, filter?: readonly string[]): Map<string, PositionImage> {
  const out = new Map<string, PositionImage>();
  /** Paths some capture after the position records itself: the first such image of each. */
  const recorded = new Map<string, PositionImage>();
  const imply = (image: PositionImage): void => {
    if (!out.has(image.path) && matchesFilter(image.path, filter)) out.set(image.path, image);
  };
  /** Paths whose first image after the position is "there, not recorded: ignored" (a name un-ignored since). */
  const unrecorded = new Set<string>();
  for (const c of captures) {
    if (c.seq <= position) continue;
    for (const f of c.files) {
      if (!recorded.has(f.path)) recorded.set(f.path, f);
      // What a later capture found there is the best ckpt knows of such a path (a round-5 probe: the
      // agent un-ignored `.env`, then edited it; `restore 1` left the edit although the Edit's capture
      // held the user's content). Never a later "absent": what was there is never taken away for it.
      if (unrecorded.has(f.path) && f.state !== 'absent' && f.state !== 'skipped') {
        unrecorded.delete(f.path);
        out.set(f.path, f);
      }
      if (!out.has(f.path) && matchesFilter(f.path, filter)) {
        out.set(f.path, f);
        if (f.state === 'skipped' && f.why === 'ignored') unrecorded.add(f.path);
      }
    }
    // What a capture records of a path itself comes before what it implies of it.
    for (const f of c.files) {
      if (!isStoredPath(f.path)) continue; // reported by the planner; nothing is inferred from it
      if (f.state === 'absent') {
        // A tool capture's `newDirs`: its missing ancestor folders are absent images of this capture too.
        for (let d = parentOf(f.path), n = f.newDirs ?? 0; n > 0 && d !== ''; d = parentOf(d), n--) imply({ path: d, state: 'absent' });
      } else if (f.state !== 'skipped') {
        // Something was there, so every folder above it was: unless an earlier capture said otherwise,
        // that is their state at the position. Found by the real-history walk of tool captures: a
        // folder a restore re-created only as the parent of what it wrote was never recorded, so the
        // next restore that removed it again took it for drift.
        for (let d = parentOf(f.path); d !== ''; d = parentOf(d)) imply({ path: d, state: 'dir', implied: true });
      }
    }
  }
  // A folder some capture records itself is a recorded path, whatever told its state first; its own
  // first record (a scan's deletion or mode change) holds its mode at the position, unless that record
  // contradicts the earlier implied state (found by a restore-promise probe: a 0700 folder came back 0755).
  for (const [path, image] of out) {
    const own = image.implied ? recorded.get(path) : undefined;
    if (own) out.set(path, own.state === image.state ? own : { path, state: image.state });
  }
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The images a restore of `filter` (or of everything) considers: those under `filter`, and the folders
 * above them that existed at the position — placing a file re-creates its missing folders, so they are
 * planned (previewed) and recorded like the rest, and the restore's undo removes them again (found by a
 * preview probe: the undo of `restore 1 d/y.txt` was refused as drift on the folder `d` it made).
 */
export function restoreImagesAt(captures: readonly CaptureEvent[], position: number, filter?: readonly string[]): Map<string, PositionImage> {
  if (!filter) return imagesAt(captures, position);
  const out = new Map<string, PositionImage>();
  for (const [path, image] of imagesAt(captures, position)) {
    if (matchesFilter(path, filter) || (image.state === 'dir' && filter.some((f) => f.startsWith(`${path}/`)))) out.set(path, image);
  }
  return out;
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
