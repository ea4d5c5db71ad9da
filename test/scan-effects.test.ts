// Workspace scans (issue 4): the baseline, each kind of shell effect captured as ONE capture + settle
// and undone by a restore, ignore rules (never captured, never touched), the baseline shared by two
// sessions, settles not recorded twice, the size cap, and the time budget.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { chmod, lstat, mkdir, readFile, rename, stat, utimes, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { CaptureEvent, SettleEvent } from '../src/format/event.js';
import { capture } from '../src/capture/capture.js';
import { settle } from '../src/capture/settle.js';
import { startTurn } from '../src/capture/turn.js';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import { makeScanWorld, treeOf, type ScanWorld } from './fixtures/scan-world.js';
import { useWorlds } from './helpers/worlds.js';
import { CLOCK_SLACK_MS } from '../src/workspace/changed-at.js';

const world = useWorlds(makeScanWorld);

async function captures(w: ScanWorld): Promise<CaptureEvent[]> {
  return (await w.session.events()).filter((e): e is CaptureEvent => e.type === 'capture');
}

describe('baseline', () => {
  it('records nothing, stores every file, and a scan without changes records nothing', async () => {
    const w = await world();
    await w.write('a.txt', 'alpha');
    await w.write('src/b.ts', 'beta', 0o755);
    await w.link('ln', 'a.txt');
    const first = await scan(w.session);
    expect(first).toMatchObject({ tag: null, files: [], baseline: true, scanned: 3, hashed: 2, stored: 2 });
    expect(await captures(w)).toEqual([]);
    const again = await scan(w.session);
    expect(again.tag).toBeNull();
    expect(again.files).toEqual([]);
    expect(again.baseline).toBeUndefined();
  });
});

