// `ckpt log` (DESIGN §9): the checkpoints of a session — every capture with its tag, seq, turn,
// tool, time and files — in log order, and its turns. Recovery captures of restores are listed too
// (tool `restore`, `restoreTo` naming the tag restored to): their tag is what undoes the restore.
// Entries before the prune point are marked `pruned` (their tags no longer restore); entries a later
// rewind moved the conversation back past are marked `rewound` (still restorable).
// Each file carries what its capture's settle found afterwards when that tells more than the
// before-image: `change` (created / deleted), a link's `target`, and a rename — a deleted file whose
// content a created file of the same checkpoint holds, as git detects renames — as `renamedTo` /
// `renamedFrom` (issue 29).
import type { CaptureEvent, EventBase, FileImage, FileState, SettleEvent, TurnEvent } from '../format/event.js';
import { prunedThrough } from '../session/positions.js';
import { restoreTargetOf } from '../format/restore-reason.js';

export interface CheckpointEntry {
  tag: string;
  seq: number;
  turn: number;
  tool: string;
  at: string;
  reason?: string;
  files: CheckpointFile[];
  /** A restore's recovery capture: the tag that restore went to (restoring to this entry's tag undoes it). */
  restoreTo?: string;
  /** A recovery capture whose restore was aborted before it changed anything (interrupted, or it failed early). */
  aborted?: true;
  /** Before the session's prune point: this tag no longer restores (TAG_PRUNED). */
  pruned?: true;
  /** A later rewind moved the conversation back before this entry (it stays restorable). */
  rewound?: true;
}

