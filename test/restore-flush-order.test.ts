// A large restore's flush at once (DESIGN §10 "A large restore flushes its file system once"):
// - ordering: `restore_committed` is written only after the flush — the `sync -f` process exited 0,
//   or, when it failed, after every per-file fsync of the fallback returned: never committed unflushed;
// - hostile: on the fallback, which finds each written file again by its path, a file replaced by a
//   symlink to a file outside the workspace, or its folder replaced by a symlink to a folder outside,
//   between placing and the flush is never opened, fsynced or written through.
// Real CLI processes with the flush seam preloaded (test/reliability/flush-seam.ts): it reports the
// sync process's start and exit and the commit's write in the order of the fault seam's trace, makes
// `sync` fail, and swaps the paths exactly in that window (when `sync -f` would start), no race.
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/index.js';
import { canSyncFileSystem } from '../src/restore/sync-fs.js';
import { runWithFlushSeam } from './reliability/flush-seam-run.js';
import type { FlushSeamReport, SeamEvent } from './reliability/flush-seam.js';
import { MAIN } from './reliability/scenarios.js';

const BIG = Array.from({ length: 70 }, (_, i) => `big/f${i}.txt`);
const SUB = Array.from({ length: 6 }, (_, i) => `sub/g${i}.txt`);
const PATHS = [...BIG, ...SUB];
const base = mkdtempSync(join(tmpdir(), 'ckpt-flush-order-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** 76 files rewritten in turn 1: `restore 1` writes all of them back. */
async function history(): Promise<{ dir: string; store: string; workspace: string }> {
  const dir = mkdtempSync(join(base, 'case-'));
  const dirs = { dir, store: join(dir, 'store'), workspace: join(dir, 'ws') };
  for (const d of ['big', 'sub']) mkdirSync(join(dirs.workspace, d), { recursive: true });
  for (const p of PATHS) writeFileSync(join(dirs.workspace, p), `${p} one\n`);
  const store = await openStore({ dir: dirs.store });
  try {
    const s = await (await store.openWorkspace(dirs.workspace)).create({ id: MAIN, baseline: true });
    await s.turn({ text: 'rewrite all' });
    await s.capture(PATHS, { tool: 'Bash' });
    for (const p of PATHS) writeFileSync(join(dirs.workspace, p), `${p} two\n`);
    await s.settle(PATHS);
  } finally {
    await store.close();
  }
  return dirs;
}

const isFsync = (op: string): boolean => /sync/.test(op);
const one = (r: FlushSeamReport | undefined, kind: SeamEvent['kind']): SeamEvent[] => (r?.events ?? []).filter((e) => e.kind === kind);

describe.skipIf(!canSyncFileSystem())('a large restore flushes before it commits', () => {
  it('the sync process exits 0 before restore_committed is written; no fsync per file', async () => {
    const dirs = await history();
    // Dirty data of other processes reported as none: the flush at once whatever the machine's load.
    const run = await runWithFlushSeam(dirs, ['restore', '1', '--yes'], { pending: 0 });
    expect(run.code, run.stderr).toBe(0);
    const r = run.report!;
    const kinds = r.events.filter((e) => e.kind !== 'fsync-done').map((e) => e.kind);
    expect(kinds).toEqual(['sync-start', 'sync-exit', 'committed']);
    expect(one(r, 'sync-exit')[0]!.ok).toBe(true);
    // Nothing of the workspace written or flushed between the flush and the commit, and no file fsynced.
    const [exit, committed] = [one(r, 'sync-exit')[0]!.at, one(r, 'committed')[0]!.at];
    expect(r.trace.slice(exit, committed).filter((t) => t.side === 'workspace')).toEqual([]);
    expect(r.trace.filter((t) => t.side === 'workspace' && isFsync(t.op) && PATHS.includes(t.path))).toEqual([]);
    for (const p of PATHS) expect(readFileSync(join(dirs.workspace, p), 'utf8')).toBe(`${p} one\n`);
  });

  it('when sync fails: every written file is fsynced, each returned, before restore_committed', async () => {
    const dirs = await history();
    const run = await runWithFlushSeam(dirs, ['restore', '1', '--yes'], { pending: 0, sync: 'fail', slowFileSync: 20 });
    expect(run.code, run.stderr).toBe(0);
    const r = run.report!;
    expect(one(r, 'sync-exit').map((e) => e.ok)).toEqual([false]);
    const [exit, committed] = [one(r, 'sync-exit')[0]!.at, one(r, 'committed')[0]!.at];
    // Every written file's fsync (by its path, after the failed sync) before the commit.
    const fsyncs = r.trace.filter((t, i) => t.side === 'workspace' && isFsync(t.op) && i >= exit && i < committed).map((t) => t.path);
    for (const p of PATHS) expect(fsyncs).toContain(p);
    // …and each returned before the commit was written (each file's return made 20 ms late by the seam).
    const returned = r.events.slice(0, r.events.findIndex((e) => e.kind === 'committed')).filter((e) => e.kind === 'fsync-done').map((e) => e.path);
    for (const p of PATHS) expect(returned).toContain(p);
    for (const p of PATHS) expect(readFileSync(join(dirs.workspace, p), 'utf8')).toBe(`${p} one\n`);
  });
});

describe.skipIf(!canSyncFileSystem())('a large restore that flushes file by file after a failed sync (hostile)', () => {
  it('never opens, fsyncs or writes through a file or folder replaced by a symlink after placing', async () => {
    const dirs = await history();
    // Outside the workspace: a file and a folder holding files of the same names as the restored ones.
    const outside = join(dirs.dir, 'outside');
    mkdirSync(join(outside, 'dir'), { recursive: true });
    const victims = [join(outside, 'victim.txt'), ...SUB.map((p) => join(outside, 'dir', p.slice(4)))];
    for (const v of victims) writeFileSync(v, 'outside, not ckpt\'s\n');
    const before = victims.map((v) => ({ v, bytes: readFileSync(v, 'utf8'), mtime: statSync(v).mtimeMs, ctime: statSync(v).ctimeMs }));
    const swap = [
      { path: 'big/f3.txt', target: victims[0]! },
      { path: 'sub', target: join(outside, 'dir') },
    ];
    const run = await runWithFlushSeam(dirs, ['restore', '1', '--yes'], { pending: 0, sync: 'fail', swap, outside: [...victims, join(outside, 'dir')] });
    expect(run.code, run.stderr).toBe(0);
    const r = run.report!;
    // The swap ran in the window: after every file was placed, before the (failed) flush.
    expect(r.events.filter((e) => e.kind !== 'fsync-done').map((e) => e.kind)).toEqual(['sync-start', 'swapped', 'swapped', 'sync-exit', 'committed']);
    expect(readlinkSync(join(dirs.workspace, 'sub'))).toBe(join(outside, 'dir'));
    // No open of an outside file or folder, no write or fsync at a swapped path (or beneath one) after the swap.
    expect(one(r, 'opened-outside')).toEqual([]);
    const swappedAt = one(r, 'swapped')[0]!.at;
    const touched = r.trace.slice(swappedAt).filter((t) => t.side === 'workspace' && (t.path === 'big/f3.txt' || t.path === 'sub' || t.path.startsWith('sub/')));
    expect(touched).toEqual([]);
    for (const b of before) {
      expect({ v: b.v, bytes: readFileSync(b.v, 'utf8'), mtime: statSync(b.v).mtimeMs, ctime: statSync(b.v).ctimeMs }).toEqual(b);
    }
    expect(lstatSync(join(outside, 'dir')).isDirectory()).toBe(true);
    // The fallback did run for the others: each other written file fsynced by its path.
    const fsynced = new Set(r.trace.slice(one(r, 'sync-exit')[0]!.at).filter((t) => t.side === 'workspace' && isFsync(t.op)).map((t) => t.path));
    for (const p of BIG.filter((p) => p !== 'big/f3.txt')) expect(fsynced).toContain(p);
  });
});
