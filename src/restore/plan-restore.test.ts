// planRestore is pure: plans built from hand-written events and present images, no disk.
import { describe, expect, it } from 'vitest';
import type { EventBase, FileImage } from '../format/event.js';
import { candidatePaths, planRestore } from './plan-restore.js';

let seq = 0;
const ev = (type: string, fields: Record<string, unknown> = {}): EventBase => ({ v: 1, seq: ++seq, type, at: '2024-01-01T00:00:00.000Z', ...fields });
const file = (path: string, blob: string, mode = 0o644): FileImage => ({ path, state: 'file', blob, mode });
const absent = (path: string, newDirs?: number): FileImage => ({ path, state: 'absent', ...(newDirs ? { newDirs } : {}) });

function history(): EventBase[] {
  seq = 0;
  return [
    ev('session', { kind: 'root' }),
    ev('turn', { turn: 1 }), // seq 2
    ev('capture', { tag: '1.1', turn: 1, k: 1, tool: 'Write', files: [file('a', 'A1'), absent('n/x', 1)] }),
    ev('settle', { tag: '1.1', files: [file('a', 'A2'), file('n/x', 'X')] }),
    ev('turn', { turn: 2 }), // seq 5
    ev('capture', { tag: '2.1', turn: 2, k: 1, tool: 'Write', files: [file('a', 'A2'), file('late', 'L0'), { path: 'big', state: 'skipped', why: 'too-large' }] }),
    ev('settle', { tag: '2.1', files: [file('a', 'A3'), file('late', 'L1'), file('big', 'B1')] }),
  ];
}