export interface CheckpointFile {
  /** The path and its state before the change (the before-image). */
  path: string;
  state: FileState;
  /** What the change did, when the checkpoint's settle says (a created path is also `state: "absent"`). */
  change?: 'created' | 'deleted';
  /** A symbolic link's target: after the change when it made or changed the link, else before it. */
  target?: string;
  /** A deleted file whose content a file created by the same checkpoint holds: that file. */
  renamedTo?: string;
  /** A created file holding the content of a file the same checkpoint deleted: that file. */
  renamedFrom?: string;
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

/**
 * An agent lifecycle event in the timeline (issue 26 item 7): `agent_compaction` (the agent was about
 * to compact its context: PreCompact / PreCompress), `compaction` (a summary recorded through
 * ckpt), `end` (the agent's session ended).
 */
export interface LifecycleEntry {
  seq: number;
  at: string;
  type: 'agent_compaction' | 'compaction' | 'end';
  agent?: string;
  /** manual | auto (agent_compaction). */
  trigger?: string;
  /** Why the session ended (end). */
  reason?: string;
}

const LIFECYCLE_TYPES: ReadonlySet<string> = new Set(['agent_compaction', 'compaction', 'end']);

export function listLifecycle(events: readonly EventBase[]): LifecycleEntry[] {
  return events
    .filter((e) => LIFECYCLE_TYPES.has(e.type))
    .map((e) => ({
      seq: e.seq,
      at: e.at,
      type: e.type as LifecycleEntry['type'],
      ...(typeof e.agent === 'string' ? { agent: e.agent } : {}),
      ...(typeof e.trigger === 'string' ? { trigger: e.trigger } : {}),
      ...(typeof e.reason === 'string' ? { reason: e.reason } : {}),
    }));
}

export interface RewindEntry {
  seq: number;
  at: string;
  to: string;
}

/** The event types listCheckpoints looks at: it gives the same entries for a log read with only these. */
export const CHECKPOINT_LIST_TYPES: ReadonlySet<string> = new Set(['capture', 'settle', 'rewind', 'restore_started', 'restore_committed', 'restore_aborted', 'prune']);

export function listCheckpoints(events: readonly EventBase[]): CheckpointEntry[] {
  const marks = historyMarks(events);
  const settles = new Map<string, SettleEvent>();
  for (const e of events) if (e.type === 'settle') settles.set((e as SettleEvent).tag, e as SettleEvent);
  return events
    .filter((e): e is CaptureEvent => e.type === 'capture')
    .map((c) => {
      const restoreTo = marks.restoreTo(c);
      const settle = settles.get(c.tag);
      return {
        tag: c.tag,
        seq: c.seq,
        turn: c.turn,
        tool: c.tool,
        at: c.at,
        ...(c.reason ? { reason: c.reason } : {}),
        files: checkpointFiles(c.files, settle && settle.seq > c.seq ? settle.files : []),
        ...(restoreTo !== undefined ? { restoreTo } : {}),
        ...(typeof c.restoreId === 'string' && marks.aborted.has(c.restoreId) ? { aborted: true as const } : {}),
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

function checkpointFiles(before: readonly FileImage[], after: readonly FileImage[]): CheckpointFile[] {
  const afterOf = new Map(after.map((f) => [f.path, f]));
  const files: CheckpointFile[] = before.map((b) => {
    const a = afterOf.get(b.path);
    const change = b.state === 'absent' && a && a.state !== 'absent' ? 'created' : a?.state === 'absent' && b.state !== 'absent' && b.state !== 'skipped' ? 'deleted' : undefined;
    const target = a?.state === 'symlink' ? a.target : b.state === 'symlink' ? b.target : undefined;
    return { path: b.path, state: b.state, ...(change ? { change } : {}), ...(target !== undefined ? { target } : {}) };
  });
  // Renames: each deleted file pairs with one created file of the same content (first by path order).
  const created = new Map<string, CheckpointFile[]>();
  for (const f of files) {
    const blob = afterOf.get(f.path)?.blob;
    if (f.change === 'created' && afterOf.get(f.path)?.state === 'file' && blob) created.set(blob, [...(created.get(blob) ?? []), f]);
  }
  const beforeOf = new Map(before.map((f) => [f.path, f]));
  for (const f of files) {
    const b = beforeOf.get(f.path);
    if (f.change !== 'deleted' || b?.state !== 'file' || !b.blob) continue;
    const to = created.get(b.blob)?.shift();
    if (!to) continue;
    f.renamedTo = to.path;
    to.renamedFrom = f.path;
  }
  return files;
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
  const aborted = new Set<string>();
  events.forEach((e, i) => {
    if (e.type === 'rewind' && typeof e.toSeq === 'number') ranges.push([e.toSeq, ownRestoreStart(events, i)]);
    if (e.type === 'restore_started' && typeof e.id === 'string' && typeof e.to === 'string') targets.set(e.id, e.to);
    if (e.type === 'restore_aborted' && typeof e.id === 'string') aborted.add(e.id);
  });
  return {
    aborted,
    prunedBefore: prunedThrough(events),
    rewound: (seq: number) => ranges.some(([from, to]) => seq > from && seq < to),
    restoreTo(c: CaptureEvent): string | undefined {
      if (c.tool !== 'restore') return undefined;
      if (typeof c.restoreId === 'string' && targets.has(c.restoreId)) return targets.get(c.restoreId);
      return restoreTargetOf(c.reason);
    },
  };
}

/**
 * The first seq of the restore a rewind made of itself (recovery capture, restore_started,
 * restore_committed, written just before the rewind event): that restore is not rewound away — its
 * tag undoes the rewind. The rewind's own seq when it restored nothing.
 */
function ownRestoreStart(events: readonly EventBase[], rewindIndex: number): number {
  let i = rewindIndex;
  // The event right before events[i] in the log, when the list holds it (a list of some types only
  // skips the others: a gap in seq is an event of another type).
  const previous = (): EventBase | undefined => {
    const e = events[i - 1];
    return e && e.seq === events[i]!.seq - 1 ? e : undefined;
  };
  if (previous()?.type === 'restore_committed') i--;
  if (previous()?.type === 'restore_started') i--;
  const e = previous();
  return e && e.type === 'capture' && e.tool === 'restore' ? e.seq : events[rewindIndex]!.seq;
}
