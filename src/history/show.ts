// What a tag names (DESIGN §2 tags, §9 `ckpt show`): its position in the log, the turn it falls in
// (number, message count, the user's text), the event just before it, and the checkpoint right after
// it — for `N.K` that is capture N.K itself (tool, reason, the paths it was about to change). Pure:
// a function of the session's events; adapters (CLI, MCP, HTTP) print it.
import type { CaptureEvent, EventBase, FileState, TurnEvent } from '../format/event.js';
import { resolveTagSeq } from '../session/positions.js';
import { publicImage } from '../format/public-image.js';

export interface CheckpointDetail {
  tag: string;
  seq: number;
  turn: number;
  k: number;
  tool: string;
  at: string;
  reason?: string;
  files: { path: string; state: FileState; bytes?: number; mode?: number; target?: string; why?: string }[];
}

export interface TagTurn {
  /** 0 before the first turn. */
  turn: number;
  /** Seq of the turn's `turn` event (absent for turn 0). */
  seq?: number;
  at?: string;
  /** Messages in the agent's transcript when the turn began, when the agent recorded it. */
  messageCount: number | null;
  /** The user's message that started the turn, when the agent recorded it. */
  text?: string;
}

export interface TagInfo {
  tag: string;
  /** The position: the seq of the last event before this point (see session/positions.ts). */
  position: number;
  /** Seq of the session's last event. */
  lastSeq: number;
  turn: TagTurn;
  /** The event at the position (what happened just before this point); null for an empty log. */
  event: { seq: number; type: string; at: string } | null;
  /** The first checkpoint after the point (for `N.K`, capture N.K); null when none follows. */
  next: CheckpointDetail | null;
  /** Tags of every capture of the same turn, in order. */
  turnCaptures: string[];
  /** Captures after the point, and the distinct paths they recorded: what a restore to it considers. */
  capturesAfter: number;
  pathsAfter: number;
}

/** Describes `tag` in `events`: TAG_NOT_FOUND / TAG_PRUNED / INVALID_ARGUMENT as resolveTagSeq. */
export function describeTag(events: readonly EventBase[], tag: string): TagInfo {
  const position = resolveTagSeq(events, tag);
  let turnEvent: TurnEvent | undefined;
  let event: EventBase | undefined;
  for (const e of events) {
    if (e.seq > position) break;
    event = e;
    if (e.type === 'turn') turnEvent = e as TurnEvent;
  }
  const captures = events.filter((e): e is CaptureEvent => e.type === 'capture');
  const after = captures.filter((c) => c.seq > position);
  const turn = turnEvent?.turn ?? 0;
  const paths = new Set<string>();
  for (const c of after) for (const f of c.files) paths.add(f.path);
  return {
    tag,
    position,
    lastSeq: events.at(-1)?.seq ?? 0,
    turn: describeTurn(turnEvent),
    event: event ? { seq: event.seq, type: event.type, at: event.at } : null,
    next: after[0] ? detail(after[0]) : null,
    turnCaptures: captures.filter((c) => c.turn === turn).map((c) => c.tag),
    capturesAfter: after.length,
    pathsAfter: paths.size,
  };
}

function describeTurn(e: TurnEvent | undefined): TagTurn {
  if (!e) return { turn: 0, messageCount: null };
  return {
    turn: e.turn,
    seq: e.seq,
    at: e.at,
    messageCount: typeof e.messageCount === 'number' ? e.messageCount : null,
    ...(typeof e.text === 'string' ? { text: e.text } : {}),
  };
}

function detail(c: CaptureEvent): CheckpointDetail {
  return {
    tag: c.tag,
    seq: c.seq,
    turn: c.turn,
    k: c.k,
    tool: c.tool,
    at: c.at,
    ...(c.reason ? { reason: c.reason } : {}),
    files: c.files.map(publicImage),
  };
}
