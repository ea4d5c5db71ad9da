import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDirs, type TempDirs } from '../../test/helpers/temp.js';
import { openStore, type Workspace } from '../store.js';
import type { Session } from '../api/session.js';
import type { CaptureEvent, SettleEvent } from '../format/event.js';

let dirs: TempDirs;
let ws: Workspace;
let session: Session;

async function open(options: { maxBlobBytes?: number; captureEnabled?: boolean } = {}) {
  ws = await (await openStore({ dir: dirs.store, ...options })).openWorkspace(dirs.workspace);
  // No baseline: these tests are about the capture itself (files written after a baseline are the user's first: restore-look.test.ts).
  session = await ws.create({ title: 'capture', baseline: false });
}

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-capture-');
  await open();
});
afterEach(() => dirs.cleanup());

const w = (rel: string) => join(dirs.workspace, rel);

describe('capture', () => {
  it('records file (blob + exact mode), symlink (target, not followed), absent and a folder as dir', async () => {
    await writeFile(w('a.txt'), 'alpha');
    await chmod(w('a.txt'), 0o751);
    await symlink('a.txt', w('link'));
    await symlink('/etc/passwd', w('outside-link'));
    await mkdir(w('dir'));
    await chmod(w('dir'), 0o710);
    const r = await session.capture(['a.txt', 'link', 'outside-link', 'new/deep/file.ts', 'dir'], { tool: 'Write' });
    expect(r.tag).toBe('0.1');
    const byPath = Object.fromEntries(r.files.map((f) => [f.path, f]));
    expect(byPath['a.txt']).toMatchObject({ state: 'file', bytes: 5, mode: 0o751 });
    expect(byPath['link']).toEqual({ path: 'link', state: 'symlink', target: 'a.txt' });
    expect(byPath['outside-link']).toEqual({ path: 'outside-link', state: 'symlink', target: '/etc/passwd' });
    expect(byPath['new/deep/file.ts']).toEqual({ path: 'new/deep/file.ts', state: 'absent', newDirs: 2 });
    expect(byPath['dir']).toEqual({ path: 'dir', state: 'dir', mode: 0o710 }); // a folder's mode too (issue 26)
    await ws.ctx.afterCall.drain(); // small new content: in the event, its blob-store copy after the answer
    expect((await ws.ctx.blobs.get(byPath['a.txt']!.blob!)).toString()).toBe('alpha');
  });

  it('records the target of a symlink it names, inside the workspace: an edit through the link restores without DRIFT', async () => {
    // Found by the real-Codex probe: apply_patch on `tl -> real/t.txt` writes real/t.txt; with only
    // the link recorded, the edit read as the user's and `restore 1` refused DRIFT.
    await mkdir(w('real'));
    await writeFile(w('real/t.txt'), 'target\n');
    await symlink('real/t.txt', w('tl'));
    await symlink('real/new.txt', w('dangling'));
    await symlink('real', w('dl'));
    await symlink('/etc/hostname', w('out'));
    await session.turn();
    const r = await session.capture(['tl', 'dangling', 'dl', 'out'], { tool: 'apply_patch', callId: 'c1' });
    expect(r.files.map((f) => `${f.path}:${f.state}`).sort()).toEqual(['dangling:symlink', 'dl:symlink', 'out:symlink', 'real/new.txt:absent', 'real/t.txt:file', 'tl:symlink']);
    await writeFile(w('tl'), 'TARGET via link\n');
    await writeFile(w('dangling'), 'made through the link\n');
    const s = await session.settle(['tl', 'dangling', 'dl', 'out'], { callId: 'c1' });
    expect(s.files.map((f) => f.path).sort()).toEqual(['dangling', 'dl', 'out', 'real/new.txt', 'real/t.txt', 'tl']);
    const back = await session.restore('1');
    expect(back.drift).toEqual([]);
    expect(await readFile(w('real/t.txt'), 'utf8')).toBe('target\n');
    expect(existsSync(w('real/new.txt'))).toBe(false);
    expect(await readlink(w('tl'))).toBe('real/t.txt');
  });

  it('settles the target it captured for a named symlink the tool replaced with a file', async () => {
    // opencode's write tool replaces a link with a regular file: at the settle the name is no link,
    // so the target the capture added (above) was left captured and never settled — `status` listed
    // it unsettled for good, and the next tool capture of it skipped the hand-edit check.
    await mkdir(w('real'));
    await writeFile(w('real/t.txt'), 'target\n');
    await symlink('t.txt', w('real/hop'));
    await symlink('real/hop', w('tl'));
    await session.turn();
    const r = await session.capture(['tl'], { tool: 'write', callId: 'c1' });
    expect(r.files.map((f) => `${f.path}:${f.state}`).sort()).toEqual(['real/t.txt:file', 'tl:symlink']);
    await rm(w('tl'));
    await writeFile(w('tl'), 'a file now\n');
    const s = await session.settle(['tl'], { callId: 'c1' });
    expect(s.files.map((f) => `${f.path}:${f.state}`).sort()).toEqual(['real/t.txt:file', 'tl:file']);
    expect((await session.status()).unsettled).toEqual([]);
    await session.restore('1');
    expect(await readlink(w('tl'))).toBe('real/hop');
    expect(await readFile(w('real/t.txt'), 'utf8')).toBe('target\n');
  });

  it('numbers captures N.K within turns, turn 0 before the first turn', async () => {
    await writeFile(w('a.txt'), '1');
    expect((await session.capture(['a.txt'])).tag).toBe('0.1');
    expect((await session.turn({ messageCount: 3 })).tag).toBe('1');
    expect((await session.capture(['a.txt'])).tag).toBe('1.1');
    expect((await session.capture(['a.txt'])).tag).toBe('1.2');
    expect((await session.turn()).turn).toBe(2);
    expect((await session.capture(['a.txt'])).tag).toBe('2.1');
    const events = await session.events();
    expect(events.find((e) => e.type === 'turn')).toMatchObject({ turn: 1, messageCount: 3 });
  });

  it('refuses paths that escape the workspace and records nothing', async () => {
    await writeFile(w('a.txt'), 'x');
    await symlink(dirs.base, w('up'));
    for (const bad of ['../x', '/etc/passwd', 'up/store/x', w('.')]) {
      await expect(session.capture(['a.txt', bad])).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    }
    expect((await session.events()).filter((e) => e.type === 'capture')).toHaveLength(0);
  });

  it('accepts absolute paths inside the root and dedups repeated paths', async () => {
    await writeFile(w('a.txt'), 'x');
    const r = await session.capture([w('a.txt'), 'a.txt', './a.txt']);
    expect(r.files).toHaveLength(1);
    expect(r.files[0]!.path).toBe('a.txt');
  });

  it('skips files over the size cap instead of losing them', async () => {
    await open({ maxBlobBytes: 1024 });
    await writeFile(w('big.bin'), Buffer.alloc(2048, 7));
    const r = await session.capture(['big.bin']);
    expect(r.files[0]).toMatchObject({ state: 'skipped', why: 'too-large', bytes: 2048 });
  });

  it('is a clearly reported no-op when capture is disabled', async () => {
    await open({ captureEnabled: false });
    await writeFile(w('a.txt'), 'x');
    const r = await session.capture(['a.txt']);
    expect(r).toEqual({ tag: null, files: [], disabled: true });
    expect((await session.events()).filter((e) => e.type === 'capture')).toHaveLength(0);
  });

  it('is durable when it returns: the event is on disk and its content readable by a fresh store', async () => {
    await writeFile(w('a.txt'), 'durable');
    const r = await session.capture(['a.txt']);
    // Small new content rides in the event; its blob-store copy follows the answer (DESIGN §4), so a
    // fresh store reads it through the log until then — without waiting for that copy here.
    const fresh = await openStore({ dir: dirs.store });
    try {
      const log = (await fresh.ctx.backend.read(`workspaces/${ws.id}/sessions/${session.id}/events.jsonl`))!.toString('utf8');
      expect(log).toContain('"type":"capture"');
      const again = await (await fresh.openWorkspace(dirs.workspace)).get(session.id);
      expect((await again.readFile(r.tag!, 'a.txt')).content?.toString()).toBe('durable');
    } finally {
      await fresh.close();
    }
  });
});

