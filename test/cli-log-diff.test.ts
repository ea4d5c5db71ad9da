// `ckpt log` and `ckpt diff` for people (issue 10, items 19–20): turn headers with the user's message,
// relative times, long file lists shortened (--files for all), restores naming their target, rewound
// and pruned entries marked (JSON only grows); diff shows mode and type changes the same way in text
// and JSON, and colours --patch on a terminal only.
import { chmod, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Session } from '../src/index.js';
import { runCli } from './helpers/cli.js';
import { libSession } from './helpers/lib-session.js';
import { CKPT_SH, quote, runInPty } from './helpers/pty.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let s: Session;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace });
const w = (rel: string) => join(dirs.workspace, rel);
const ESC = '\u001b[';

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-logdiff-');
  s = await libSession(dirs.store, dirs.workspace, 'ld');
});
afterEach(() => dirs.cleanup());

describe('ckpt log', () => {
  it('shows turns with their text, shortens long file lists, names restore targets, marks rewound entries', async () => {
    await s.turn({ text: 'add the parser' });
    const many = Array.from({ length: 7 }, (_, i) => `f${i}.txt`);
    for (const f of many) await writeFile(w(f), 'x\n');
    await s.capture(many, { tool: 'Edit' });
    for (const f of many) await writeFile(w(f), 'y\n');
    await s.settle(many);
    await s.turn({ text: 'now undo it' });
    const restored = await s.restore('1');
    await s.turn({ text: 'third' });
    await s.capture(['late.txt']);
    await writeFile(w('late.txt'), 'late\n');
    await ckpt(['rewind', '2']);

    const text = (await ckpt(['log'])).stdout;
    expect(text).toMatch(/^turn 1 {2}"add the parser" {2}· (just now|\d+ s ago)$/m);
    expect(text).toMatch(/^ {2}1\.1 +Edit +f0\.txt, f1\.txt, f2\.txt, … 4 more \(--files\)/m);
    expect(text).toMatch(new RegExp(`^ {2}${restored.undo!.replace('.', '\\.')} +restore +to 1 \\(restore ${restored.undo!.replace('.', '\\.')} undoes it\\)`, 'm'));
    expect(text).toMatch(/^turn 3 \[rewound\] {2}"third"/m);
    expect(text).toMatch(new RegExp(`^ {2}${restored.undo!.replace('.', '\\.')} .*\\[rewound\\]`, 'm')); // turn 2's restore, before the rewind's target
    expect(text).toMatch(/^ {2}3\.1 +capture +late\.txt \(new\) \[rewound\]/m);
    expect(text).toMatch(/⤺ rewound to 2/);
    const all = (await ckpt(['log', '--files'])).stdout;
    expect(all).toContain(many.join(', '));

    const json = (await ckpt(['log', '--json'])).json();
    // §9 fields are kept; entries only grow.
    expect(json.checkpoints[0]).toMatchObject({ tag: '1.1', seq: expect.any(Number), turn: 1, tool: 'Edit', at: expect.any(String) });
    expect(json.checkpoints[0].files).toHaveLength(7);
    expect(json.checkpoints.find((c: { tag: string }) => c.tag === restored.undo)).toMatchObject({ tool: 'restore', restoreTo: '1' });
    expect(json.checkpoints.find((c: { tag: string }) => c.tag === '3.1')).toMatchObject({ rewound: true });
    expect(json.turns.map((t: { turn: number; text?: string }) => [t.turn, t.text])).toEqual([
      [1, 'add the parser'],
      [2, 'now undo it'],
      [3, 'third'],
    ]);
    expect(json.rewinds).toEqual([{ seq: expect.any(Number), at: expect.any(String), to: '2' }]);
    // The rewind's own recovery capture (its undo) is not rewound away.
    const rewindUndo = json.checkpoints.at(-1);
    expect(rewindUndo).toMatchObject({ tool: 'restore', restoreTo: '2' });
    expect(rewindUndo.rewound).toBeUndefined();
  });

  it('marks pruned entries', async () => {
    for (let t = 1; t <= 3; t++) {
      await s.turn();
      await writeFile(w('a.txt'), `v${t}\n`);
      await s.capture(['a.txt']);
    }
    await ckpt(['prune', '--keep-turns', '1']);
    const json = (await ckpt(['log', '--json'])).json();
    expect(json.checkpoints.map((c: { tag: string; pruned?: boolean }) => [c.tag, Boolean(c.pruned)])).toEqual([
      ['1.1', true],
      ['2.1', true],
      ['3.1', false],
    ]);
    expect(json.earliestTag).toBe('3');
    const text = (await ckpt(['log'])).stdout;
    expect(text).toMatch(/^ {2}1\.1 .*\[pruned\]/m);
    expect(text).toMatch(/^history before tag 3 was pruned: 3 is the earliest tag that restores$/m);
  });
});

