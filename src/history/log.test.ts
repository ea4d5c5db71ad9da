// listCheckpoints' reading of a checkpoint's settle (issue 29): created, deleted, link targets, and
// renames paired by content, one created file per deleted one; formatLog shows them in words.
import { describe, expect, it } from 'vitest';
import type { EventBase } from '../format/event.js';
import { CHECKPOINT_LIST_TYPES, listCheckpoints } from './log.js';
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

  it('gives the same entries from a log read with CHECKPOINT_LIST_TYPES only (what Session.checkpoints reads)', () => {
    const ev = (seq: number, type: string, fields: object = {}) => ({ v: 1, seq, type, at, ...fields }) as unknown as EventBase;
    const restoreCapture = (seq: number, tag: string, id: string) => ({ ...capture(seq, tag, [{ path: 'a', state: 'file', blob: Y }]), tool: 'restore', restoreId: id }) as EventBase;
    const events = [
      ev(1, 'session', { kind: 'root' }),
      ev(2, 'turn', { turn: 1 }),
      capture(3, '1.1', [{ path: 'a', state: 'file', blob: X }]),
      ev(4, 'message', { text: 'hi' }),
      settle(5, '1.1', [{ path: 'a', state: 'file', blob: Y }]),
      // A rewind's own restore, right before it: its tag undoes the rewind, so it is not rewound away.
      restoreCapture(6, '1.2', 'r1'),
      ev(7, 'restore_started', { id: 'r1', to: '1', recovery: '1.2', plan: [] }),
      ev(8, 'restore_committed', { id: 'r1', result: {} }),
      ev(9, 'rewind', { to: '1', toSeq: 2, watermark: {} }),
      // A restore capture that a conversation event separates from the next rewind is rewound away.
      restoreCapture(10, '1.3', 'r2'),
      ev(11, 'message', { text: 'between' }),
      ev(12, 'rewind', { to: '1.2', toSeq: 9, watermark: {} }),
      capture(13, '1.4', [{ path: 'b', state: 'absent' }]),
    ];
    const all = listCheckpoints(events);
    expect(all.map((c) => [c.tag, c.rewound ?? false])).toEqual([
      ['1.1', true],
      ['1.2', false],
      ['1.3', true],
      ['1.4', false],
    ]);
    expect(listCheckpoints(events.filter((e) => CHECKPOINT_LIST_TYPES.has(e.type)))).toEqual(all);
  });

  // A newcomer probe (2026-12-08): restores interrupted before they started (Ctrl-C while planning)
  // were listed as restores, each offering an undo of something that never happened.
  it('marks a recovery capture whose restore was aborted, also when read with CHECKPOINT_LIST_TYPES', () => {
    const ev = (seq: number, type: string, fields: object = {}) => ({ v: 1, seq, type, at, ...fields }) as unknown as EventBase;
    const events = [
      ev(1, 'turn', { turn: 1 }),
      { ...capture(2, '1.1', [{ path: 'a', state: 'file', blob: X }]), tool: 'restore', restoreId: 'r1', reason: 'restore to 1' } as EventBase,
      ev(3, 'restore_aborted', { id: 'r1', reason: 'interrupted before restore_started' }),
      ev(4, 'message', { text: 'between' }),
    ];
    const [c] = listCheckpoints(events.filter((e) => CHECKPOINT_LIST_TYPES.has(e.type)));
    expect(c).toMatchObject({ tag: '1.1', restoreTo: '1', aborted: true });
    expect(formatLog({ turns: [], checkpoints: [c!] }, { now: Date.parse(at) })).toMatch(/1\.1 {2}restore {2}to 1 \[aborted: it changed nothing\] {2}·/);
  });
});
