// A store the user can read but not write (2026-12-06, a newcomer's probe): a read-only mount, or a
// store whose owner took write permission off it. Read commands work — opening a workspace the store
// knows writes nothing (it used to freshen workspace.json, and every command failed IO on EROFS) —
// and a command that must write fails IO (exit 6), the store left exactly as it was. Real processes
// on a real read-only bind mount (a private mount namespace: needs root and unshare), and as an
// unprivileged user (root ignores permission bits).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, lstat, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CKPT_BIN, runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { SHARED_BASE } from './helpers/shared-store.js';

const isRoot = process.getuid?.() === 0;
/** A private mount namespace where a bind mount can be made read-only (root, util-linux unshare). */
const canMount = isRoot && !SHARED_BASE && spawnSync('unshare', ['-m', 'sh', '-c', 'mount --bind / /mnt && echo ok'], { encoding: 'utf8' }).stdout?.includes('ok');
/** As `nobody` (setpriv), able to run this checkout's CLI: a clone under a private folder (mktemp -d) is not. */
const canDrop = isRoot && !SHARED_BASE && spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, CKPT_BIN, '--version']).status === 0;

let dirs: TempDirs;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace });

/** The command run over a read-only bind mount of the store (only that process sees the mount). */
function overReadOnlyMount(args: string[]) {
  const script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';
  return spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', dirs.store, process.execPath, CKPT_BIN, '--store', dirs.store, ...args], {
    cwd: dirs.workspace,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
}

/** The command run as user `nobody` (the store is theirs, with write permission taken off). */
function asNobody(args: string[]) {
  return spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, CKPT_BIN, '--store', dirs.store, ...args], {
    cwd: dirs.workspace,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', HOME: dirs.base },
  });
}

/**
 * Every entry of the store with its type, size, mode and mtime: any write shows. `blobTimes` false
 * leaves out loose blobs' mtimes: a capture's put of content the store holds freshens it (§3, the GC
 * guard), which a file's owner may do without write permission, before its log append fails.
 */
async function snapshot(dir: string, blobTimes = true, out: string[] = []): Promise<string[]> {
  for (const name of (await readdir(dir)).sort()) {
    const abs = join(dir, name);
    const st = await lstat(abs);
    const time = blobTimes || st.isDirectory() || !abs.includes('/blobs/') ? st.mtimeMs : '';
    out.push(`${abs} ${st.isDirectory() ? 'd' : st.size} ${st.mode.toString(8)} ${time}`);
    if (st.isDirectory()) await snapshot(abs, blobTimes, out);
  }
  return out;
}

const READS: string[][] = [
  ['log'],
  ['log', '--all'],
  ['status'],
  ['diff', '0'],
  ['show', '0.1'],
  ['cat', '0.1', 'a.txt'],
  ['session', 'list'],
  ['session', 'show'],
  ['session', 'tree'],
  ['conversation', 'show'],
  ['conflicts'],
  ['owner', 'a.txt'],
  ['workspace', 'list'],
  ['stats'],
  ['verify'],
];
/** Dry runs record nothing: they answer too, without the session and scan locks they cannot make there. */
const DRY_RUNS: string[][] = [
  ['restore', '0.1', '--dry-run'],
  ['restore', '1', '--dry-run'],
  ['undo', '0.1', 'a.txt', '--dry-run'],
  ['rewind', '0.1', '--dry-run'],
  ['rewind', '0.1', '--fork', '--dry-run'],
];
const WRITES: string[][] = [['capture', 'a.txt'], ['turn'], ['session', 'new'], ['restore', '0.1', '--yes'], ['restore', '1', '--force', '--yes'], ['rewind', '0.1', '--yes']];

