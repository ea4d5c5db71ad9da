// End-to-end: the size cap by flag and environment, and refusing an oversize capture instead of
// recording it as skipped.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[], env?: NodeJS.ProcessEnv) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-cap-');
  await writeFile(join(dirs.workspace, 'big.bin'), Buffer.alloc(3000, 1));
  await writeFile(join(dirs.workspace, 'small.txt'), 'hi');
  await ckpt(['session', 'new']);
});
afterEach(() => dirs.cleanup());

describe('size cap', () => {
  it('--max-file-size and CKPT_MAX_FILE_SIZE record larger files as skipped', async () => {
    const byFlag = (await ckpt(['--max-file-size', '2k', 'capture', 'big.bin', 'small.txt', '--json'])).json();
    expect(byFlag.files.map((f: { path: string; state: string }) => [f.path, f.state])).toEqual([['big.bin', 'skipped'], ['small.txt', 'file']]);
    const byEnv = (await ckpt(['capture', 'big.bin', '--json'], { CKPT_MAX_FILE_SIZE: '1k' })).json();
    expect(byEnv.files[0].state).toBe('skipped');
    expect((await ckpt(['capture', 'big.bin', '--json'])).json().files[0].state).toBe('file');
    const bad = await ckpt(['--max-file-size', 'lots', 'capture', 'big.bin', '--json']);
    expect(bad.code).toBe(2);
    expect((await ckpt(['capture', 'big.bin', '--json'], { CKPT_MAX_FILE_SIZE: '0' })).code).toBe(2);
  });

  it('--refuse-oversize (or CKPT_REFUSE_OVERSIZE=1) fails the capture with BLOB_TOO_LARGE and records nothing', async () => {
    const before = (await ckpt(['log', '--json'])).json().checkpoints.length;
    const r = await ckpt(['--max-file-size', '2k', '--refuse-oversize', 'capture', 'big.bin', 'small.txt', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr).error).toMatchObject({ code: 'BLOB_TOO_LARGE', data: { paths: ['big.bin'] } });
    const env = await ckpt(['capture', 'big.bin', '--json'], { CKPT_MAX_FILE_SIZE: '2k', CKPT_REFUSE_OVERSIZE: '1' });
    expect(env.code).toBe(2);
    expect((await ckpt(['log', '--json'])).json().checkpoints.length).toBe(before);
  });

  it('a file over the cap that changes size is recorded (skipped again): a restore to before it reports it (found by a preview probe)', async () => {
    const cap = { CKPT_MAX_FILE_SIZE: '1k' };
    await writeFile(join(dirs.workspace, 'huge.log'), Buffer.alloc(5000, 1));
    expect((await ckpt(['turn'], cap)).code).toBe(0); // its look records huge.log, skipped
    await writeFile(join(dirs.workspace, 'huge.log'), Buffer.alloc(6000, 2));
    expect((await ckpt(['turn'], cap)).code).toBe(0);
    const r = (await ckpt(['restore', '1', '--dry-run', '--json'], cap)).json();
    expect(r.skipped).toEqual([{ path: 'huge.log', why: 'not-recorded: too-large' }]);
  });

  // A newcomer probe (2026-12-08): the index kept such a file's old size, so every later scan recorded
  // the same change again and `status` listed it for good ("record them with: ckpt scan").
  it('a file over the cap that changed is recorded once: the next scan finds nothing and status is clean', async () => {
    const cap = { CKPT_MAX_FILE_SIZE: '1k' };
    await writeFile(join(dirs.workspace, 'huge.log'), Buffer.alloc(5000, 1));
    expect((await ckpt(['scan', '--json'], cap)).code).toBe(0);
    await writeFile(join(dirs.workspace, 'huge.log'), Buffer.alloc(6000, 2));
    expect((await ckpt(['scan', '--json'], cap)).json().tag).not.toBe(null);
    expect((await ckpt(['scan', '--json'], cap)).json().tag).toBe(null);
    expect((await ckpt(['status', '--json'], cap)).json().changed.count).toBe(0);
  });
});
