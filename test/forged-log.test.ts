// Every path read back from the store is untrusted (DESIGN §6, issue 10 item 1): a forged log line
// whose restore plan, capture or restore id points outside the workspace makes every command fail
// LOG_CORRUPT (exit 5) with nothing written anywhere, and a plan path under a symlinked folder is
// never written through by recovery.
import { readdir, readFile, symlink, writeFile, mkdir, appendFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../src/store.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let outside: string;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, '--session', 's1', ...args], { cwd: dirs.workspace });

async function logFile(): Promise<string> {
  const wsDir = join(dirs.store, 'workspaces');
  const [wid] = await readdir(wsDir);
  return join(wsDir, wid!, 'sessions', 's1', 'events.jsonl');
}

/** Appends raw lines after the last event, continuing its seq numbers. */
async function forge(events: Record<string, unknown>[]): Promise<void> {
  const file = await logFile();
  const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
  let seq = lines.length;
  const text = events.map((e) => JSON.stringify({ v: 1, seq: ++seq, at: new Date().toISOString(), ...e })).join('\n');
  await appendFile(file, `${text}\n`);
}

async function listing(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    // A session lock is no state: it lingers a few ms after a use in this process (DESIGN §10).
    if (entry.name.endsWith('.ckpt-lock')) continue;
    const p = join(entry.parentPath, entry.name);
    out[p] = entry.isFile() ? await readFile(p, 'utf8') : entry.isDirectory() ? 'dir' : 'other';
  }
  return out;
}

let blob: string;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-forged-');
  outside = join(dirs.base, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'victim.txt'), 'keep me');
  // Set up in-process (fast); the forged log is then read by the real CLI.
  const ws = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
  const session = await ws.create({ id: 's1' });
  await writeFile(join(dirs.workspace, 'a.txt'), 'v1');
  await session.turn();
  const cap = await session.capture(['a.txt']);
  blob = cap.files[0]!.blob!;
  await writeFile(join(dirs.workspace, 'a.txt'), 'v2');
  await session.settle(['a.txt']);
});
afterEach(() => dirs.cleanup());

const COMMANDS: string[][] = [
  ['log', '--json'],
  ['session', 'show', 's1', '--json'],
  ['diff', '1', '--json'],
  ['capture', 'a.txt', '--json'],
  ['settle', 'a.txt', '--json'],
  ['scan', '--json'],
  ['turn', '--json'],
  ['restore', '1', '--yes', '--json'],
  ['undo', '1', 'a.txt', '--yes', '--json'],
  ['rewind', '1', '--yes', '--json'],
  ['session', 'fork', 's1', '--json'],
];