/** What each dry run answers on the writable store (before the test takes write access away). */
let planned: Map<string, unknown>;
const dryRunJson = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-ro-store-');
  await writeFile(join(dirs.workspace, 'a.txt'), 'one\n');
  expect((await ckpt(['session', 'new'])).code).toBe(0);
  expect((await ckpt(['capture', 'a.txt'])).code).toBe(0);
  await writeFile(join(dirs.workspace, 'a.txt'), 'two\n');
  expect((await ckpt(['settle', 'a.txt'])).code).toBe(0);
  // A scan baseline, and a turn that began with a scan: a restore then looks for outside changes
  // under the workspace's scan lock — and finds the hand edit below (drift).
  expect((await ckpt(['scan'])).code).toBe(0);
  expect((await ckpt(['turn'])).code).toBe(0);
  await writeFile(join(dirs.workspace, 'a.txt'), 'three\n');
  planned = new Map();
  for (const args of DRY_RUNS) {
    const r = await ckpt([...args, '--json']);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    planned.set(args.join(' '), dryRunJson(r.stdout));
  }
  // Anything the store still writes after the commands above (its after-call queue) is done.
  expect((await ckpt(['status'])).code).toBe(0);
  // No owner index (a cache rebuilt from the logs under its lock, then written): readers rebuild it
  // in memory when neither the lock nor the index can be written.
  const [wid] = await readdir(join(dirs.store, 'workspaces'));
  await rm(join(dirs.store, 'workspaces', wid!, 'owners.json'));
});
afterEach(() => dirs.cleanup());

describe('a read-only store', () => {
  it.skipIf(!canMount)('on a read-only mount: read commands answer, writing commands fail IO, and the store is unchanged', async () => {
    const before = await snapshot(dirs.store);
    for (const args of READS) {
      const r = overReadOnlyMount(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    expect(overReadOnlyMount(['cat', '0.1', 'a.txt']).stdout).toBe('one\n');
    expect(JSON.parse(overReadOnlyMount(['owner', 'a.txt', '--json']).stdout).owner).toMatchObject({ session: expect.any(String) });
    const out = join(dirs.base, 'out');
    const id = JSON.parse(overReadOnlyMount(['--json', 'session', 'list']).stdout).sessions[0].id as string;
    expect(overReadOnlyMount(['export', id, '0.1', out]).status).toBe(0);
    expect(readFileSync(join(out, 'a.txt'), 'utf8')).toBe('one\n');
    for (const args of DRY_RUNS) {
      const r = overReadOnlyMount([...args, '--json']);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(dryRunJson(r.stdout), args.join(' ')).toEqual(planned.get(args.join(' ')));
    }
    expect(dryRunJson(overReadOnlyMount(['restore', '1', '--dry-run', '--json']).stdout)).toMatchObject({ dryRun: true, drift: ['a.txt'], wouldRefuse: { code: 'DRIFT' } });
    for (const args of WRITES) {
      const r = overReadOnlyMount([...args, '--json']);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(6);
      expect(JSON.parse(r.stderr).error.code).toBe('IO');
    }
    expect(await snapshot(dirs.store)).toEqual(before);
    expect(readFileSync(join(dirs.workspace, 'a.txt'), 'utf8')).toBe('three\n');
  });

  it.skipIf(!canDrop)('whose owner took write permission off it: read commands answer, writing commands fail IO', async () => {
    // The folders above the store and the workspace must be reachable by the other user.
    await chmod(dirs.base, 0o755);
    spawnSync('chown', ['-R', 'nobody:nogroup', dirs.store]);
    spawnSync('chmod', ['-R', 'a-w', dirs.store]);
    const before = await snapshot(dirs.store, false);
    for (const args of READS) {
      const r = asNobody(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    for (const args of DRY_RUNS) {
      const r = asNobody([...args, '--json']);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(dryRunJson(r.stdout), args.join(' ')).toEqual(planned.get(args.join(' ')));
    }
    for (const args of WRITES) {
      const r = asNobody([...args, '--json']);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(6);
      expect(JSON.parse(r.stderr).error.code).toBe('IO');
    }
    expect(await snapshot(dirs.store, false)).toEqual(before);
  });
});