describe('shell effects are captured and undone', () => {
  it('create, modify, delete, chmod, file<->symlink, rename, new folders: one capture, one settle, restored exactly', async () => {
    const w = await world();
    await w.write('mod.txt', 'v1');
    await w.write('del.txt', 'doomed');
    await w.write('exec.sh', '#!/bin/sh\n', 0o644);
    await w.write('becomes-link.txt', 'plain');
    await w.link('becomes-file', 'mod.txt');
    await w.write('old-name.txt', 'moving');
    await w.write('keep/dir.txt', 'stays');
    await scan(w.session);
    const before = await treeOf(w.root);
    await startTurn(w.session);
    // What a shell command does, behind ckpt's back.
    await w.write('mod.txt', 'v2 longer');
    await w.remove('del.txt');
    await chmod(w.at('exec.sh'), 0o755);
    await w.link('becomes-link.txt', 'mod.txt');
    await w.remove('becomes-file');
    await w.write('becomes-file', 'now a file');
    await rename(w.at('old-name.txt'), w.at('keep/new-name.txt'));
    await w.write('gen/deep/out.js', 'generated');
    await w.write('keep/created.txt', 'new');

    const r = await scan(w.session, { tool: 'Bash' });
    expect(r.tag).toBe('1.1');
    const byPath = Object.fromEntries(r.files.map((f) => [f.path, f.change]));
    expect(byPath).toEqual({
      'mod.txt': 'modified',
      'del.txt': 'deleted',
      'exec.sh': 'mode',
      'becomes-link.txt': 'type',
      'becomes-file': 'type',
      'old-name.txt': 'deleted',
      'keep/new-name.txt': 'created',
      'gen/deep/out.js': 'created',
      'keep/created.txt': 'created',
      // Folders are recorded as paths of their own (issue 9 C): a restore removes exactly these.
      gen: 'created',
      'gen/deep': 'created',
    });
    const events = await w.session.events();
    const cap = events.find((e) => e.type === 'capture') as CaptureEvent;
    expect(cap).toMatchObject({ tag: '1.1', tool: 'Bash', reason: 'scan' });
    const settleEvent = events[events.indexOf(cap) + 1] as SettleEvent;
    expect(settleEvent).toMatchObject({ type: 'settle', tag: '1.1' });
    expect(settleEvent.files.map((f) => f.path).sort()).toEqual(cap.files.map((f) => f.path).sort());
    const created = cap.files.find((f) => f.path === 'gen/deep/out.js');
    expect(created).toEqual({ path: 'gen/deep/out.js', state: 'absent' });
    expect(cap.files.filter((f) => f.path === 'gen' || f.path === 'gen/deep')).toEqual([
      { path: 'gen', state: 'absent' },
      { path: 'gen/deep', state: 'absent' },
    ]);

    // Nothing new: the next scan records nothing.
    expect((await scan(w.session)).tag).toBeNull();

    const res = await restore(w.session, '1', {});
    expect(res.drift).toEqual([]);
    expect(await treeOf(w.root)).toEqual(before);
    await expect(lstat(w.at('gen'))).rejects.toMatchObject({ code: 'ENOENT' });
    // The restore is what ckpt knows now: a scan after it records nothing.
    expect((await scan(w.session)).files).toEqual([]);
  });

  it('numbers scans with the captures of the turn and keeps the earliest image per path', async () => {
    const w = await world();
    await w.write('f.txt', 'one');
    await scan(w.session);
    await startTurn(w.session);
    await w.write('f.txt', 'two');
    const c1 = await capture(w.session, ['other.txt'], { tool: 'Write' });
    expect(c1.tag).toBe('1.1');
    const s1 = await scan(w.session);
    expect(s1.tag).toBe('1.2');
    await w.write('f.txt', 'three!');
    const s2 = await scan(w.session);
    expect(s2.tag).toBe('1.3');
    await restore(w.session, '1.3', {});
    expect(await w.read('f.txt')).toBe('two');
    await restore(w.session, '1', { force: true });
    expect(await w.read('f.txt')).toBe('one');
  });

  it('does not record again what a settle already recorded, and records later shell changes with the settled before-image', async () => {
    const w = await world();
    await w.write('t.txt', 'base');
    await scan(w.session);
    await startTurn(w.session);
    const c = await capture(w.session, ['t.txt'], { tool: 'Edit' });
    await w.write('t.txt', 'by the agent');
    await settle(w.session, ['t.txt'], { tag: c.tag ?? undefined });
    expect((await scan(w.session)).files).toEqual([]);
    await w.write('t.txt', 'by the shell');
    const r = await scan(w.session);
    expect(r.files.map((f) => f.path)).toEqual(['t.txt']);
    await restore(w.session, r.tag!, {});
    expect(await w.read('t.txt')).toBe('by the agent');
  });

  it('a content change that keeps size and mtime is still seen (ctime, racy entries)', async () => {
    const w = await world();
    await w.write('same.txt', 'aaaa');
    const old = await stat(w.at('same.txt'));
    await scan(w.session);
    await w.write('same.txt', 'bbbb');
    await utimes(w.at('same.txt'), old.atime, old.mtime);
    const r = await scan(w.session, { racyMs: 0 });
    expect(r.files.map((f) => [f.path, f.change])).toEqual([['same.txt', 'modified']]);
  });
});

