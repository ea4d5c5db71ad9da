// End-to-end: turn, capture, settle, scan, log, diff, restore, undo and rewind through the real CLI
// binary — the JSON shapes of DESIGN §9 and the exit codes of §7.
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[], env?: NodeJS.ProcessEnv) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env });
const w = (rel: string) => join(dirs.workspace, rel);
const errorOf = (r: { stderr: string }) => JSON.parse(r.stderr).error;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-ck-');
  await ckpt(['session', 'new', '--id', 's1']);
});
afterEach(() => dirs.cleanup());

describe('checkpoint commands', () => {
  it('turn, capture, settle, log and diff print the shapes of DESIGN §9', async () => {
    await writeFile(w('a.txt'), 'one\n');
    // a.txt appeared outside any tool call: the turn start records it as the user's (issue 26 item 1).
    expect((await ckpt(['turn', '--message-count', '4', '--text', 'hi', '--json'])).json()).toEqual({ turn: 1, tag: '1', outside: { tag: '0.1', files: 1 } });
    const cap = (await ckpt(['capture', '--tool', 'Edit', 'a.txt', 'new.txt', '--json'])).json();
    expect(cap).toEqual({
      tag: '1.1',
      files: [
        { path: 'a.txt', state: 'file', bytes: 4, mode: 0o644 },
        { path: 'new.txt', state: 'absent' },
      ],
    });
    await writeFile(w('a.txt'), 'one\ntwo\n');
    await writeFile(w('new.txt'), 'fresh\n');
    const settled = (await ckpt(['settle', 'a.txt', 'new.txt', '--json'])).json();
    expect(settled.tag).toBe('1.1');
    expect(settled.files.map((f: { path: string }) => f.path)).toEqual(['a.txt', 'new.txt']);

    const log = (await ckpt(['log', '--json'])).json();
    expect(log.checkpoints).toEqual([
      { tag: '0.1', seq: 2, turn: 0, tool: 'user', reason: 'scan', at: expect.any(String), files: [{ path: 'a.txt', state: 'absent', change: 'created' }] },
      { tag: '1.1', seq: 5, turn: 1, tool: 'Edit', at: expect.any(String), files: [{ path: 'a.txt', state: 'file' }, { path: 'new.txt', state: 'absent', change: 'created' }] },
    ]);
    const diff = (await ckpt(['diff', '1', '--patch', '--json'])).json();
    expect(diff.changes).toEqual([
      { path: 'a.txt', status: 'M', added: 1, removed: 0 },
      { path: 'new.txt', status: 'A', added: 1, removed: 0 },
    ]);
    expect(diff.patch).toContain('+two');
    expect((await ckpt(['diff', '1'])).stdout).toMatch(/M a\.txt/);
  });

  it('restore: dry run, result shape, DRIFT refusal (exit 4, nothing changed), --force, undo of the restore', async () => {
    await writeFile(w('a.txt'), 'v1\n');
    await ckpt(['turn']);
    await ckpt(['capture', 'a.txt', 'b.txt']);
    await writeFile(w('a.txt'), 'v2\n');
    await writeFile(w('b.txt'), 'created\n');
    await ckpt(['settle', 'a.txt', 'b.txt']);

    const dry = (await ckpt(['restore', '1', '--dry-run', '--json'])).json();
    expect(dry).toMatchObject({ to: '1', restored: ['a.txt'], deleted: ['b.txt'], dryRun: true });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v2\n');

    await writeFile(w('a.txt'), 'edited by hand\n');
    const refused = await ckpt(['restore', '1', '--json']);
    expect(refused.code).toBe(4);
    expect(errorOf(refused)).toMatchObject({ code: 'DRIFT', data: { drift: ['a.txt'] } });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('edited by hand\n');
    expect(await readFile(w('b.txt'), 'utf8')).toBe('created\n');

    const forced = await ckpt(['restore', '1', '--force', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    const r = forced.json();
    expect(r).toMatchObject({ to: '1', restored: ['a.txt'], deleted: ['b.txt'], skipped: [], drift: ['a.txt'], undo: '1.3' }); // 1.2: the hand edit of a.txt, recorded by the restore's look
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v1\n');
    await expect(stat(w('b.txt'))).rejects.toMatchObject({ code: 'ENOENT' });

    const undone = (await ckpt(['restore', r.undo, '--json'])).json();
    expect(undone).toMatchObject({ restored: expect.arrayContaining(['a.txt', 'b.txt']) });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('edited by hand\n');
    expect(await readFile(w('b.txt'), 'utf8')).toBe('created\n');
  });

  it('undo TAG PATH restores one file only; rewind returns the watermark', async () => {
    await writeFile(w('a.txt'), 'a1\n');
    await writeFile(w('b.txt'), 'b1\n');
    await ckpt(['turn', '--message-count', '7']);
    await ckpt(['capture', 'a.txt', 'b.txt']);
    await writeFile(w('a.txt'), 'a2\n');
    await writeFile(w('b.txt'), 'b2\n');
    await ckpt(['settle', 'a.txt', 'b.txt']);
    const undo = (await ckpt(['undo', '1', 'a.txt', '--json'])).json();
    expect(undo).toMatchObject({ to: '1', restored: ['a.txt'], deleted: [] });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('a1\n');
    expect(await readFile(w('b.txt'), 'utf8')).toBe('b2\n');

    await ckpt(['turn', '--message-count', '12']);
    const rewound = (await ckpt(['rewind', '1', '--json'])).json();
    expect(rewound).toMatchObject({ to: '1', restored: ['b.txt'], watermark: { turn: 1, messageCount: 7 } });
    expect(await readFile(w('b.txt'), 'utf8')).toBe('b1\n');
  });

  it('scan records shell effects and restore undoes them', async () => {
    await writeFile(w('keep.txt'), 'k\n');
    await writeFile(w('doomed.txt'), 'd\n');
    // `session new` took the baseline (the baseline trap, issue 11): the first scan records these two as created.
    const first = (await ckpt(['scan', '--json'])).json();
    expect(first).toMatchObject({ tag: '0.1' });
    expect(first.baseline).toBeUndefined();
    expect(first.files.map((f: { path: string; change: string }) => `${f.change}:${f.path}`).sort()).toEqual(['created:doomed.txt', 'created:keep.txt']);
    await ckpt(['turn']);
    await rm(w('doomed.txt'));
    await writeFile(w('made.txt'), 'm\n');
    const scanned = (await ckpt(['scan', '--tool', 'Bash', '--json'])).json();
    expect(scanned.tag).toBe('1.1');
    expect(scanned.files.map((f: { path: string; change: string }) => `${f.change}:${f.path}`).sort()).toEqual(['created:made.txt', 'deleted:doomed.txt']);
    const r = (await ckpt(['restore', '1', '--json'])).json();
    expect(r).toMatchObject({ restored: ['doomed.txt'], deleted: ['made.txt'] });
    expect(await readFile(w('doomed.txt'), 'utf8')).toBe('d\n');
  });

  it('exit codes: PATH_ESCAPE 2, bad tag 2, unknown tag 3, no session 3; CKPT_DISABLE is a reported no-op', async () => {
    const escape = await ckpt(['capture', '../outside.txt', '--json']);
    expect(escape.code).toBe(2);
    expect(errorOf(escape).code).toBe('PATH_ESCAPE');
    expect((await ckpt(['restore', '1.x', '--json'])).code).toBe(2);
    const unknown = await ckpt(['restore', '9', '--json']);
    expect(unknown.code).toBe(3);
    expect(errorOf(unknown).code).toBe('TAG_NOT_FOUND');
    expect((await ckpt(['--session', 'nope', 'log', '--json'])).code).toBe(3);
    const off = await ckpt(['capture', 'x.txt', '--json'], { CKPT_DISABLE: '1' });
    expect(off.json()).toEqual({ tag: null, files: [], disabled: true });
    expect((await ckpt(['capture', 'x.txt'], { CKPT_DISABLE: '1' })).stdout).toContain('disabled');
    // settle says so too (it printed "settled 0 path(s)", as if nothing needed settling).
    expect((await ckpt(['settle', 'x.txt', '--json'], { CKPT_DISABLE: '1' })).json()).toEqual({ tag: null, files: [], disabled: true });
    expect((await ckpt(['settle', 'x.txt'], { CKPT_DISABLE: '1' })).stdout.trim()).toBe('capture is disabled (CKPT_DISABLE): nothing recorded');
  });
});
