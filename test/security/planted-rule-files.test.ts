// Rule and settings files planted as a FIFO, a device or a symlink to one (found 2026-12-06): a
// `.gitignore -> /dev/zero` symlink, which a cloned repository can carry, aborted `ckpt session new`
// out of memory (std::bad_alloc) and hung `ckpt scan`; a FIFO named `.gitignore` or `.git/index`
// blocked every scan for good. Each such file now reads as no file; in the work tree a symlinked
// rule file is not followed, as git does not follow it. The CLI runs as a child with a time limit
// (SIGKILL: a process blocked on the main thread never runs its SIGTERM handler), so a hang fails
// the test instead of blocking it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CKPT_BIN } from '../helpers/cli.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';

const made: TempDirs[] = [];
afterEach(async () => {
  for (const d of made.splice(0)) await d.cleanup();
});

function ckpt(dirs: TempDirs, args: string[]): { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CKPT_BIN, '--store', dirs.store, ...args], { cwd: dirs.workspace, encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL', env: { ...process.env, NO_COLOR: '1', CKPT_NO_DAEMON: '1' } });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' });

describe('planted rule and settings files', () => {
  it('a .gitignore linked to /dev/zero, a FIFO .gitignore, a linked .ckptignore: session new and scan finish, and none of them is read', async () => {
    const dirs = await makeTempDirs('ckpt-planted-');
    made.push(dirs);
    const ws = dirs.workspace;
    await symlink('/dev/zero', join(ws, '.gitignore'));
    await mkdir(join(ws, 'sub'));
    execFileSync('mkfifo', [join(ws, 'sub', '.gitignore')]);
    await writeFile(join(ws, 'rules.txt'), '*.log\n');
    await symlink('rules.txt', join(ws, '.ckptignore'));
    await writeFile(join(ws, 'a.log'), 'log\n');
    await writeFile(join(ws, 'sub', 'b.log'), 'log\n');
    const created = ckpt(dirs, ['session', 'new', '--json']);
    expect(created.signal, created.stderr).toBeNull();
    expect(created.code, created.stderr).toBe(0);
    await writeFile(join(ws, 'a.log'), 'log 2\n');
    await writeFile(join(ws, 'sub', 'b.log'), 'log 2\n');
    const scanned = ckpt(dirs, ['scan', '--json']);
    expect(scanned.signal, scanned.stderr).toBeNull();
    expect(scanned.code, scanned.stderr).toBe(0);
    // The linked .ckptignore is not followed: *.log is not ignored, both edits are recorded.
    const files = (JSON.parse(scanned.stdout).files as { path: string }[]).map((f) => f.path).sort();
    expect(files).toEqual(['a.log', 'sub/b.log']);
  });

  it('in a git work tree: .gitattributes linked to /dev/zero, a FIFO at .git/index and at .git/info/exclude', async () => {
    const dirs = await makeTempDirs('ckpt-planted-git-');
    made.push(dirs);
    const ws = dirs.workspace;
    await writeFile(join(ws, 'a.txt'), 'a\n');
    git(ws, 'init', '-q');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-q', '-m', 'init');
    await symlink('/dev/zero', join(ws, '.gitattributes'));
    execFileSync('rm', ['-f', join(ws, '.git', 'info', 'exclude'), join(ws, '.git', 'index')]);
    execFileSync('mkfifo', [join(ws, '.git', 'info', 'exclude'), join(ws, '.git', 'index')]);
    const created = ckpt(dirs, ['session', 'new', '--json']);
    expect(created.signal, created.stderr).toBeNull();
    expect(created.code, created.stderr).toBe(0);
    await writeFile(join(ws, 'a.txt'), 'b\n');
    const scanned = ckpt(dirs, ['scan', '--json']);
    expect(scanned.signal, scanned.stderr).toBeNull();
    expect(JSON.parse(scanned.stdout).files.map((f: { path: string }) => f.path)).toEqual(['a.txt']);
  });

  it('a FIFO .git at the workspace root is not a repository and does not block', async () => {
    const dirs = await makeTempDirs('ckpt-planted-dotgit-');
    made.push(dirs);
    execFileSync('mkfifo', [join(dirs.workspace, '.git')]);
    await writeFile(join(dirs.workspace, 'a.txt'), 'a\n');
    const created = ckpt(dirs, ['session', 'new', '--json']);
    expect(created.signal, created.stderr).toBeNull();
    expect(created.code, created.stderr).toBe(0);
  });

  it("ckpt init refuses an agent settings file that is a FIFO (IO), instead of blocking", async () => {
    const dirs = await makeTempDirs('ckpt-planted-init-');
    made.push(dirs);
    await mkdir(join(dirs.workspace, '.claude'));
    execFileSync('mkfifo', [join(dirs.workspace, '.claude', 'settings.local.json')]);
    const r = ckpt(dirs, ['init', 'claude', '--json']);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stderr).error).toMatchObject({ code: 'IO' });
    expect(JSON.parse(r.stderr).error.message).toContain('not a regular file');
  });
});