describe('ckpt diff', () => {
  it('writes mode changes (644 → 755) and type changes (symlink ↔ file) alike in text and JSON', async () => {
    await writeFile(w('run.sh'), 'echo hi\n');
    await chmod(w('run.sh'), 0o644);
    await symlink('run.sh', w('link'));
    await writeFile(w('plain'), 'text\n');
    await s.turn();
    await s.capture(['run.sh', 'link', 'plain']);
    await chmod(w('run.sh'), 0o755);
    await rm(w('link'));
    await writeFile(w('link'), 'now a file\n');
    await rm(w('plain'));
    await symlink('run.sh', w('plain'));
    await s.settle(['run.sh', 'link', 'plain']);

    const json = (await ckpt(['diff', '1', '--patch', '--json'])).json();
    expect(json.changes).toEqual([
      { path: 'link', status: 'M', added: 1, removed: 1, type: { from: 'symlink', to: 'file' }, link: { from: 'run.sh' } },
      { path: 'plain', status: 'M', added: 1, removed: 1, type: { from: 'file', to: 'symlink' }, link: { to: 'run.sh' } },
      { path: 'run.sh', status: 'M', added: 0, removed: 0, mode: { from: '644', to: '755' } },
    ]);
    expect(json.patch).toMatch(/--- a\/run\.sh\n\+\+\+ b\/run\.sh\n/);
    expect(json.patch).toContain('old mode 100644\nnew mode 100755\n');
    expect(json.patch).toContain('old mode 120000\nnew mode 100644\n');
    const text = (await ckpt(['diff', '1'])).stdout;
    expect(text).toMatch(/^M run\.sh .*mode 644 → 755$/m);
    expect(text).toMatch(/^M link .*symlink → file$/m);
    expect(text).toMatch(/^M plain .*file → symlink$/m);
    // The capture's text writes modes the same way.
    expect((await ckpt(['capture', 'run.sh'])).stdout).toMatch(/mode 755/);
  });

  it('colours --patch on a terminal, never when piped', async () => {
    await writeFile(w('a.txt'), 'one\n');
    await s.turn();
    await s.capture(['a.txt']);
    await writeFile(w('a.txt'), 'two\n');
    const piped = await ckpt(['diff', '1', '--patch']);
    expect(piped.stdout).toContain('+two');
    expect(piped.stdout).not.toContain(ESC);
    const tty = await runInPty(`${CKPT_SH} --store ${quote(dirs.store)} diff 1 --patch`, { cwd: dirs.workspace, env: { NO_COLOR: undefined, CI: undefined } });
    expect(tty.code, tty.screen).toBe(0);
    expect(tty.screen).toContain(`${ESC}32m+two`);
    expect(tty.screen).toContain(`${ESC}31m-one`);
  });

  it('writes no colour codes into a pipe when CI is set (picocolors alone would)', async () => {
    await writeFile(w('a.txt'), 'one\n');
    await s.turn({ text: 'colours' });
    await s.capture(['a.txt']);
    await writeFile(w('a.txt'), 'two\n');
    const env = { NO_COLOR: undefined, CI: '1' };
    for (const args of [['diff', '1', '--patch'], ['log'], ['status'], ['show', '1']]) {
      const run = await runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout + run.stderr, args.join(' ')).not.toContain(ESC);
    }
  });
});
