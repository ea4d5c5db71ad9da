// Folders their owner cannot read or write (fsedge probe, 2026-12-06), through the real CLI run
// without the capabilities that let root bypass permissions: a restore that writes into a folder
// and gives it back a mode without read permission (a 0311 drop box) must not fail after its point
// of no return (the folder flush opened it and got EACCES; recovery failed the same way on every
// later command, for good); and the files in a folder the agent made read-only (`chmod -w`) are
// put back by a restore to before, which gives the folder its write permission first; a folder its
// owner may not search (`chmod -x`) makes a restore's look report what is beneath it, not fail IO.
import { spawnSync } from 'node:child_process';
import { chmod, lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CKPT_BIN } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
beforeEach(async () => (dirs = await makeTempDirs('ckpt-no-access-')));
afterEach(async () => {
  for (const d of ['drop', 'ro', 'nox']) await chmod(join(dirs.workspace, d), 0o755).catch(() => undefined);
  await dirs.cleanup();
});

/** The CLI as a plain user: as root, without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH. */
function ckpt(args: string[]) {
  const argv = [process.execPath, CKPT_BIN, '--store', dirs.store, ...args];
  const [cmd, ...rest] = process.getuid?.() === 0 ? ['setpriv', '--inh-caps=-all', '--bounding-set=-dac_override,-dac_read_search', ...argv] : argv;
  const r = spawnSync(cmd!, rest, { cwd: dirs.workspace, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const ok = (args: string[]) => {
  const r = ckpt(args);
  expect(r.code, r.stderr).toBe(0);
  return r;
};
const modeOf = async (p: string) => ((await lstat(p)).mode & 0o7777).toString(8);

describe('folders their owner cannot read', () => {
  it('a restore that writes into a folder and makes it 0311 again commits; the session stays usable', async () => {
    const drop = join(dirs.workspace, 'drop');
    await mkdir(drop);
    await writeFile(join(drop, 'in.txt'), 'one\n');
    ok(['session', 'new']);
    ok(['scan']);
    await chmod(drop, 0o311);
    ok(['scan']);
    ok(['turn']); // prompt 1: drop is 0311, in.txt "one"
    await chmod(drop, 0o755);
    await writeFile(join(drop, 'in.txt'), 'two\n');
    ok(['scan']);
    ok(['turn']);

    const r = ckpt(['restore', '1', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).skipped).toEqual([]);
    expect(await modeOf(drop)).toBe('311');
    await chmod(drop, 0o755);
    expect(await readFile(join(drop, 'in.txt'), 'utf8')).toBe('one\n');
    await chmod(drop, 0o311);
    expect(ckpt(['verify']).code).toBe(0);
    ok(['status']);
    // and the undo (into the 0311 folder, which stays 0311 while it is written) commits too
    const undo = ckpt(['restore', JSON.parse(r.stdout).undo, '--yes', '--json']);
    expect(undo.code, undo.stderr).toBe(0);
    expect(await modeOf(drop)).toBe('755');
    expect(await readFile(join(drop, 'in.txt'), 'utf8')).toBe('two\n');
    expect(ckpt(['verify']).code).toBe(0);
  });

  it('files in a folder the agent made read-only are put back (deleted, modified, created), and the undo makes it read-only again', async () => {
    const ro = join(dirs.workspace, 'ro');
    await mkdir(ro);
    await writeFile(join(ro, 'f'), 'one\n');
    await writeFile(join(ro, 'gone'), 'here\n');
    ok(['session', 'new']);
    ok(['scan']);
    ok(['turn']); // prompt 1
    await writeFile(join(ro, 'f'), 'two\n');
    await writeFile(join(ro, 'g'), 'new\n');
    const { rm } = await import('node:fs/promises');
    await rm(join(ro, 'gone'));
    await chmod(ro, 0o555);
    ok(['scan']);
    ok(['turn']);

    const r = ckpt(['restore', '1', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.skipped).toEqual([]);
    expect(await modeOf(ro)).toBe('755');
    expect(await readFile(join(ro, 'f'), 'utf8')).toBe('one\n');
    expect(await readFile(join(ro, 'gone'), 'utf8')).toBe('here\n');
    await expect(lstat(join(ro, 'g'))).rejects.toThrow(/ENOENT/);

    const undo = ckpt(['restore', result.undo, '--yes', '--json']);
    expect(undo.code, undo.stderr).toBe(0);
    expect(JSON.parse(undo.stdout).skipped).toEqual([]);
    expect(await modeOf(ro)).toBe('555');
    expect(await readFile(join(ro, 'f'), 'utf8')).toBe('two\n');
    expect(await readFile(join(ro, 'g'), 'utf8')).toBe('new\n');
    await expect(lstat(join(ro, 'gone'))).rejects.toThrow(/ENOENT/);
    expect(ckpt(['verify']).code).toBe(0);
  });

  it('a folder its owner may not search (644): restore, its dry run and diff report what is beneath it instead of failing IO', async () => {
    const nox = join(dirs.workspace, 'nox');
    await mkdir(nox);
    await writeFile(join(nox, 'in.txt'), 'one\n');
    await writeFile(join(dirs.workspace, 'top'), 't\n');
    ok(['session', 'new']);
    ok(['scan']);
    ok(['turn']); // prompt 1
    await writeFile(join(nox, 'in.txt'), 'two\n');
    await chmod(nox, 0o644);
    ok(['scan']);
    ok(['turn']); // prompt 2: nox 644
    await writeFile(join(dirs.workspace, 'top'), 't2\n');
    ok(['scan']);
    ok(['turn']); // prompt 3
    const r = ckpt(['restore', '1', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    ok(['restore', JSON.parse(r.stdout).undo, '--yes']);
    expect(await modeOf(nox)).toBe('644');

    for (const args of [['restore', '2', '--dry-run', '--json'], ['diff', '2', '--json'], ['restore', '1', '--dry-run', '--json']]) {
      const run = ckpt(args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    }
    const back = ckpt(['restore', '2', '--yes', '--json']);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout).skipped).toEqual([{ path: 'nox/in.txt', why: expect.stringMatching(/unreadable/) }]);
    await chmod(nox, 0o755);
    ok(['turn']);
    ok(['restore', '1', '--yes']);
    expect(await readFile(join(nox, 'in.txt'), 'utf8')).toBe('one\n');
    expect(await readFile(join(dirs.workspace, 'top'), 'utf8')).toBe('t\n');
    expect(ckpt(['verify']).code).toBe(0);
  });

  it('a folder its owner may not list (311): what ckpt knows inside is looked at by name, so restore N puts back the edits made before the chmod; what it never saw stays', async () => {
    const d = join(dirs.workspace, 'drop');
    await mkdir(join(d, 'sub'), { recursive: true });
    await writeFile(join(d, 'f'), 'one\n');
    await writeFile(join(d, 'g'), 'here\n');
    await writeFile(join(d, 'sub', 'h'), 'h1\n');
    ok(['session', 'new']);
    ok(['scan']);
    ok(['turn']); // prompt 1
    await writeFile(join(d, 'f'), 'two\n');
    const { rm } = await import('node:fs/promises');
    await rm(join(d, 'g'));
    await writeFile(join(d, 'sub', 'h'), 'h2\n');
    await writeFile(join(d, 'unseen'), 'made while it could be listed, never scanned\n');
    await chmod(d, 0o311);
    const scan = JSON.parse(ok(['scan', '--json']).stdout);
    expect(scan.files.map((f: { path: string; change: string }) => `${f.change} ${f.path}`).sort()).toEqual(['deleted drop/g', 'mode drop', 'modified drop/f', 'modified drop/sub/h']);
    ok(['turn']); // prompt 2

    const r = ckpt(['restore', '1', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(await modeOf(d)).toBe('755');
    expect(await readFile(join(d, 'f'), 'utf8')).toBe('one\n');
    expect(await readFile(join(d, 'g'), 'utf8')).toBe('here\n');
    expect(await readFile(join(d, 'sub', 'h'), 'utf8')).toBe('h1\n');
    expect(await readFile(join(d, 'unseen'), 'utf8')).toMatch(/never scanned/); // adopted when seen, never deleted
    const undo = ckpt(['restore', JSON.parse(r.stdout).undo, '--yes', '--json']);
    expect(undo.code, undo.stderr).toBe(0);
    expect(await modeOf(d)).toBe('311');
    await chmod(d, 0o755);
    expect(await readFile(join(d, 'f'), 'utf8')).toBe('two\n');
    await expect(lstat(join(d, 'g'))).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(d, 'sub', 'h'), 'utf8')).toBe('h2\n');
    expect(await readFile(join(d, 'unseen'), 'utf8')).toMatch(/never scanned/);
    expect(ckpt(['verify']).code).toBe(0);
  });

  it('a folder read-only at the tag and now, whose files one step changed (chmod 755, edit, chmod 555): restored inside, 555 throughout', async () => {
    const d = join(dirs.workspace, 'ro');
    await mkdir(d);
    await writeFile(join(d, 'f1'), 'one\n');
    await writeFile(join(d, 'f2'), 'two\n');
    await chmod(d, 0o555);
    ok(['session', 'new']);
    ok(['scan']);
    ok(['turn']); // prompt 1: ro is 555
    await chmod(d, 0o755);
    await writeFile(join(d, 'f1'), 'UNO\n');
    const { rm } = await import('node:fs/promises');
    await rm(join(d, 'f2'));
    await writeFile(join(d, 'f3'), 'new\n');
    await chmod(d, 0o555);
    ok(['scan']);
    ok(['turn']);

    const r = ckpt(['restore', '1', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).skipped).toEqual([]);
    expect(await modeOf(d)).toBe('555');
    expect(await readFile(join(d, 'f1'), 'utf8')).toBe('one\n');
    expect(await readFile(join(d, 'f2'), 'utf8')).toBe('two\n');
    await expect(lstat(join(d, 'f3'))).rejects.toThrow(/ENOENT/);
    const undo = ckpt(['restore', JSON.parse(r.stdout).undo, '--yes', '--json']);
    expect(undo.code, undo.stderr).toBe(0);
    expect(JSON.parse(undo.stdout).skipped).toEqual([]);
    expect(await modeOf(d)).toBe('555');
    expect(await readFile(join(d, 'f1'), 'utf8')).toBe('UNO\n');
    expect(await readFile(join(d, 'f3'), 'utf8')).toBe('new\n');
    await expect(lstat(join(d, 'f2'))).rejects.toThrow(/ENOENT/);
    expect(ckpt(['verify']).code).toBe(0);
  });

  it('a folder read-only at the tag whose files the agent changed (chmod 755, edit, chmod 511): restored inside, and 555 again', async () => {
    const d = join(dirs.workspace, 'ro');
    await mkdir(d);
    await writeFile(join(d, 'f1'), 'one\n');
    await writeFile(join(d, 'f2'), 'two\n');
    ok(['session', 'new']);
    ok(['scan']);
    ok(['turn']);
    await writeFile(join(d, 'f1'), 'ONE\n');
    const { rm } = await import('node:fs/promises');
    await rm(join(d, 'f2'));
    await chmod(d, 0o555);
    ok(['scan']);
    ok(['turn']); // prompt 2: ro is 555
    await chmod(d, 0o755);
    await writeFile(join(d, 'f1'), 'UNO\n');
    await writeFile(join(d, 'f4'), 'new\n');
    await chmod(d, 0o511);
    ok(['scan']);
    ok(['turn']);

    const r = ckpt(['restore', '2', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).skipped).toEqual([]);
    expect(await modeOf(d)).toBe('555');
    expect(await readFile(join(d, 'f1'), 'utf8')).toBe('ONE\n');
    await expect(lstat(join(d, 'f4'))).rejects.toThrow(/ENOENT/);
    const undo = ckpt(['restore', JSON.parse(r.stdout).undo, '--yes', '--json']);
    expect(undo.code, undo.stderr).toBe(0);
    expect(JSON.parse(undo.stdout).skipped).toEqual([]);
    expect(await modeOf(d)).toBe('511');
    expect(await readFile(join(d, 'f4'), 'utf8')).toBe('new\n');
    expect(ckpt(['verify']).code).toBe(0);
  });
});
