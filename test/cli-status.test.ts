// `ckpt status` (issue 10, item 18): workspace, session, turn, captured-but-unsettled paths and the
// paths changed since ckpt last recorded them — with a scan baseline over the whole tree, without one
// over the recorded paths — and it records nothing (the log and the scan index are left as they were).
import { chmod, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Session } from '../src/index.js';
import { libSession } from './helpers/lib-session.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let s: Session;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace });
const w = (rel: string) => join(dirs.workspace, rel);

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-status-');
  s = await libSession(dirs.store, dirs.workspace, 'st');
});
afterEach(() => dirs.cleanup());

async function storeFiles(): Promise<{ events: string; index: string | null }> {
  const store = await openStore({ dir: dirs.store });
  const ws = await store.openWorkspace(dirs.workspace);
  const events = await readFile(join(dirs.store, 'workspaces', ws.id, 'sessions', 'st', 'events.jsonl'), 'utf8');
  const index = await stat(join(dirs.store, 'workspaces', ws.id, 'scan-index.bin')).then((s) => `${s.size}:${s.mtimeMs}`, () => null);
  return { events, index };
}

describe('ckpt status', () => {
  it('without a baseline: turn, unsettled captures, and recorded paths that changed', async () => {
    await writeFile(w('a.txt'), 'one\n');
    await writeFile(w('b.txt'), 'one\n');
    await s.turn();
    await s.capture(['a.txt', 'b.txt']);
    await writeFile(w('a.txt'), 'two\n');
    await s.settle(['a.txt']);
    let st = (await ckpt(['status', '--json'])).json();
    expect(st).toEqual({
      workspace: dirs.workspace,
      session: 'st',
      turn: 1,
      lastCapture: { tag: '1.1', at: expect.any(String) },
      unsettled: ['b.txt'],
      changed: { count: 0, paths: [] },
      baseline: false,
    });
    await writeFile(w('a.txt'), 'edited by hand\n');
    st = (await ckpt(['status', '--json'])).json();
    expect(st.changed).toEqual({ count: 1, paths: ['a.txt'] });
    const text = await ckpt(['status']);
    expect(text.stdout).toContain('session   st');
    expect(text.stdout).toMatch(/1 captured path\(s\) not settled:\n {2}b\.txt/);
    expect(text.stdout).toMatch(/1 path\(s\) changed since ckpt last recorded them.*\n {2}a\.txt/);
    // The suggested command works as printed: it names the store this run used.
    expect(text.stdout).toMatch(new RegExp(`record them with: .*ckpt\\.js --store ${dirs.store} scan`));
  });

  it('with a baseline: created, modified, deleted and mode changes over the whole tree, without recording anything', async () => {
    for (const f of ['keep.txt', 'mod.txt', 'gone.txt', 'run.sh']) await writeFile(w(f), `${f}\n`);
    await s.scan();
    expect((await ckpt(['status', '--json'])).json()).toMatchObject({ baseline: true, changed: { count: 0, paths: [] }, unsettled: [] });

    await writeFile(w('mod.txt'), 'changed\n');
    await rm(w('gone.txt'));
    await writeFile(w('new.txt'), 'new\n');
    await chmod(w('run.sh'), 0o755);
    const before = await storeFiles();
    const st = (await ckpt(['status', '--json', '--limit', '2'])).json();
    expect(st.changed.count).toBe(4);
    expect(st.changed.paths).toEqual(['gone.txt', 'mod.txt']);
    expect(await storeFiles()).toEqual(before);

    // What status reported is what the next scan records.
    const scanned = (await ckpt(['scan', '--json'])).json();
    expect(scanned.files.map((f: { path: string }) => f.path).sort()).toEqual(['gone.txt', 'mod.txt', 'new.txt', 'run.sh']);
    expect((await ckpt(['status', '--json'])).json().changed.count).toBe(0);
  });

  it('a settled write is not a change (library facade: a plain JSON-able object)', async () => {
    await writeFile(w('a.txt'), 'one\n');
    await s.scan();
    await s.capture(['a.txt']);
    await writeFile(w('a.txt'), 'two\n');
    await s.settle(['a.txt']);
    const status = await s.status();
    expect(status).toMatchObject({ session: 'st', turn: 0, unsettled: [], changed: { count: 0, paths: [] }, baseline: true });
    expect(JSON.parse(JSON.stringify(status))).toEqual(status);
  });
});
