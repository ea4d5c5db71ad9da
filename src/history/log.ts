// `ckpt log` (DESIGN §9): the checkpoints of a session — every capture with its tag, seq, turn,
// tool, time and files — in log order, and its turns. Recovery captures of restores are listed too
// (tool `restore`, `restoreTo` naming the tag restored to): their tag is what undoes the restore.
// Entries before the prune point are marked `pruned` (their tags no longer restore); entries a later
// rewind moved the conversation back past are marked `rewound` (still restorable).
import type { CaptureEvent, EventBase, FileState, TurnEvent } from '../format/event.js';
import { prunedThrough } from '../session/positions.js';

export interface CheckpointEntry {
  tag: string;
  seq: number;
  turn: number;
  tool: string;
  at: string;
  reason?: string;
  files: { path: string; state: FileState }[];
  /** A restore's recovery capture: the tag that restore went to (restoring to this entry's tag undoes it). */
  restoreTo?: string;
  /** Before the session's prune point: this tag no longer restores (TAG_PRUNED). */
  pruned?: true;
  /** A later rewind moved the conversation back before this entry (it stays restorable). */
  rewound?: true;
}

export interface TurnEntry {
  turn: number;
  seq: number;
  at: string;
  /** The user's message, when the turn recorded it. */
  text?: string;
  messageCount?: number;
  pruned?: true;
  rewound?: true;
}

export interface RewindEntry {
  seq: number;
  at: string;
  to: string;
}

export function listCheckpoints(events: readonly EventBase[]): CheckpointEntry[] {
  const marks = historyMarks(events);
  return events
    .filter((e): e is CaptureEvent => e.type === 'capture')
    .map((c) => {
      const restoreTo = marks.restoreTo(c);
      return {
        tag: c.tag,
        seq: c.seq,
        turn: c.turn,
        tool: c.tool,
        at: c.at,
        ...(c.reason ? { reason: c.reason } : {}),
        files: c.files.map((f) => ({ path: f.path, state: f.state })),
        ...(restoreTo !== undefined ? { restoreTo } : {}),
        ...(c.seq - 1 < marks.prunedBefore ? { pruned: true as const } : {}),
        ...(marks.rewound(c.seq) ? { rewound: true as const } : {}),
      };
    });
}

export function listTurns(events: readonly EventBase[]): TurnEntry[] {
  const marks = historyMarks(events);
  return events
    .filter((e): e is TurnEvent => e.type === 'turn')
    .map((t) => ({
      turn: t.turn,
      seq: t.seq,
      at: t.at,
      ...(typeof t.text === 'string' && t.text !== '' ? { text: t.text } : {}),
      ...(typeof t.messageCount === 'number' ? { messageCount: t.messageCount } : {}),
      ...(t.seq < marks.prunedBefore ? { pruned: true as const } : {}),
      ...(marks.rewound(t.seq) ? { rewound: true as const } : {}),
    }));
}

/** The earliest tag that still restores when the session was pruned (`N` of the turn at the prune point), else undefined. */
export function earliestRestorableTag(events: readonly EventBase[]): string | undefined {
  const before = prunedThrough(events);
  if (before === 0) return undefined;
  const turn = events.find((e) => e.type === 'turn' && e.seq === before);
  return turn ? String(turn.turn) : `@${before}`;
}

export function listRewinds(events: readonly EventBase[]): RewindEntry[] {
  return events.filter((e) => e.type === 'rewind').map((e) => ({ seq: e.seq, at: e.at, to: String(e.to) }));
}

/** What marks entries: the prune point, the ranges rewinds superseded, the targets of restores. */
function historyMarks(events: readonly EventBase[]) {
  const ranges: [number, number][] = [];
  const targets = new Map<string, string>();
  events.forEach((e, i) => {
    if (e.type === 'rewind' && typeof e.toSeq === 'number') ranges.push([e.toSeq, ownRestoreStart(events, i)]);
    if (e.type === 'restore_started' && typeof e.id === 'string' && typeof e.to === 'string') targets.set(e.id, e.to);
  });
  return {
    prunedBefore: prunedThrough(events),
    rewound: (seq: number) => ranges.some(([from, to]) => seq > from && seq < to),
    restoreTo(c: CaptureEvent): string | undefined {
      if (c.tool !== 'restore') return undefined;
      if (typeof c.restoreId === 'string' && targets.has(c.restoreId)) return targets.get(c.restoreId);
      return /^(?:restore|rewind) to (\S+)/.exec(c.reason ?? '')?.[1];
    },
  };
}

/**
 * The first seq of the restore a rewind made of itself (recovery capture, restore_started,
 * restore_committed, written just before the rewind event): that restore is not rewound away — its
 * tag undoes the rewind. The rewind's own seq when it restored nothing.
 */
function ownRestoreStart(events: readonly EventBase[], rewindIndex: number): number {
  let j = rewindIndex - 1;
  if (events[j]?.type === 'restore_committed') j--;
  if (events[j]?.type === 'restore_started') j--;
  const e = events[j];
  return e && e.type === 'capture' && e.tool === 'restore' ? e.seq : events[rewindIndex]!.seq;
}
