// Several processes capturing into one session at once (DESIGN §5): every capture present once,
// seq dense, K numbers unique; and an unreadable file is `skipped`, never `absent`.
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-mp-');
});
afterEach(() => dirs.cleanup());

describe('capture across processes', () => {
  it('8 processes capturing at once into one session: dense seq, unique tags, nothing lost', async () => {
    // The files are there before the session (made during the turn, each capture would record it as the user's new file first).
    for (let i = 0; i < 8; i++) await writeFile(join(dirs.workspace, `f${i}.txt`), `content ${i}`);
    await ckpt(['session', 'new', '--id', 'shared']);
    await ckpt(['turn']);
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => ckpt(['--session', 'shared', 'capture', '--tool', `p${i}`, `f${i}.txt`, '--json'])),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const tags = runs.map((r) => r.json().tag as string);
    expect(new Set(tags).size).toBe(8);
    expect(tags.every((t) => /^1\.[1-8]$/.test(t))).toBe(true);
    const log = (await ckpt(['--session', 'shared', 'log', '--json'])).json();
    expect(log.checkpoints).toHaveLength(8);
    const seqs = log.checkpoints.map((c: { seq: number }) => c.seq).sort((a: number, b: number) => a - b);
    expect(seqs).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(log.checkpoints.map((c: { tool: string }) => c.tool)).size).toBe(8);
  });

  it('records an unreadable file as skipped, not absent', async () => {
    // Root reads any file; run the CLI as root without the capabilities that bypass permissions.
    const { spawnSync } = await import('node:child_process');
    const { CKPT_BIN } = await import('./helpers/cli.js');
    await writeFile(join(dirs.workspace, 'secret.txt'), 'top secret');
    await chmod(join(dirs.workspace, 'secret.txt'), 0o000);
    const asRoot = process.getuid?.() === 0;
    const run = (args: string[]) => {
      const argv = [process.execPath, CKPT_BIN, '--store', dirs.store, ...args];
      const [cmd, ...rest] = asRoot ? ['setpriv', '--inh-caps=-all', '--bounding-set=-dac_override,-dac_read_search', ...argv] : argv;
      return spawnSync(cmd!, rest, { cwd: dirs.workspace, encoding: 'utf8' });
    };
    expect(run(['session', 'new']).status).toBe(0);
    const r = run(['capture', 'secret.txt', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const file = JSON.parse(r.stdout).files[0];
    expect(file.state).toBe('skipped');
    expect(file.why).toMatch(/^unreadable: EACCES/);
  });
});