describe('ignore rules', () => {
  // Soak defect (issue 16): a scan running while another session's restore was in flight recorded that
  // restore's staging files as created files; a later restore then recreated them as workspace files.
  it('never records a concurrent restore\'s staging files (with or without rule files)', async () => {
    for (const rules of [false, true]) {
      const w = await world();
      if (rules) await w.write('.gitignore', '*.log\n');
      await w.write('a.txt', 'alpha');
      await scan(w.session);
      await startTurn(w.session);
      await w.write('.a.txt.ckpt-stage-0123abcd-1', 'in flight');
      await w.write('sub/.b.ckpt-stage-0123abcd-2', 'in flight');
      await w.write('c.txt', 'real');
      const r = await scan(w.session);
      expect(r.files.map((f) => f.path)).toEqual(['c.txt', 'sub']);
    }
  });

  it('never captures nor touches ignored paths; an ignored folder is not entered', async () => {
    const w = await world({ storeInside: true });
    await w.write('.gitignore', 'build/\n*.log\n!keep.log\n');
    await w.write('.ckptignore', 'secret.txt\n');
    await w.write('sub/.gitignore', 'local.tmp\n');
    await w.write('node_modules/pkg/index.js', 'x');
    await w.write('build/out.bin', 'b');
    await w.write('app.log', 'l');
    await w.write('keep.log', 'k');
    await w.write('secret.txt', 's');
    await w.write('sub/local.tmp', 't');
    await w.write('sub/code.ts', 'c');
    await mkdir(w.at('.git/objects'), { recursive: true });
    await w.write('.git/info/exclude', 'excluded.txt\n');
    await w.write('excluded.txt', 'e');
    const base = await scan(w.session);
    expect(base.scanned).toBe(5); // .gitignore, .ckptignore, keep.log, sub/.gitignore, sub/code.ts
    await startTurn(w.session);
    for (const p of ['node_modules/pkg/index.js', 'build/out.bin', 'app.log', 'secret.txt', 'sub/local.tmp', 'excluded.txt', '.git/HEAD']) {
      await w.write(p, 'changed by the shell');
    }
    await w.write('keep.log', 'changed too');
    await w.write('node_modules/new/file.js', 'n');
    const r = await scan(w.session);
    expect(r.files.map((f) => f.path)).toEqual(['keep.log']);
    await restore(w.session, '1', {});
    expect(await w.read('keep.log')).toBe('k');
    for (const p of ['node_modules/pkg/index.js', 'build/out.bin', 'app.log', 'secret.txt', 'sub/local.tmp', 'excluded.txt']) {
      expect(await w.read(p)).toBe('changed by the shell');
    }
    // The store inside the workspace is never scanned.
    const events = JSON.stringify(await w.session.events());
    expect(events).not.toContain('.ckpt-store');
  });

  it('a path that becomes ignored is not recorded as deleted but as no longer recorded; once it stops being ignored it is recorded again', async () => {
    const w = await world();
    await w.write('dist/a.js', 'a');
    await w.write('tmp.txt', 't');
    await scan(w.session);
    await w.write('.gitignore', 'dist/\n');
    const r1 = await scan(w.session);
    expect(r1.files.map((f) => [f.path, f.change, f.state])).toEqual([
      ['.gitignore', 'created', 'file'],
      ['dist', 'modified', 'skipped'],
      ['dist/a.js', 'modified', 'skipped'],
    ]);
    await w.write('.gitignore', '');
    const r2 = await scan(w.session);
    expect(r2.files.map((f) => [f.path, f.change, f.state])).toEqual([
      ['.gitignore', 'modified', 'file'],
      ['dist', 'created', 'dir'],
      ['dist/a.js', 'modified', 'file'],
    ]);
  });
});

