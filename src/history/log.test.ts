// listCheckpoints' reading of a checkpoint's settle (issue 29): created, deleted, link targets, and
// renames paired by content, one created file per deleted one; formatLog shows them in words.
import { describe, expect, it } from 'vitest';
import type { EventBase } from '../format/event.js';
import { listCheckpoints } from './log.js';
import { formatLog } from './log-text.js';

const X = 'a'.repeat(64);
const Y = 'b'.repeat(64);
const at = '2026-12-02T00:00:00.000Z';
const capture = (seq: number, tag: string, files: object[]) => ({ v: 1, seq, type: 'capture', at, tag, turn: 1, k: Number(tag.split('.')[1]), tool: 'scan', files }) as unknown as EventBase;
const settle = (seq: number, tag: string, files: object[]) => ({ v: 1, seq, type: 'settle', at, tag, files }) as unknown as EventBase;

describe('log entries from capture and settle', () => {
  it('pairs each deleted file with one created file of the same content; the rest stay deleted / created', () => {
    const events = [
      capture(3, '1.1', [
        { path: 'a1', state: 'file', blob: X },
        { path: 'a2', state: 'file', blob: X },
        { path: 'b', state: 'file', blob: Y },
        { path: 'n1', state: 'absent' },
        { path: 'n2', state: 'absent' },
        { path: 'l', state: 'symlink', target: 'old' },
      ]),
      settle(4, '1.1', [
        { path: 'a1', state: 'absent' },
        { path: 'a2', state: 'absent' },
        { path: 'b', state: 'file', blob: X },
        { path: 'n1', state: 'file', blob: X },
        { path: 'n2', state: 'symlink', target: 'b' },
        { path: 'l', state: 'symlink', target: 'new' },
      ]),
    ];
    const [c] = listCheckpoints(events);
    expect(c!.files).toEqual([
      { path: 'a1', state: 'file', change: 'deleted', renamedTo: 'n1' },
      { path: 'a2', state: 'file', change: 'deleted' },
      { path: 'b', state: 'file' },
      { path: 'n1', state: 'absent', change: 'created', renamedFrom: 'a1' },
      { path: 'n2', state: 'absent', change: 'created', target: 'b' },
      { path: 'l', state: 'symlink', target: 'new' },
    ]);
    // A rename stands where its new name is.
    expect(formatLog({ turns: [], checkpoints: [c!] }, { allFiles: true, now: Date.parse(at) })).toBe(
      'before the first turn\n  1.1  scan  a2 (deleted), b, a1 -> n1 (renamed), n2 (new link to b), l (link to new)  · just now',
    );
  });

  it('a capture without a settle (a tool call that never finished) keeps "(new)" for absent paths and marks nothing else', () => {
    const [c] = listCheckpoints([capture(3, '1.1', [{ path: 'x', state: 'absent' }, { path: 'y', state: 'file', blob: X }])]);
    expect(c!.files).toEqual([{ path: 'x', state: 'absent' }, { path: 'y', state: 'file' }]);
  });
});