describe('planRestore', () => {
  it('a folder implied by what it held is made where it is missing, and never replaces what stands there', () => {
    seq = 0;
    const events = [
      ev('session', { kind: 'root' }),
      ev('turn', { turn: 1 }), // seq 2
      ev('capture', { tag: '1.1', turn: 1, k: 1, tool: 'Edit', files: [file('d/e/f', 'F1')] }),
      // A restore once removed d (recorded) and later only re-created it as f's parent (not recorded).
      ev('settle', { tag: '1.1', files: [absent('d/e/f'), { path: 'd', state: 'absent' }] }),
    ];
    expect(candidatePaths(events, 2)).toEqual(['d', 'd/e', 'd/e/f']);
    const dir = (path: string): FileImage => ({ path, state: 'dir' });
    // Missing: made (and so recorded when the restore commits), before what goes into it.
    const made = planRestore({ events, toSeq: 2, present: new Map([absent('d'), absent('d/e'), absent('d/e/f')].map((i) => [i.path, i])) });
    expect(made.entries).toEqual([
      { path: 'd', action: 'mkdir' },
      { path: 'd/e', action: 'mkdir' },
      { path: 'd/e/f', action: 'write', blob: 'F1', mode: 0o644 },
    ]);
    expect(made.drift).toEqual([]);
    // There: nothing planned for the folders (not even "unchanged"), and no drift on d.
    const there = planRestore({ events, toSeq: 2, present: new Map([dir('d'), dir('d/e'), absent('d/e/f')].map((i) => [i.path, i])) });
    expect(there).toMatchObject({ entries: [{ path: 'd/e/f', action: 'write' }], unchanged: [], drift: [] });
    // A symlink where the folder was: left alone, and what is beneath it is not written through it.
    const link = { path: 'd', state: 'symlink', target: '/elsewhere' } as FileImage;
    const under = (path: string): FileImage => ({ path, state: 'skipped', why: 'symlinked-parent', at: 'd' }) as FileImage;
    const blocked = planRestore({ events, toSeq: 2, present: new Map([link, under('d/e'), under('d/e/f')].map((i) => [i.path, i])) });
    expect(blocked.entries).toEqual([]);
    expect(blocked.skipped).toEqual([{ path: 'd/e/f', why: 'symlinked-parent' }]);
  });

  it('uses the earliest image after the position, including paths first captured late', () => {
    const events = history();
    // `newDirs: 1` on n/x: the folder n was absent at that capture too (a candidate of its own).
    expect(candidatePaths(events, 2)).toEqual(['a', 'big', 'late', 'n', 'n/x']);
    expect(candidatePaths(events, 5)).toEqual(['a', 'big', 'late']);
    const present = new Map([file('a', 'A3'), file('late', 'L1'), file('big', 'B1'), file('n/x', 'X'), { path: 'n', state: 'dir' } as FileImage].map((i) => [i.path, i]));
    const plan = planRestore({ events, toSeq: 2, present });
    // Deletes deepest first (the folder after its content), then writes shallowest first.
    expect(plan.entries).toEqual([
      { path: 'n/x', action: 'delete' },
      { path: 'n', action: 'delete' },
      { path: 'a', action: 'write', blob: 'A1', mode: 0o644 },
      { path: 'late', action: 'write', blob: 'L0', mode: 0o644 },
    ]);
    expect(plan.skipped).toEqual([{ path: 'big', why: 'not-recorded: too-large' }]);
    expect(plan).toMatchObject({ drift: [], unchanged: [] });
  });

  it('reports drift against the last recorded after-state, unchanged paths, and unrecoverable present states', () => {
    const events = history();
    const present = new Map(
      [file('a', 'HAND'), file('late', 'L0'), { path: 'big', state: 'skipped', why: 'too-large' } as FileImage].map((i) => [i.path, i]),
    );
    const plan = planRestore({ events, toSeq: 5, present });
    expect(plan.drift).toEqual(['a']);
    expect(plan.unchanged).toEqual(['late']);
    expect(plan.entries.map((e) => e.path)).toEqual(['a']);
    const blocked = planRestore({ events, toSeq: 5, present: new Map([['a', { path: 'a', state: 'skipped', why: 'symlinked-parent' } as FileImage]]) });
    expect(blocked.skipped).toContainEqual({ path: 'a', why: 'symlinked-parent' });
    expect(blocked.skipped).toContainEqual({ path: 'late', why: 'present-not-read' });
  });

  it('a mode-only difference is a write; an unknown after-state is never drift; filters restrict', () => {
    const events = history();
    events.push(ev('capture', { tag: '2.2', turn: 2, k: 2, tool: 'Bash', files: [file('m', 'M', 0o755)] }));
    const present = new Map([file('m', 'M', 0o644), file('a', 'zzz')].map((i) => [i.path, i]));
    const plan = planRestore({ events, toSeq: 7, present });
    expect(plan.entries).toEqual([{ path: 'm', action: 'write', blob: 'M', mode: 0o755 }]);
    expect(plan.drift).toEqual([]);
    const filtered = planRestore({ events, toSeq: 5, paths: ['a', 'nope'], present });
    expect(filtered.entries.map((e) => e.path)).toEqual(['a']);
    expect(filtered.skipped).toEqual([{ path: 'nope', why: 'not-captured-after-tag' }]);
    const bad = [...events, ev('capture', { tag: '2.3', turn: 2, k: 3, tool: 'x', files: [file('../etc/passwd', 'P')] })];
    expect(planRestore({ events: bad, toSeq: 8, present }).skipped).toEqual([{ path: '../etc/passwd', why: 'invalid-path' }]);
  });

  it('orders type changes: folders emptied and removed before a file takes their place, files removed before a folder takes theirs', () => {
    seq = 0;
    const dir = (path: string): FileImage => ({ path, state: 'dir' });
    const events = [
      ev('session', { kind: 'root' }),
      ev('turn', { turn: 1 }),
      // A scan: p was a file (now a folder holding p/a), q a folder holding q/b (now a file), l a symlink (now a folder).
      ev('capture', { tag: '1.1', turn: 1, k: 1, tool: 'scan', files: [file('p', 'P'), absent('p/a'), dir('q'), file('q/b', 'B'), { path: 'l', state: 'symlink', target: 'x' }, absent('l/m'), absent('l/m/n')] }),
      ev('settle', { tag: '1.1', files: [dir('p'), file('p/a', 'A'), file('q', 'Q'), absent('q/b'), dir('l'), dir('l/m'), file('l/m/n', 'N')] }),
    ];
    const present = new Map<string, FileImage & { at?: string }>([
      ['p', dir('p')],
      ['p/a', file('p/a', 'A')],
      ['q', file('q', 'Q')],
      ['q/b', { path: 'q/b', state: 'skipped', why: 'parent-not-directory', at: 'q' }],
      ['l', dir('l')],
      ['l/m', dir('l/m')],
      ['l/m/n', file('l/m/n', 'N')],
    ]);
    const plan = planRestore({ events, toSeq: 2, present });
    expect(plan.skipped).toEqual([]);
    expect(plan.entries).toEqual([
      { path: 'l/m/n', action: 'delete' },
      { path: 'l/m', action: 'delete' },
      { path: 'p/a', action: 'delete' },
      { path: 'l', action: 'symlink', target: 'x' },
      { path: 'p', action: 'write', blob: 'P', mode: 0o644 },
      { path: 'q', action: 'mkdir' },
      { path: 'q/b', action: 'write', blob: 'B', mode: 0o644 },
    ]);
  });
});
