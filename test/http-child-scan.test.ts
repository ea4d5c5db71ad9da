// `ckpt serve` runs full scans in a child process (`ckpt scan --json`, DESIGN §10 "Daemon") so their
// peak memory leaves with the child; watched scans stay in the daemon. Real daemon process, real
// HTTP: the first scan (the watches are new, so what changed before them is unknown) and `full: true`
// run in a child and record exactly what an in-process scan records; a scan after one more edit is a
// watched one in the daemon; a watched scan that gives way (a rule file) runs in the child too, and
// the next one is watched again; a failing child's error reaches the caller with its code.
import type { ChildProcess } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../src/store.js';
import { createClient, spawnDaemon } from './helpers/http.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await dirs?.cleanup();
});

const changes = (r: { files: { path: string; change: string }[] }) => r.files.map((f) => `${f.change} ${f.path}`).sort();

describe('full scans of ckpt serve run in a child process', () => {
  it('records what an in-process scan records; watched scans stay in the daemon; errors keep their code', async () => {
    dirs = await makeTempDirs('ckpt-child-scan-');
    const ws = dirs.workspace;
    await mkdir(join(ws, 'src'));
    for (let i = 0; i < 20; i++) await writeFile(join(ws, 'src', `f${i}.txt`), `v0 ${i}\n`);
    const store = await openStore({ dir: dirs.store });
    const session = await (await store.openWorkspace(ws)).create({ id: 's1' });
    await session.scan();
    // The same edits twice: once scanned by the daemon, once (on a copy of the state) in-process.
    await writeFile(join(ws, 'src', 'f1.txt'), 'v1\n');
    await rm(join(ws, 'src', 'f2.txt'));
    await writeFile(join(ws, 'src', 'new.txt'), 'new\n');

    const d = await spawnDaemon(dirs.store);
    children.push(d.child);
    const http = createClient(d.url, d.token);
    const scan = async (body: Record<string, unknown> = {}) => {
      const r = await http.call('POST', '/sessions/s1/scan', { body: { workspace: ws, tool: 'Bash', ...body } });
      expect(r.status, r.text).toBe(200);
      return r.json();
    };
    const health = async () => (await http.call('GET', '/health')).json().scans;

    const first = await scan();
    expect(first.watched).toBeUndefined();
    expect(changes(first)).toEqual(['created src/new.txt', 'deleted src/f2.txt', 'modified src/f1.txt']);
    expect(await health()).toEqual({ total: 1, watched: 0, inChild: 1 });

    await writeFile(join(ws, 'src', 'f3.txt'), 'v1\n');
    const watched = await scan();
    expect(watched.watched).toBeGreaterThan(0);
    expect(changes(watched)).toEqual(['modified src/f3.txt']);
    expect(await health()).toEqual({ total: 2, watched: 1, inChild: 1 });

    await writeFile(join(ws, 'src', 'f4.txt'), 'v1\n');
    const full = await scan({ full: true });
    expect(full.watched).toBeUndefined();
    expect(changes(full)).toEqual(['modified src/f4.txt']);
    expect(await health()).toEqual({ total: 3, watched: 1, inChild: 2 });

    // A new folder: the watched scan records it and what it holds, in the daemon.
    await mkdir(join(ws, 'lib'));
    await writeFile(join(ws, 'lib', 'g.txt'), 'g\n');
    const made = await scan();
    expect(made.watched).toBeGreaterThan(0);
    expect(changes(made)).toEqual(['created lib', 'created lib/g.txt']);
    expect(await health()).toEqual({ total: 4, watched: 2, inChild: 2 });

    // A rule file: the watched scan gives way to a full scan — in the child too.
    await writeFile(join(ws, '.gitignore'), 'nothing-here\n');
    const declined = await scan();
    expect(declined.watched).toBeUndefined();
    expect(changes(declined)).toEqual(['created .gitignore']);
    expect(await health()).toEqual({ total: 5, watched: 2, inChild: 3 });
    // The next edit elsewhere is watched again: the full scan covered the rule file the set put back
    // (it kept it, and every later scan gave way too, until the daemon restarted: a probe).
    await writeFile(join(ws, 'src', 'f5.txt'), 'v1\n');
    const after = await scan();
    expect(after.watched).toBeGreaterThan(0);
    expect(changes(after)).toEqual(['modified src/f5.txt']);
    expect(await health()).toEqual({ total: 6, watched: 3, inChild: 3 });

    // The log holds each change once, in scan order: nothing recorded twice by the two processes.
    const log = (await (await (await openStore({ dir: dirs.store })).openWorkspace(ws)).get('s1')).events();
    const scanned = (await log).filter((e) => e.type === 'capture').map((e) => (e.files as { path: string }[]).map((f) => f.path).sort());
    expect(scanned).toEqual([
      ['src/f1.txt', 'src/f2.txt', 'src/new.txt'],
      ['src/f3.txt'],
      ['src/f4.txt'],
      ['lib', 'lib/g.txt'],
      ['.gitignore'],
      ['src/f5.txt'],
    ]);

    // A child that fails: its JSON error's code is the daemon's answer (the workspace is gone).
    await rm(ws, { recursive: true, force: true });
    const failed = await http.call('POST', '/sessions/s1/scan', { body: { workspace: ws, tool: 'Bash', full: true } });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect(failed.json().error.code).toMatch(/^[A-Z_]+$/);
    expect(failed.json().error.code).not.toBe('INTERNAL');
  }, 60_000);
});

describe("the daemon's own folder removed (a probe: the project cloned again in place)", () => {
  it('its full scans still run: the child starts in the store when the daemon\'s folder is gone', async () => {
    dirs = await makeTempDirs('ckpt-child-cwd-');
    const ws = dirs.workspace;
    await writeFile(join(ws, 'a'), 'a\n');
    const store = await openStore({ dir: dirs.store });
    await (await store.openWorkspace(ws)).create({ id: 's1' });
    // Started in the project, as a hook run there starts it.
    const d = await spawnDaemon(dirs.store, { cwd: ws });
    children.push(d.child);
    const http = createClient(d.url, d.token);
    await rm(ws, { recursive: true });
    await mkdir(ws);
    await writeFile(join(ws, 'a'), 'a2\n');
    await writeFile(join(ws, 'b'), 'b\n');
    const r = await http.call('POST', '/sessions/s1/scan', { body: { workspace: ws, tool: 'Bash', full: true } });
    expect(r.status, r.text).toBe(200);
    expect(changes(r.json())).toEqual(['created b', 'modified a']);
  });
});