describe('forged log lines', () => {
  const forgeries: [string, Record<string, unknown>[]][] = [
    [
      'a restore plan naming ../outside',
      [
        { type: 'capture', tag: '1.2', turn: 1, k: 2, tool: 'restore', restoreId: 'r1', stageDirs: [], files: [] },
        {
          type: 'restore_started',
          id: 'r1',
          to: '1',
          recovery: '1.2',
          plan: [
            { path: '../outside/x.txt', action: 'write', blob, mode: 0o644 },
            { path: '../outside/victim.txt', action: 'delete' },
          ],
        },
      ],
    ],
    ['an absolute plan path', [{ type: 'restore_started', id: 'r2', to: '1', recovery: '1.1', plan: [{ path: '/etc/x', action: 'delete' }] }]],
    ['a restore id that is a path', [{ type: 'restore_started', id: '../../../outside/z', to: '1', recovery: '1.1', plan: [{ path: 'a.txt', action: 'write', blob }] }]],
    ['a capture of ../outside', [{ type: 'capture', tag: '1.2', turn: 1, k: 2, tool: 'Edit', files: [{ path: '../outside/victim.txt', state: 'absent' }] }]],
    ['staging folders outside', [{ type: 'capture', tag: '1.2', turn: 1, k: 2, tool: 'restore', restoreId: 'r3', stageDirs: ['../outside'], files: [] }]],
    ['a settle with a dot segment', [{ type: 'settle', tag: '1.1', files: [{ path: 'x/./../../outside/victim.txt', state: 'absent' }] }]],
    ['a blob id that is a path', [{ type: 'restore_started', id: 'r4', to: '1', recovery: '1.1', plan: [{ path: 'a.txt', action: 'write', blob: '../../../../outside/victim.txt' }] }]],
    // A plan recovery could not undo (found by a hostile-store probe: `ckpt status` carried out a
    // planted plan, deleting files no capture recorded and writing a git hook from a planted blob).
    ['an open restore without a recovery capture', [{ type: 'restore_started', id: 'r6', to: '1', recovery: '1.1', plan: [{ path: 'a.txt', action: 'delete' }] }]],
    [
      'an open restore whose recovery capture did not record its paths',
      [
        { type: 'capture', tag: '1.2', turn: 1, k: 2, tool: 'restore', restoreId: 'r7', stageDirs: [], files: [{ path: 'a.txt', state: 'absent' }] },
        { type: 'restore_started', id: 'r7', to: '1', recovery: '1.2', plan: [{ path: 'a.txt', action: 'delete' }, { path: 'planted', action: 'symlink', target: '/etc/passwd' }] },
      ],
    ],
    [
      'an open restore whose recovery content is not in the store',
      [
        { type: 'capture', tag: '1.2', turn: 1, k: 2, tool: 'restore', restoreId: 'r8', stageDirs: [], files: [{ path: 'a.txt', state: 'file', blob: 'e'.repeat(64), mode: 0o644 }] },
        { type: 'restore_started', id: 'r8', to: '1', recovery: '1.2', plan: [{ path: 'a.txt', action: 'delete' }] },
      ],
    ],
  ];
  forgeries.forEach(([name, events], n) => {
    it(`${name}: every command fails LOG_CORRUPT and writes nothing`, async () => {
      await forge(events);
      const before = await listing(dirs.base);
      // The whole command list through the CLI for the first forgery; the others go through the
      // same decoder, checked in-process (opening the session runs recovery first).
      if (n > 0) {
        const ws = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
        await expect(ws.get('s1')).rejects.toMatchObject({ code: 'LOG_CORRUPT' });
        expect(await listing(dirs.base)).toEqual(before);
        return;
      }
      for (const args of COMMANDS) {
        const r = await ckpt(args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(5);
        expect(JSON.parse(r.stderr).error.code, args.join(' ')).toBe('LOG_CORRUPT');
        expect(await listing(dirs.base), args.join(' ')).toEqual(before);
      }
      // verify names the problem (and changes nothing either).
      const v = await ckpt(['verify', '--json']);
      expect(v.code).toBe(5);
      expect(v.json().problems).toEqual([expect.objectContaining({ kind: 'log_corrupt', session: 's1' })]);
      expect(await listing(dirs.base)).toEqual(before);
    });
  });

  it('recovery never writes through a folder replaced by a symlink to outside', async () => {
    await forge([
      { type: 'capture', tag: '1.2', turn: 1, k: 2, tool: 'restore', restoreId: 'r5', stageDirs: [], files: [{ path: 'sub/victim.txt', state: 'absent' }, { path: 'sub/y.txt', state: 'absent' }] },
      { type: 'restore_started', id: 'r5', to: '1', recovery: '1.2', plan: [{ path: 'sub/victim.txt', action: 'write', blob }, { path: 'sub/y.txt', action: 'delete', newDirs: 1 }] },
    ]);
    await symlink(outside, join(dirs.workspace, 'sub'), 'dir');
    const ws = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
    await ws.get('s1'); // recovery finishes the restore from its plan
    expect(await readFile(join(outside, 'victim.txt'), 'utf8')).toBe('keep me');
    expect((await readdir(outside)).sort()).toEqual(['victim.txt']);
    expect((await stat(outside)).isDirectory()).toBe(true);
  });
});