describe('ignore rules that change', () => {
  // Found by a restore-promise probe: un-ignoring `.env` and `dist/` (a checkout of a branch whose
  // .gitignore lacks them) made the next restore to an earlier point delete them, and they were there.
  for (const by of ['scan', 'tool'] as const) {
    it(`a name un-ignored (.gitignore changed by ${by === 'scan' ? 'the shell' : 'a tool'}): a restore to before leaves what was there, ignored, as it is`, async () => {
      const w = await world();
      await w.write('.gitignore', 'dist/\n.env\n*.log\n');
      await w.write('main.js', 'src');
      await w.write('dist/app.js', 'built');
      await w.write('.env', 'TOKEN=s3cret');
      await w.write('logs/x.log', 'log');
      await sleep(5); // there before the scan (their inode times older than its start)
      await scan(w.session);
      await startTurn(w.session); // point 1: the three ignored files are there
      const before = await treeOf(w.root);
      if (by === 'scan') await w.write('.gitignore', '# nothing ignored\n');
      else {
        await capture(w.session, ['.gitignore'], { tool: 'Write' });
        await w.write('.gitignore', '# nothing ignored\n');
        await settle(w.session, ['.gitignore']);
      }
      // Made in the same step as the rule change (a checkout brings both): there was nothing before.
      // Past the clock slack after the turn's start: a file born within it may have been there at the
      // prompt, and is left by a restore (the test failed 1 run in 4 without the wait).
      await sleep(CLOCK_SLACK_MS + 50);
      await w.write('made-with.log', 'm');
      const found = await scan(w.session);
      expect(found.files.filter((f) => f.change === 'created').map((f) => f.path)).toEqual(['.env', 'dist', 'dist/app.js', 'logs/x.log', 'made-with.log']);
      // Created after the rules changed: recorded as created, and removed by a restore to before it.
      await startTurn(w.session);
      await w.write('new.txt', 'n');
      await w.write('dist/new.js', 'n');
      await scan(w.session);
      const r = await restore(w.session, '1', {});
      expect(r.deleted.sort()).toEqual(['dist/new.js', 'made-with.log', 'new.txt']);
      expect(r.skipped.map((x) => [x.path, x.why]).sort()).toEqual([
        ['.env', 'not-recorded: ignored'],
        ['dist', 'not-recorded: ignored'],
        ['dist/app.js', 'not-recorded: ignored'],
        ['logs/x.log', 'not-recorded: ignored'],
      ]);
      expect(await treeOf(w.root)).toEqual(before);
    });
  }

  it('a name un-ignored and edited in place by hand since (its inode born before the scan): a restore to before leaves it, edited', async () => {
    const w = await world();
    await w.write('.gitignore', '.env\n');
    await w.write('.env', 'TOKEN=old');
    await sleep(5);
    await scan(w.session); // the baseline
    await w.session.turn(); // scans first, so the restore looks at what changed since
    await sleep(5);
    // By hand after the last prompt: the rule dropped, and the file edited where it is (same inode, new ctime).
    await writeFile(w.at('.gitignore'), '');
    await writeFile(w.at('.env'), 'TOKEN=new');
    const r = await w.session.restore('1', { force: true });
    expect(r.deleted).toEqual([]);
    expect(r.skipped.map((x) => [x.path, x.why])).toContainEqual(['.env', 'not-recorded: ignored']);
    expect(await readFile(w.at('.env'), 'utf8')).toBe('TOKEN=new');
    expect(await readFile(w.at('.gitignore'), 'utf8')).toBe('.env\n');
  });

  it('a folder or file made after its name was un-ignored, and the rules of a subfolder, are judged by the rules of their time', async () => {
    const w = await world();
    await w.write('sub/.gitignore', 'gen/\n');
    await w.write('sub/gen/old.txt', 'old');
    await sleep(5);
    await scan(w.session);
    await startTurn(w.session);
    const before = await treeOf(w.root);
    await w.write('sub/.gitignore', '');
    await w.write('sub/fresh.txt', 'f');
    await scan(w.session);
    await restore(w.session, '1', {});
    expect(await treeOf(w.root)).toEqual(before);
  });
});