describe('settle', () => {
  it('records after-states with content for the last capture, or a given tag', async () => {
    await writeFile(w('a.txt'), 'before');
    await session.turn();
    await session.capture(['a.txt'], { tool: 'Edit' });
    await writeFile(w('a.txt'), 'after');
    const s = await session.settle(['a.txt']);
    expect(s.tag).toBe('1.1');
    await ws.ctx.afterCall.drain(); // small new content: in the event, its blob-store copy after the answer
    expect((await ws.ctx.blobs.get(s.files[0]!.blob!)).toString()).toBe('after');
    const settleEvent = (await session.events()).find((e) => e.type === 'settle') as SettleEvent;
    expect(settleEvent.files[0]).toMatchObject({ path: 'a.txt', state: 'file' });
    await expect(session.settle(['a.txt'], { tag: '9.9' })).rejects.toMatchObject({ code: 'TAG_NOT_FOUND' });
  });

  it('settleInFlight settles each path still in flight under the capture that recorded it last, and nothing else', async () => {
    // Codex's Stop: a call that failed without an after-tool event is settled as its files are.
    await writeFile(w('a.txt'), 'a');
    await writeFile(w('b.txt'), 'b');
    await session.turn();
    await session.capture(['a.txt'], { tool: 'apply_patch', callId: 'c1' });
    await session.capture(['a.txt', 'b.txt'], { tool: 'apply_patch', callId: 'c2' });
    await session.capture(['c.txt'], { tool: 'apply_patch', callId: 'c3' });
    await writeFile(w('c.txt'), 'c');
    await session.settle(['c.txt'], { callId: 'c3' });
    expect((await session.status()).unsettled).toEqual(['a.txt', 'b.txt']);
    expect(await session.settleInFlight()).toEqual(['1.2']);
    expect((await session.status()).unsettled).toEqual([]);
    const settles = (await session.events()).filter((e) => e.type === 'settle') as SettleEvent[];
    expect(settles.map((e) => [e.tag, e.files.map((f) => f.path).sort()])).toEqual([['1.3', ['c.txt']], ['1.2', ['a.txt', 'b.txt']]]);
    expect(await session.settleInFlight()).toEqual([]);
  });
});

