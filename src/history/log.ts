// `ckpt log` (DESIGN §9): the checkpoints of a session — every capture with its tag, seq, turn,
// tool, time and files — in log order. Recovery captures of restores are listed too (tool `restore`):
// their tag is what undoes the restore.
import type { CaptureEvent, EventBase, FileState } from '../format/event.js';

export interface CheckpointEntry {
  tag: string;
  seq: number;
  turn: number;
  tool: string;
  at: string;
  reason?: string;
  files: { path: string; state: FileState }[];
}

export function listCheckpoints(events: readonly EventBase[]): CheckpointEntry[] {
  return events
    .filter((e): e is CaptureEvent => e.type === 'capture')
    .map((c) => ({
      tag: c.tag,
      seq: c.seq,
      turn: c.turn,
      tool: c.tool,
      at: c.at,
      ...(c.reason ? { reason: c.reason } : {}),
      files: c.files.map((f) => ({ path: f.path, state: f.state })),
    }));
}
