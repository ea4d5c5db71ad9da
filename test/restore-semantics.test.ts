// Restore semantics on real files (issue 3 items 6, 7, 10; DESIGN §2, §4, §6): the earliest-image
// rule, deletes of created files and their folders, chains and undo of undo, drift, skipped paths,
// symlinks, exact modes, symlinked parents, fail-closed blobs, dry runs and path filters.
import { readdir, readFile, readlink, rename, stat, writeFile, mkdir, symlink, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeOf, isCkptError } from '../src/errors.js';
import { restore, undoPath } from '../src/restore/index.js';
import { eventTypes, makeWorld, snapshot, stagingLeft } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeWorld);

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('restore to a tag', () => {
  it('brings back a file that existed long before the tag but was first captured after it', async () => {
    const w = await world();
    await w.write('old.txt', 'from the start\n');
    await w.turn();
    await w.turn();
    await w.tool(['old.txt'], () => w.write('old.txt', 'agent rewrote it\n'));
    const r = await restore(w.session, '1');
    expect(await w.read('old.txt')).toBe('from the start\n');
    expect(r).toMatchObject({ to: '1', restored: ['old.txt'], deleted: [], skipped: [], drift: [] });
    expect(r.undo).toMatch(/^\d+\.\d+$/);
  });

  it('deletes created files with the folders they brought, keeps folders that existed, never touches uncaptured paths', async () => {
    const w = await world();
    await w.write('keep/existing.txt', 'here before');
    await w.write('untracked.txt', 'nobody captured me');
    await w.turn();
    await w.tool(['new/deep/x.txt', 'keep/y.txt'], async () => {
      await w.write('new/deep/x.txt', 'x');
      await w.write('keep/y.txt', 'y');
    });
    await w.write('untracked.txt', 'changed without capture');
    const r = await restore(w.session, '1');
    expect(r.deleted.sort()).toEqual(['keep/y.txt', 'new', 'new/deep', 'new/deep/x.txt']);
    const snap = await snapshot(w.root);
    expect(Object.keys(snap).sort()).toEqual(['keep', 'keep/existing.txt', 'untracked.txt']);
    expect(await w.read('untracked.txt')).toBe('changed without capture');
  });

  it('chains restores, undoes a restore, and undoes the undo', async () => {
    const w = await world();
    await w.write('a.txt', 'v1');
    await w.turn();
    await w.tool(['a.txt', 'b.txt'], async () => {
      await w.write('a.txt', 'v2');
      await w.write('b.txt', 'b2');
    });
    await w.turn();
    await w.tool(['a.txt'], () => w.write('a.txt', 'v3'));

    const r1 = await restore(w.session, '1');
    expect(await w.read('a.txt')).toBe('v1');
    expect(await w.read('b.txt').catch(() => 'absent')).toBe('absent');
    const r2 = await restore(w.session, r1.undo!);
    expect([await w.read('a.txt'), await w.read('b.txt')]).toEqual(['v3', 'b2']);
    await restore(w.session, r2.undo!);
    expect(await w.read('a.txt')).toBe('v1');
    expect(await w.read('b.txt').catch(() => 'absent')).toBe('absent');
    await restore(w.session, '2');
    expect([await w.read('a.txt'), await w.read('b.txt')]).toEqual(['v2', 'b2']);
    const again = await restore(w.session, '2');
    expect(again).toMatchObject({ restored: [], deleted: [], undo: null });
    expect(again.unchanged.sort()).toEqual(['a.txt', 'b.txt']);
  });

  it('refuses on drift with nothing changed, and a forced restore keeps the drifted content for undo', async () => {
    const w = await world();
    await w.write('a.txt', 'v1');
    await w.turn();
    await w.tool(['a.txt', 'c.txt'], async () => {
      await w.write('a.txt', 'v2');
      await w.write('c.txt', 'agent');
    });
    await w.write('a.txt', 'the user edited this by hand');
    const before = await snapshot(w.root);
    const eventsBefore = await eventTypes(w.session);
    const err = await caught(restore(w.session, '1'));
    expect(isCkptError(err, 'DRIFT')).toBe(true);
    expect(exitCodeOf(err)).toBe(4);
    expect((err as { data: { drift: string[] } }).data.drift).toEqual(['a.txt']);
    expect(await snapshot(w.root)).toEqual(before);
    expect(await eventTypes(w.session)).toEqual(eventsBefore);

    const dry = await restore(w.session, '1', { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, drift: ['a.txt'], restored: ['a.txt'], deleted: ['c.txt'], undo: null });
    expect(await snapshot(w.root)).toEqual(before);

    const forced = await restore(w.session, '1', { force: true });
    expect(forced.drift).toEqual(['a.txt']);
    expect(await w.read('a.txt')).toBe('v1');
    await restore(w.session, forced.undo!);
    expect(await w.read('a.txt')).toBe('the user edited this by hand');
    expect(await w.read('c.txt')).toBe('agent');
  });

  it('leaves skipped images alone and never overwrites what it could not record', async () => {
    const w = await world({ maxBlobBytes: 1024 });
    await w.write('big.bin', Buffer.alloc(4096, 1));
    await w.write('small.txt', 'small');
    await w.turn();
    await w.tool(['big.bin', 'small.txt'], async () => {
      await w.write('big.bin', Buffer.alloc(4096, 2));
      await w.write('small.txt', Buffer.alloc(2048, 3)); // now too large to go into a recovery capture
    });
    const r = await restore(w.session, '1', { force: true });
    expect(r.restored).toEqual([]);
    expect(r.skipped).toEqual([
      { path: 'big.bin', why: 'not-recorded: too-large' },
      { path: 'small.txt', why: 'present-unrecoverable: too-large' },
    ]);
    expect((await readFile(w.at('big.bin')))[0]).toBe(2);
    expect((await readFile(w.at('small.txt'))).length).toBe(2048);
  });

  it('recreates symlinks exactly and replaces a symlink that took a file\'s place without following it', async () => {
    const w = await world();
    await mkdir(join(w.dirs.base, 'outside'));
    await writeFile(join(w.dirs.base, 'outside', 'secret.txt'), 'outside content');
    await w.link('link', 'a.txt');
    await w.link('dangling', 'nowhere/at/all');
    await w.write('plain.txt', 'plain', 0o640);
    await w.turn();
    await w.tool(['link', 'dangling', 'plain.txt', 'newlink'], async () => {
      await w.link('link', 'b.txt');
      await w.remove('dangling');
      await w.link('plain.txt', join(w.dirs.base, 'outside', 'secret.txt'));
      await w.link('newlink', '../escape');
    });
    const r = await restore(w.session, '1');
    expect(r.restored.sort()).toEqual(['dangling', 'link', 'plain.txt']);
    expect(r.deleted).toEqual(['newlink']);
    const snap = await snapshot(w.root);
    expect(snap.link).toEqual({ type: 'symlink', target: 'a.txt' });
    expect(snap.dangling).toEqual({ type: 'symlink', target: 'nowhere/at/all' });
    expect(snap['plain.txt']).toMatchObject({ type: 'file', mode: 0o640 });
    expect(await w.read('plain.txt')).toBe('plain');
    expect(snap.newlink).toBeUndefined();
    expect(await readFile(join(w.dirs.base, 'outside', 'secret.txt'), 'utf8')).toBe('outside content');
  });

  it('restores modes exactly (0755, 0600, 0444) whatever the umask', async () => {
    const w = await world();
    await w.write('run.sh', '#!/bin/sh\n', 0o755);
    await w.write('key.pem', 'secret', 0o600);
    await w.write('ro.txt', 'read only', 0o444);
    await w.turn();
    await w.tool(['run.sh', 'key.pem', 'ro.txt'], async () => {
      await w.write('run.sh', 'changed', 0o644);
      await w.write('key.pem', 'changed', 0o666);
      await w.write('ro.txt', 'changed', 0o644);
    });
    await w.tool(['run.sh'], async () => {
      await w.write('run.sh', '#!/bin/sh\n', 0o644); // same bytes, only the mode differs
    });
    const old = process.umask(0o077);
    try {
      await restore(w.session, '1');
    } finally {
      process.umask(old);
    }
    const modes = await Promise.all(['run.sh', 'key.pem', 'ro.txt'].map(async (p) => (await stat(w.at(p))).mode & 0o7777));
    expect(modes).toEqual([0o755, 0o600, 0o444]);
    expect(await w.read('ro.txt')).toBe('read only');
  });

  it('never writes through a symlink that appeared in place of a parent folder', async () => {
    const w = await world();
    const outside = join(w.dirs.base, 'outside');
    await mkdir(outside);
    await w.write('dir/f.txt', 'original');
    await w.turn();
    await w.tool(['dir/f.txt', 'dir/new.txt'], async () => {
      await w.write('dir/f.txt', 'agent');
      await w.write('dir/new.txt', 'agent');
    });
    await writeFile(join(outside, 'f.txt'), 'outside file');
    await writeFile(join(outside, 'new.txt'), 'outside new');
    await rm(w.at('dir'), { recursive: true });
    await symlink(outside, w.at('dir'));
    const r = await restore(w.session, '1', { force: true });
    expect(r.skipped).toEqual([
      { path: 'dir/f.txt', why: 'symlinked-parent' },
      { path: 'dir/new.txt', why: 'symlinked-parent' },
    ]);
    expect(await readdir(outside)).toEqual(['f.txt', 'new.txt']);
    expect(await readFile(join(outside, 'f.txt'), 'utf8')).toBe('outside file');
    expect(await readFile(join(outside, 'new.txt'), 'utf8')).toBe('outside new');
  });

  it('a path named in a restore or cat is the recorded one, never resolved through a symlink made since (found by a probe: restore 1 d/x.txt deleted d2/x.txt)', async () => {
    const w = await world();
    await w.write('d/x.txt', 'x');
    await w.turn();
    await w.tool(['d/x.txt', 'd'], async () => {
      await rename(w.at('d'), w.at('d2'));
      await symlink('d2', w.at('d'));
    }, 'Bash');
    const file = await w.session.readFile('1', 'd/x.txt');
    expect({ path: file.path, state: file.state }).toEqual({ path: 'd/x.txt', state: 'file' });
    // As the whole restore does: the folder d comes back in place of the link (its undo has the link).
    const r = await restore(w.session, '1', { paths: ['d/x.txt'] });
    expect({ restored: r.restored, deleted: r.deleted, skipped: r.skipped }).toEqual({ restored: ['d', 'd/x.txt'], deleted: [], skipped: [] });
    expect(await readFile(w.at('d/x.txt'), 'utf8')).toBe('x');
    expect(await readFile(w.at('d2/x.txt'), 'utf8')).toBe('x');
    await restore(w.session, r.undo!);
    expect(await readlink(w.at('d'))).toBe('d2');
  });

  it('a path restore re-creates the folders above it that existed at the tag as planned, recorded entries: its undo removes them again (found by a preview probe)', async () => {
    const w = await world();
    await w.write('d/e/y.txt', 'y');
    await w.turn();
    await w.tool(['d/e/y.txt'], () => w.write('d/e/y.txt', 'Y'));
    await w.tool(['d/e/y.txt', 'd/e', 'd'], () => w.remove('d'), 'Bash');
    const before = await snapshot(w.root);
    const dry = await restore(w.session, '1', { paths: ['d/e/y.txt'], dryRun: true });
    expect(dry.restored).toEqual(['d', 'd/e', 'd/e/y.txt']);
    const r = await restore(w.session, '1', { paths: ['d/e/y.txt'] });
    expect(r.restored).toEqual(['d', 'd/e', 'd/e/y.txt']);
    expect(await w.read('d/e/y.txt')).toBe('y');
    await restore(w.session, r.undo!);
    expect(await snapshot(w.root)).toEqual(before);
  });

  it('fails closed on a corrupt blob: BLOB_CORRUPT, nothing changed, no staging file left', async () => {
    const w = await world();
    for (let i = 0; i < 20; i++) await w.write(`f${i}.txt`, `original ${i}`);
    await w.write('gone/sub/kept.txt', 'in a folder that will be removed');
    await w.turn();
    const paths = Array.from({ length: 20 }, (_, i) => `f${i}.txt`);
    await w.tool([...paths, 'new/created.txt', 'gone/sub/kept.txt'], async () => {
      for (const p of paths) await w.write(p, `changed ${p}`);
      await w.write('new/created.txt', 'new');
      await w.remove('gone');
    });
    const events = await w.session.events();
    const blob = (events.find((e) => e.type === 'capture')!.files as { path: string; blob: string }[]).find((f) => f.path === 'gone/sub/kept.txt')!.blob; // placing would create gone/sub first
    // The store copy of the capture's inline content, queued after its answer, is the copy damaged here.
    await w.session.ctx.afterCall.drain();
    // Through the backend, so the same damage is done to a folder or a shared store.
    const key = `blobs/${blob.slice(0, 2)}/${blob.slice(2)}`;
    const bytes = (await w.store.ctx.backend.read(key))!;
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    await w.store.ctx.backend.write(key, bytes);

    const before = await snapshot(w.root);
    const logged = (await eventTypes(w.session)).length;
    const err = await caught(restore(w.session, '1'));
    expect(isCkptError(err, 'BLOB_CORRUPT')).toBe(true);
    expect(await snapshot(w.root)).toEqual(before);
    expect(await stagingLeft(w.root)).toEqual([]);
    // The plan's content is read before the recovery capture is appended: nothing is recorded either.
    expect(await eventTypes(w.session)).toHaveLength(logged);
    // Other paths can still be restored one by one.
    await undoPath(w.session, '1', 'f1.txt');
    expect(await w.read('f1.txt')).toBe('original 1');
  });

  it('restricts to paths and folders, rejects escapes, reports paths not captured after the tag, NOT_FOUND for never recorded ones', async () => {
    const w = await world();
    await w.write('src/a.ts', 'a1');
    await w.write('src/b.ts', 'b1');
    await w.write('top.txt', 't1');
    await w.turn();
    await w.tool(['src/a.ts', 'src/b.ts', 'top.txt'], async () => {
      await w.write('src/a.ts', 'a2');
      await w.write('src/b.ts', 'b2');
      await w.write('top.txt', 't2');
    });
    const r = await restore(w.session, '1', { paths: ['src'] });
    expect(r.restored).toEqual(['src/a.ts', 'src/b.ts']);
    expect(await w.read('top.txt')).toBe('t2');
    const u = await undoPath(w.session, '1', join(w.root, 'top.txt'));
    expect(u.restored).toEqual(['top.txt']);
    // A path no capture ever recorded is NOT_FOUND (a typo is not a restore with nothing to do); one
    // recorded only before the tag is unchanged since: skipped, not an error.
    const never = await caught(undoPath(w.session, '1', 'never.txt'));
    expect(isCkptError(never, 'NOT_FOUND') && never.data.paths).toEqual(['never.txt']);
    await w.turn();
    expect((await undoPath(w.session, '2', 'top.txt')).skipped).toEqual([{ path: 'top.txt', why: 'not-captured-after-tag' }]);
    expect(isCkptError(await caught(undoPath(w.session, '1', '../x')), 'PATH_ESCAPE')).toBe(true);
    expect(isCkptError(await caught(restore(w.session, '9')), 'TAG_NOT_FOUND')).toBe(true);
    expect(isCkptError(await caught(restore(w.session, 'x.y')), 'INVALID_ARGUMENT')).toBe(true);
  });
});