describe('sharing, size cap, budget', () => {
  it('the baseline is shared by a second session of the workspace', async () => {
    const w = await world();
    for (let i = 0; i < 20; i++) await w.write(`f${i}.txt`, `content ${i}`);
    await sleep(20);
    const first = await scan(w.session);
    expect(first.baseline).toBe(true);
    const other = await w.ws.create({ title: 'second' });
    const r = await scan(other, { racyMs: 0 });
    expect(r).toMatchObject({ tag: null, files: [], hashed: 0 });
    expect(r.baseline).toBeUndefined();
    await w.write('f3.txt', 'changed');
    const r2 = await scan(other);
    expect(r2.files.map((f) => f.path)).toEqual(['f3.txt']);
    // The first session does not record the change again: the second session's scan recorded it.
    expect((await scan(w.session)).files).toEqual([]);
  });

  it('files over the size cap are reported as skipped, never silently lost', async () => {
    const w = await world({ maxBlobBytes: 1000 });
    await w.write('small.txt', 'ok');
    await w.write('big.bin', 'x'.repeat(5000));
    const base = await scan(w.session);
    expect(base.skipped).toEqual([{ path: 'big.bin', why: 'too-large', bytes: 5000 }]);
    await w.write('small.txt', 'y'.repeat(2000));
    await w.write('huge-new.bin', 'z'.repeat(3000));
    const r = await scan(w.session);
    expect(r.files).toMatchObject([{ path: 'small.txt', change: 'modified', state: 'skipped', why: 'too-large' }]);
    expect(r.skipped.map((s) => s.path).sort()).toEqual(['big.bin', 'huge-new.bin', 'small.txt']);
    const cap = (await captures(w))[0]!;
    expect(cap.files).toMatchObject([{ path: 'small.txt', state: 'file' }]);
  });

  it('a scan cut short by its budget reports what it did not reach and records no deletions there', async () => {
    const w = await world();
    for (let d = 0; d < 5; d++) for (let i = 0; i < 5; i++) await w.write(`d${d}/f${i}.txt`, `${d}${i}`);
    await scan(w.session);
    await w.remove('d1/f1.txt');
    const cut = await scan(w.session, { budgetMs: 0 });
    expect(cut.truncated).toBe(true);
    expect(cut.pending).toEqual(['']);
    expect(cut.files).toEqual([]);
    const full = await scan(w.session);
    expect(full.files.map((f) => [f.path, f.change])).toEqual([['d1/f1.txt', 'deleted']]);
  });

  it('a scan cut short before the root keeps the rules ckpt knew: a folder ignored only then is not taken for "there before" (a seed of the scan property test)', async () => {
    const w = await world();
    await w.write('.gitignore', '*.log\n');
    await scan(w.session);
    await w.write('.gitignore', '*.log\ng/i/\n');
    expect((await scan(w.session, { budgetMs: 0 })).pending).toEqual(['']);
    await w.write('.gitignore', '*.log\n');
    await w.write('g/i/j.txt', 'made after the point');
    await startTurn(w.session);
    await w.write('a.txt', 'a');
    // The cut scan stored the rules it read but never applied: g/i/j.txt, born before the turn,
    // was taken for a file there all along while ignored, and the restore kept it.
    const r = await scan(w.session);
    const back = await restore(w.session, r.tag!);
    expect(back.skipped).toEqual([]);
    expect(existsSync(w.at('g'))).toBe(false);
  });

  it('a baseline cut short: what it did not reach is adopted later as baseline, never recorded as created', async () => {
    const w = await world();
    for (let d = 0; d < 3; d++) for (let i = 0; i < 3; i++) await w.write(`d${d}/f${i}.txt`, `${d}${i}`);
    const cut = await scan(w.session, { budgetMs: 0 });
    expect(cut).toMatchObject({ baseline: true, truncated: true, pending: [''], scanned: 0 });
    const full = await scan(w.session);
    expect(full).toMatchObject({ tag: null, files: [], scanned: 9 });
    await w.write('d1/f1.txt', 'changed');
    await w.write('d2/new.txt', 'new');
    const r = await scan(w.session);
    expect(r.files.map((f) => [f.path, f.change])).toEqual([
      ['d1/f1.txt', 'modified'],
      ['d2/new.txt', 'created'],
    ]);
    await restore(w.session, r.tag!, {});
    expect(await w.read('d1/f1.txt')).toBe('11');
    expect(await w.read('d0/f0.txt')).toBe('00');
  });

  it('a scan of an unchanged tree reads no file; a worker thread sharing the lstats sees the same', async () => {
    const w = await world();
    for (let i = 0; i < 10; i++) await w.write(`f${i}.txt`, `c${i}`);
    await sleep(20); // a file changed in the very millisecond a scan starts is racily clean: re-read later
    await scan(w.session);
    const r = await scan(w.session, { racyMs: 0 });
    expect(r.hashed).toBe(0);
    // More paths than one lstat chunk (2048), so the worker gets some.
    for (let d = 0; d < 7; d++) mkdirSync(w.at(`many/d${d}`), { recursive: true });
    for (let i = 0; i < 2100; i++) writeFileSync(w.at(`many/d${i % 7}/g${i}.txt`), `${i}`);
    await w.remove('f2.txt');
    await w.write('f3.txt', 'changed');
    await sleep(20);
    const inline = await scan(w.session, { racyMs: 0, threads: 0, rewriteIndex: 'always' });
    expect(inline.files).toHaveLength(2102 + 8); // and the 8 new folders
    await w.remove('f4.txt');
    await w.write('many/d1/g1.txt', 'changed');
    const parallel = await scan(w.session, { racyMs: 0, threads: 1 });
    expect(parallel.scanned).toBe(2108);
    expect(parallel.files.map((f) => [f.path, f.change])).toEqual([
      ['f4.txt', 'deleted'],
      ['many/d1/g1.txt', 'modified'],
    ]);
    expect(await readFile(w.at('f1.txt'), 'utf8')).toBe('c1');
  });
});