describe('conflicts', () => {
  /** `session` records `rel` as `first` (written, captured, settled); then `other` edits it to `second` as a tool does. */
  async function recordedThenWrittenBy(other: Session, rel: string, first: string, second: string): Promise<void> {
    await writeFile(w(rel), first);
    await session.capture([rel]);
    await session.settle([rel]);
    await other.capture([rel]);
    await writeFile(w(rel), second);
    await other.settle([rel]);
  }

  it('records a conflict when another session wrote a path since this one recorded it, and notifies listeners', async () => {
    const other = await ws.create({ title: 'other' });
    const notified: unknown[] = [];
    ws.ctx.events.on('conflict', (c) => notified.push(c));
    await recordedThenWrittenBy(other, 'shared.txt', 'v1', 'v2 from other');
    // Our next capture finds content we did not write, last written by `other`.
    await session.capture(['shared.txt']);
    const conflicts = (await session.events()).filter((e) => e.type === 'conflict');
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]).toMatchObject({ path: 'shared.txt', otherSession: other.id });
    expect(notified).toHaveLength(1);
    // The other session captured v1, which it had never recorded: no conflict there.
    expect((await other.events()).filter((e) => e.type === 'conflict')).toHaveLength(0);
    const capture = (await session.events()).filter((e) => e.type === 'capture').at(-1) as CaptureEvent;
    expect(capture.files[0]!.state).toBe('file');
  });

  it('survives restarts: the owner index is on disk', async () => {
    const other = await ws.create();
    await recordedThenWrittenBy(other, 'f', 'a', 'b');
    const reopened = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
    const again = await reopened.get(session.id);
    await again.capture(['f']);
    expect((await again.events()).some((e) => e.type === 'conflict' && e.otherSession === other.id)).toBe(true);
  });
});
