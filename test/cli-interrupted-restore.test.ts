// A restore interrupted as a newcomer interrupts it (a probe, 2026-12-08): Ctrl-C exited 130 in
// silence with the workspace half restored, the next command (even `status`) finished it silently, and
// `ckpt log` listed restores interrupted before they started as restores with an undo. Now Ctrl-C says
// what happens next, the command that finishes or drops it says so on stderr, and `log` marks the
// dropped one.
import { spawn } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CKPT_BIN, runCli } from './helpers/cli.js';
import { libSession } from './helpers/lib-session.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env: { CKPT_NO_DAEMON: '1' } });

async function logFile(): Promise<string> {
  const ws = join(dirs.store, 'workspaces');
  const [wid] = await readdir(ws);
  const [sid] = await readdir(join(ws, wid!, 'sessions'));
  return join(ws, wid!, 'sessions', sid!, 'events.jsonl');
}

/** Turn 1 then a shell's rewrite of `files` files (one scan records them): restore 1 rewrites them all. */
async function manyEdits(files: number): Promise<void> {
  const names = Array.from({ length: files }, (_, i) => `d${i % 20}/f${i}.txt`);
  for (let d = 0; d < 20; d++) await mkdir(join(dirs.workspace, `d${d}`), { recursive: true });
  for (const n of names) await writeFile(join(dirs.workspace, n), `before ${n}\n`);
  const session = await libSession(dirs.store, dirs.workspace, 'interrupted');
  await session.scan(); // the baseline
  await session.turn();
  for (const n of names) await writeFile(join(dirs.workspace, n), `after ${n}\n`);
  await session.scan({ tool: 'Bash' });
}

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-interrupted-');
});
afterEach(() => dirs.cleanup());

describe('an interrupted restore', () => {
  it('Ctrl-C says the next command finishes it; that command says it did, and the workspace is restored', async () => {
    await manyEdits(1500);
    const file = await logFile();
    const child = spawn(process.execPath, [CKPT_BIN, '--store', dirs.store, 'restore', '1', '--yes'], { cwd: dirs.workspace, env: { ...process.env, CKPT_NO_DAEMON: '1' } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Interrupted past its point of no return: once restore_started is in the log.
    for (let i = 0; i < 2000 && !(await readFile(file, 'utf8')).includes('"restore_started"'); i++) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGINT');
    const code = await exited;
    const log = await readFile(file, 'utf8');
    // A restore of 1,500 files takes a second or more here; one that finished first would make this test say nothing.
    expect(log.includes('"restore_committed"'), 'the restore finished before the interrupt').toBe(false);
    expect(code).toBe(130);
    expect(stderr).toContain('interrupted: if the restore had begun changing files, the next ckpt command of this session finishes it and says so');
    const status = await ckpt(['status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toMatch(/^note: finished a restore to 1 that was interrupted \(restore 1\.2 undoes it\)$/m);
    expect(await readFile(join(dirs.workspace, 'd7/f7.txt'), 'utf8')).toBe('before d7/f7.txt\n');
    // Finished once: the next command has nothing to say.
    expect((await ckpt(['status'])).stderr).not.toContain('note:');
  }, 60_000);

  it('one interrupted before it changed anything: dropped, said so, and marked in the log', async () => {
    await manyEdits(3);
    // What a process killed between its recovery capture and restore_started leaves: that capture only.
    const file = await logFile();
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    const at = new Date().toISOString();
    lines.push(JSON.stringify({ v: 1, seq: lines.length + 1, type: 'capture', at, tag: '1.2', turn: 1, k: 2, tool: 'restore', reason: 'restore to 1', restoreId: 'abc123', files: [] }));
    await writeFile(file, `${lines.join('\n')}\n`);
    const log = await ckpt(['log']);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stderr).toContain('note: a restore to 1 was interrupted before it changed anything: nothing to finish');
    expect(log.stdout).toMatch(/1\.2 +restore +to 1 \[aborted: it changed nothing\]/);
    expect((await ckpt(['log', '--json'])).json().checkpoints.find((c: { tag: string }) => c.tag === '1.2')).toMatchObject({ restoreTo: '1', aborted: true });
    expect(await readFile(join(dirs.workspace, 'd0/f0.txt'), 'utf8')).toBe('after d0/f0.txt\n');
  });
});