describe('sockets, FIFOs and devices', () => {
  const mkfifo = (abs: string) => execFileSync('mkfifo', [abs]);

  it('are paths ckpt cannot store, not absences: a file that takes a FIFO\'s place is not "created", and a restore to before leaves it (fsedge probe)', async () => {
    const w = await world();
    await w.write('a.txt', 'alpha');
    await w.write('k', 'keep');
    mkfifo(w.at('p'));
    const first = await scan(w.session);
    expect(first.skipped).toEqual([{ path: 'p', why: 'not-regular' }]);
    await startTurn(w.session); // prompt 1: p a FIFO, k a file
    await w.remove('p');
    await w.write('p', 'now a file');
    await w.remove('k');
    mkfifo(w.at('k'));
    // A watched scan that is told of them hands over to the full walk, which records the same.
    const r = await scan(w.session, { changedPaths: async () => new Set(['p', 'k']) });
    expect(r.watched).toBeUndefined();
    expect(r.files.map((f) => [f.path, f.change, f.state])).toEqual([
      ['k', 'modified', 'skipped'],
      ['p', 'modified', 'file'],
    ]);
    await startTurn(w.session);
    const res = await restore(w.session, '1', { force: true });
    expect(res.deleted).toEqual([]);
    expect(res.skipped.map((s) => s.path).sort()).toEqual(['k', 'p']);
    expect(await readFile(w.at('p'), 'utf8')).toBe('now a file');
    expect((await lstat(w.at('k'))).isFIFO()).toBe(true);
  });

  it('a file ckpt recorded (its owner record newer than the index) that becomes a FIFO is one change, not also a deletion (scan property test)', async () => {
    const w = await world();
    await scan(w.session);
    await w.write('g/h.txt', '');
    await scan(w.session); // records the file: an owner record newer than the index
    await w.remove('g/h.txt');
    mkfifo(w.at('g/h.txt'));
    const r = await scan(w.session);
    expect(r.files.map((f) => [f.path, f.change, f.state])).toEqual([['g/h.txt', 'modified', 'skipped']]);
    expect((await scan(w.session)).files).toEqual([]);
  });

  it('a FIFO made where nothing was is recorded, so a file that replaces it goes when a restore goes back to before both', async () => {
    const w = await world();
    await w.write('a.txt', 'alpha');
    await scan(w.session);
    await startTurn(w.session); // prompt 1: no q
    mkfifo(w.at('q'));
    const made = await scan(w.session);
    expect(made.files.map((f) => [f.path, f.change, f.state])).toEqual([['q', 'created', 'skipped']]);
    expect(made.skipped).toContainEqual({ path: 'q', why: 'not-regular' });
    await startTurn(w.session); // prompt 2: q a FIFO
    // A restore to before it leaves the FIFO (it could not go into the recovery capture) and says so.
    const back = await restore(w.session, '1', { dryRun: true });
    expect(back.skipped).toEqual([{ path: 'q', why: 'present-unrecoverable: not-regular' }]);
    await w.remove('q');
    await w.write('q', 'a file now');
    await scan(w.session);
    await startTurn(w.session);
    const res = await restore(w.session, '1', { force: true });
    expect(res.deleted).toEqual(['q']);
    await expect(lstat(w.at('q'))).rejects.toMatchObject({ code: 'ENOENT' });
    const two = await restore(w.session, '2', { force: true });
    expect(two.skipped).toEqual([{ path: 'q', why: 'not-recorded: not-regular' }]);
  });
});
