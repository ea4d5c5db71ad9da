// Tests of the filesystem driver: the shared contract, plus what only a real filesystem can show —
// temp files never left behind, modes, symlinks and FIFOs treated as missing, and cross-process
// locking including takeover of a lock whose holder was SIGKILLed (or left by an older ckpt's folder lock).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCkptError } from '../../errors.js';
import { runBackendContract } from '../backend-contract.js';
import { createFsBackend } from './fs-backend.js';
import type { StoreBackend } from '../backend.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const holderScript = path.join(repo, 'test/fixtures/storage-lock-holder.ts');

runBackendContract('fs', async () => {
  const dir = await fs.mkdtemp(path.join(tmpdir(), 'ckpt-fsb-'));
  return { backend: createFsBackend({ dir }), cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
});

function runHelper(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function allFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

describe('fs backend specifics', () => {
  let dir: string;
  let b: StoreBackend;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(tmpdir(), 'ckpt-fsb-'));
    b = createFsBackend({ dir });
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('leaves no temp files after writes, creates, and failing writes', async () => {
    await b.write('m/meta.json', Buffer.from('1'));
    await b.write('m/meta.json', Buffer.from('2'));
    // A cache write without fsyncs is still a whole-file replacement through a temp file.
    await b.write('m/meta.json', Buffer.from('3'), { durable: false });
    expect((await b.read('m/meta.json'))?.toString()).toBe('3');
    await b.create('blobs/aa/bb', Buffer.from('x'));
    await b.create('blobs/aa/bb', Buffer.from('x'));
    await b.write('plain', Buffer.from('a file'));
    // The target's parent is a file: the write fails as IO and nothing is left behind.
    const err = await b.write('plain/child', Buffer.from('x')).catch((e: unknown) => e);
    expect(isCkptError(err, 'IO')).toBe(true);
    const errCreate = await b.create('plain/child', Buffer.from('x')).catch((e: unknown) => e);
    expect(isCkptError(errCreate, 'IO')).toBe(true);
    // A directory where the object should be: the rename fails; the temp beside it is removed.
    await fs.mkdir(path.join(dir, 'm', 'adir'));
    expect(isCkptError(await b.write('m/adir', Buffer.from('x')).catch((e: unknown) => e), 'IO')).toBe(true);
    expect(await allFiles(dir)).toEqual(['blobs', 'blobs/aa', 'blobs/aa/bb', 'm', 'm/adir', 'm/meta.json', 'plain']);
  });

  it('checks every key, also next to keys it resolved before', async () => {
    await b.write('s/x', Buffer.from('x'));
    expect((await b.read('s/x'))?.toString()).toBe('x');
    for (const bad of ['/s/x', 's//x', 's/x/', 's/../s/x', 's/x.ckpt-lock']) {
      expect(isCkptError(await b.read(bad).catch((e: unknown) => e), 'INVALID_ARGUMENT'), bad).toBe(true);
    }
    // A listing's form of the key (a trailing slash) stays a listing's only.
    expect(await b.children('s/')).toEqual(['x']);
    expect(isCkptError(await b.read('s/').catch((e: unknown) => e), 'INVALID_ARGUMENT')).toBe(true);
  });

  it('hides its own temp and lock files from listings', async () => {
    await b.write('s/x', Buffer.from('x'));
    await fs.writeFile(path.join(dir, 's', '.x.ckpt-tmp-0123'), 'partial');
    let during: string[] = [];
    await b.withLock('s/x', async () => {
      during = await b.children('s');
    });
    expect(during).toEqual(['x']);
    expect(await b.list('s')).toEqual(['s/x']);
  });

  it('creates a missing store folder on first write', async () => {
    const fresh = createFsBackend({ dir: path.join(dir, 'not', 'yet') });
    await fresh.write('store.json', Buffer.from('{}'));
    expect(await fs.readFile(path.join(dir, 'not', 'yet', 'store.json'), 'utf8')).toBe('{}');
    expect(await fresh.withLock('x', async () => 'ok')).toBe('ok');
  });

  it('writes private files (0600): a given mode only narrows it, an existing looser file is tightened', async () => {
    const modeOf = async (k: string): Promise<number> => (await fs.stat(path.join(dir, k))).mode & 0o777;
    await b.write('a', Buffer.from('x'));
    expect(await modeOf('a')).toBe(0o600);
    await b.write('b', Buffer.from('x'), { mode: 0o400 });
    expect(await modeOf('b')).toBe(0o400);
    await b.write('c', Buffer.from('x'), { mode: 0o755 });
    expect(await modeOf('c')).toBe(0o600);
    await fs.chmod(path.join(dir, 'c'), 0o644);
    await b.write('c', Buffer.from('y'));
    expect(await modeOf('c')).toBe(0o600);
  });

  it('treats a symlink or a FIFO at a key as missing', async () => {
    const outside = path.join(dir, '..', `${path.basename(dir)}-outside`);
    await fs.writeFile(outside, 'secret');
    try {
      await fs.mkdir(path.join(dir, 'blobs'));
      await fs.symlink(outside, path.join(dir, 'blobs', 'link'));
      expect(await b.read('blobs/link')).toBeUndefined();
      expect(await b.readRange('blobs/link', 0, 3)).toBeUndefined();
      expect(await b.stat('blobs/link')).toBeUndefined();
      expect(await b.list('blobs')).toEqual([]);
      // create() replaces a planted symlink with a real object instead of writing through it.
      expect(await b.create('blobs/link', Buffer.from('real'))).toBe(true);
      expect((await b.read('blobs/link'))?.toString()).toBe('real');
      expect(await fs.readFile(outside, 'utf8')).toBe('secret');

      execFileSync('mkfifo', [path.join(dir, 'blobs', 'fifo')]);
      expect(await b.read('blobs/fifo')).toBeUndefined();
      expect(await b.stat('blobs/fifo')).toBeUndefined();
      const err = await b.append('blobs/fifo', Buffer.from('x')).catch((e: unknown) => e);
      expect(isCkptError(err, 'LOG_CORRUPT')).toBe(true);
    } finally {
      await fs.rm(outside, { force: true });
    }
  });

  it('touch freshens only a real file beneath real folders, never through a planted symlink', async () => {
    const outside = path.join(dir, '..', `${path.basename(dir)}-touch-outside`);
    await fs.mkdir(outside, { recursive: true });
    try {
      const old = new Date(Date.now() - 3_600_000);
      await fs.writeFile(path.join(outside, 'cd'), 'secret');
      await fs.utimes(path.join(outside, 'cd'), old, old);
      await fs.mkdir(path.join(dir, 'blobs'));
      await fs.symlink(outside, path.join(dir, 'blobs', 'ab'));
      // A folder that is a symlink: refused (or missing), and the file it leads to keeps its mtime.
      const through = await b.touch('blobs/ab/cd').catch((e: unknown) => e);
      expect(through === false || isCkptError(through, 'FORBIDDEN')).toBe(true);
      expect(await b.touch('blobs/ab/missing')).toBe(false);
      // A symlink at the key itself is not a file.
      await fs.mkdir(path.join(dir, 'blobs', 'ef'));
      await fs.symlink(path.join(outside, 'cd'), path.join(dir, 'blobs', 'ef', 'gh'));
      expect(await b.touch('blobs/ef/gh')).toBe(false);
      // Unchanged (within stat's float rounding of the nanosecond time: 477.999 for 478).
      expect(Math.abs((await fs.stat(path.join(outside, 'cd'))).mtimeMs - old.getTime())).toBeLessThan(1);
      // A real file is freshened.
      await b.write('blobs/ef/ij', Buffer.from('x'));
      await fs.utimes(path.join(dir, 'blobs', 'ef', 'ij'), old, old);
      expect(await b.touch('blobs/ef/ij')).toBe(true);
      expect((await fs.stat(path.join(dir, 'blobs', 'ef', 'ij'))).mtimeMs).toBeGreaterThan(old.getTime());
      expect(await b.touch('nope/x')).toBe(false);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  it('refuses to append to or truncate a symlinked log', async () => {
    await fs.writeFile(path.join(dir, 'real.jsonl'), 'x\n');
    await fs.symlink('real.jsonl', path.join(dir, 'events.jsonl'));
    for (const op of [() => b.append('events.jsonl', Buffer.from('y\n')), () => b.truncate('events.jsonl', 0)]) {
      const err = await op().catch((e: unknown) => e);
      expect(isCkptError(err, 'LOG_CORRUPT')).toBe(true);
    }
    expect(await fs.readFile(path.join(dir, 'real.jsonl'), 'utf8')).toBe('x\n');
  });

  it('detects a nested withLock on the same key instead of deadlocking', async () => {
    const err = await b.withLock('k', () => b.withLock('k', async () => 1)).catch((e: unknown) => e);
    expect(isCkptError(err, 'INTERNAL')).toBe(true);
    // A different key nests fine.
    expect(await b.withLock('k', () => b.withLock('k2', async () => 2))).toBe(2);
  });

  it('excludes writers across processes', async () => {
    const children = Array.from({ length: 4 }, () => runHelper(holderScript, [dir, 'ctr', 'count', '15']));
    const codes = await Promise.all(children.map(exited));
    expect(codes).toEqual([0, 0, 0, 0]);
    expect((await b.read('counter'))?.toString()).toBe('60');
  });

  it('locks with a file, and shares exclusion with the folder lock of an older ckpt', async () => {
    const lock = path.join(dir, 'sessions/s2.ckpt-lock');
    await b.withLock('sessions/s2', async () => {
      expect((await fs.lstat(lock)).isFile()).toBe(true);
      // An older ckpt takes its lock with mkdir: it fails on the file.
      await expect(fs.mkdir(lock)).rejects.toMatchObject({ code: 'EEXIST' });
    });
    await expect(fs.lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
    // A folder lock held by an older ckpt (fresh mtime) excludes this one ...
    await fs.mkdir(lock);
    await expect(b.withLock('sessions/s2', async () => 1, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'LOCKED' });
    // ... and once stale (its holder died), it is taken over and removed on release.
    const old = new Date(Date.now() - 60_000);
    await fs.utimes(lock, old, old);
    expect(await b.withLock('sessions/s2', async () => (await fs.lstat(lock)).isFile(), { timeoutMs: 2_000 })).toBe(true);
    await expect(fs.lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('withLock walks the lock folder before making its file (a planted symlink is FORBIDDEN), not when it reuses a lingering lock', async () => {
    const outside = path.join(dir, '..', `${path.basename(dir)}-lock-outside`);
    await fs.mkdir(outside, { recursive: true });
    try {
      await fs.mkdir(path.join(dir, 'sessions'));
      await fs.symlink(outside, path.join(dir, 'sessions', 'planted'));
      await expect(b.withLock('sessions/planted/events.jsonl', async () => 1)).rejects.toMatchObject({ code: 'FORBIDDEN' });
      expect(await fs.readdir(outside)).toEqual([]);
      // Made once (its folder made 0700 on the way), then reused as it is: no walk, no new file.
      const linger = { idleMs: 60_000, maxMs: 60_000 };
      const lock = path.join(dir, 'sessions/s9/events.jsonl.ckpt-lock');
      await b.withLock('sessions/s9/events.jsonl', async () => 1, { linger });
      expect((await fs.stat(path.join(dir, 'sessions/s9'))).mode & 0o777).toBe(0o700);
      const ino = (await fs.lstat(lock)).ino;
      expect(await b.withLock('sessions/s9/events.jsonl', async () => (await fs.lstat(lock)).ino, { linger })).toBe(ino);
      await b.close!();
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  it('linger: the lock stays held after withLock, the next caller here takes it as it is, it goes after its idle time or at the end of a use past maxMs', async () => {
    const lock = path.join(dir, 'sessions/s3.ckpt-lock');
    const linger = { idleMs: 150, maxMs: 60_000 };
    expect(await b.withLock('sessions/s3', async () => 1, { linger })).toBe(1);
    const first = await fs.lstat(lock);
    // Taken again: the same file, never remade.
    expect(await b.withLock('sessions/s3', async () => (await fs.lstat(lock)).ino, { linger })).toBe(first.ino);
    await new Promise((r) => setTimeout(r, 300));
    await expect(fs.lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
    // A use that fails takes it as it is too, and releases it (a writer refused because its session
    // was removed meanwhile must not leave a lock in the removed session's folder).
    await b.withLock('sessions/s3', async () => 1, { linger });
    const again = await fs.lstat(lock);
    await expect(b.withLock('sessions/s3', async () => { expect((await fs.lstat(lock)).ino).toBe(again.ino); throw new Error('boom'); }, { linger })).rejects.toThrow('boom');
    await expect(fs.lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
    // A use that ends maxMs after the lock was taken releases it at once.
    await b.withLock('sessions/s3', async () => new Promise((r) => setTimeout(r, 60)), { linger: { idleMs: 60_000, maxMs: 50 } });
    await expect(fs.lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('linger: a reused lock goes idleMs after its last use, not after its first', async () => {
    const lock = path.join(dir, 'sessions/s5.ckpt-lock');
    const linger = { idleMs: 1_000, maxMs: 60_000 };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await b.withLock('sessions/s5', async () => 1, { linger });
    const ino = (await fs.lstat(lock)).ino;
    await sleep(500);
    expect(await b.withLock('sessions/s5', async () => (await fs.lstat(lock)).ino, { linger })).toBe(ino);
    // Past the first use's idle time, within the second's: still held (the first's timer released it before).
    await sleep(800);
    expect((await fs.lstat(lock)).ino).toBe(ino);
    await sleep(1_200);
    await expect(fs.lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('an append under a lease keeps the log open while the lock lingers, writes to what the path names now, and closes it when the lock goes', async () => {
    const key = 'sessions/s6/events.jsonl';
    const abs = path.join(dir, key);
    const linger = { idleMs: 150, maxMs: 60_000 };
    // Descriptors of this process open on the log (Linux: /proc; elsewhere undefined and not checked).
    // Only those: other files' work in a shared test worker may open and close its own meanwhile.
    const open = async (): Promise<number | undefined> => {
      const names = await fs.readdir('/proc/self/fd').catch(() => undefined);
      if (!names) return undefined;
      let n = 0;
      for (const name of names) if ((await fs.readlink(`/proc/self/fd/${name}`).catch(() => ''))?.startsWith(abs)) n++;
      return n;
    };
    const expectOpen = async (n: number) => {
      const now = await open();
      if (now !== undefined) expect(now).toBe(n);
    };
    const append = (text: string) => b.withLock(key, (lease) => b.append(key, Buffer.from(text), lease), { linger });
    await append('a\n');
    await expectOpen(1);
    await append('b\n');
    await expectOpen(1); // the same descriptor, not another
    // Replaced (a rename over it) and then removed by someone else meanwhile: each append lands in
    // the file the path names, never in the one the kept descriptor had open.
    await fs.writeFile(`${abs}.new`, 'x\n');
    await fs.rename(`${abs}.new`, abs);
    await append('c\n');
    expect(await fs.readFile(abs, 'utf8')).toBe('x\nc\n');
    await fs.rm(abs);
    await append('d\n');
    expect(await fs.readFile(abs, 'utf8')).toBe('d\n');
    // Truncated (a torn tail cut): the same file, appended at its end.
    await fs.truncate(abs, 0);
    await append('e\n');
    expect(await fs.readFile(abs, 'utf8')).toBe('e\n');
    await expectOpen(1);
    // The lock goes after its idle time, and the descriptor with it; an append without a lease keeps nothing.
    await new Promise((r) => setTimeout(r, 300));
    await expectOpen(0);
    await b.append(key, Buffer.from('f\n'));
    await expectOpen(0);
    expect(await fs.readFile(abs, 'utf8')).toBe('e\nf\n');
  });

  it('a release leaves alone a lock another holder took over meanwhile; a lock lost while held can still be taken over later', async () => {
    const lock = path.join(dir, 'sessions/s4.ckpt-lock');
    await b.withLock('sessions/s4', async () => 1, { linger: { idleMs: 150, maxMs: 60_000 } });
    // Before the lingering lock is released, another holder takes the lock over (as after a stall past
    // the stale limit): its own file stands there now. (Put in place by a rename, so that it cannot
    // get this one's inode number back within the same clock tick, as a takeover seconds later could not.)
    const takeOver = async (): Promise<void> => {
      await fs.writeFile(`${lock}.other`, '');
      const other = new Date(Date.now() - 1_000); // not this holder's mtime either
      await fs.utimes(`${lock}.other`, other, other);
      await fs.rename(`${lock}.other`, lock);
    };
    await takeOver();
    const theirs = (await fs.lstat(lock)).ino;
    // This process's next caller does not take the lingering lock as it is: it waits for the other holder.
    await expect(b.withLock('sessions/s4', async () => 1, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'LOCKED' });
    await new Promise((r) => setTimeout(r, 300)); // the idle release would have run by now
    expect((await fs.lstat(lock)).ino).toBe(theirs);
    // Once that holder is gone for good (stale), this process takes the lock over and removes it on release.
    const old = new Date(Date.now() - 60_000);
    await fs.utimes(lock, old, old);
    expect(await b.withLock('sessions/s4', async () => 2, { timeoutMs: 2_000 })).toBe(2);
    await expect(fs.lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });

    // Taken over while held: the holder learns it (LOCKED, compromised) ...
    const lost = b.withLock('sessions/s4', async () => {
      await takeOver();
      await new Promise((r) => setTimeout(r, 2_500)); // the mtime refresh (every second) finds a lock that is not its own
    });
    await expect(lost).rejects.toMatchObject({ code: 'LOCKED', data: { compromised: true } });
    // ... and a later stale takeover by this process still removes the other holder's file.
    await fs.utimes(lock, old, old);
    expect(await b.withLock('sessions/s4', async () => 3, { timeoutMs: 2_000 })).toBe(3);
    await expect(fs.lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('takes over a lock whose holder was SIGKILLed', async () => {
    const child = runHelper(holderScript, [dir, 'sessions/s1', 'hold']);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      child.once('exit', (code) => reject(new Error(`holder exited early (${code})`)));
    });
    await expect(b.withLock('sessions/s1', async () => 1, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'LOCKED' });
    child.kill('SIGKILL');
    await exited(child);
    // At once, not after the stale limit: the lock names its holder, which is gone (DESIGN §10).
    const patient = createFsBackend({ dir, lockStaleMs: 600_000 });
    expect(await patient.withLock('sessions/s1', async () => 'mine', { timeoutMs: 5_000 })).toBe('mine');
  });

  it('a process exiting removes its own lock only, never one another process made meanwhile', async () => {
    const lock = path.join(dir, 'sessions', 's6.ckpt-lock');
    const child = runHelper(path.join(repo, 'test', 'fixtures', 'storage-lock-exit.ts'), [dir, 'sessions/s6', lock]);
    const stderr: Buffer[] = [];
    child.stderr!.on('data', (d: Buffer) => stderr.push(d));
    expect(await exited(child), Buffer.concat(stderr).toString()).toBe(0);
    expect(await fs.readFile(lock, 'utf8')).toBe('another holder\n');
  });

  it.runIf(process.platform === 'linux')('takes over at once only a lock naming a gone holder of this boot and pid namespace', async () => {
    const patient = createFsBackend({ dir, lockStaleMs: 600_000 });
    const lock = path.join(dir, 'sessions', 's5.ckpt-lock');
    await fs.mkdir(path.dirname(lock), { recursive: true });
    const scope = `${(await fs.readFile('/proc/sys/kernel/random/boot_id', 'latin1')).trim()} ${await fs.readlink('/proc/self/ns/pid')}`;
    const dead = spawn('true');
    await exited(dead);
    const attempt = () => patient.withLock('sessions/s5', async () => 'mine', { timeoutMs: 300 }).catch((e: unknown) => e);
    // A live holder (the test's parent), a pid of another boot or namespace, an unnamed holder: waited for.
    for (const text of [`${process.ppid} ${scope}\n`, `${dead.pid} 00000000-0000-0000-0000-000000000000 ${scope.split(' ')[1]}\n`, `${dead.pid} ${scope.split(' ')[0]} pid:[1]\n`, '', `${dead.pid}\n`]) {
      await fs.writeFile(lock, text);
      expect(isCkptError(await attempt(), 'LOCKED')).toBe(true);
      expect(await fs.readFile(lock, 'latin1')).toBe(text);
    }
    // A FIFO planted there neither blocks the look nor is taken for a holder.
    await fs.rm(lock);
    execFileSync('mkfifo', [lock]);
    expect(isCkptError(await attempt(), 'LOCKED')).toBe(true);
    await fs.rm(lock);
    await fs.writeFile(lock, `${dead.pid} ${scope}\n`);
    expect(await attempt()).toBe('mine');
    await expect(fs.lstat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
